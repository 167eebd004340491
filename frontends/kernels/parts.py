"""The op helpers that the kernel families, written on `frontends.dsl`, share: a block's
tile origin, a tile's load and wait, the drain of the bulk copies, the in-bounds stores of
a tile's elements, a warp's butterfly sum. An op they make is located at the line that
called them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod

from xdsl.dialects import arith, memref

from copy_dialect import ops as copy
from copy_dialect.upstream_gpu import ShuffleOp
from frontends.dsl import Value, block_id, emit, i32_const, if_, index, loop, result, thread_id
from frontends.locations import helper_module

helper_module(__name__)


def tile_origin(tile: Sequence[int]) -> tuple[Value, Value]:
    """The first row and column of the block's tile (block ids y and x)."""
    bx, by = block_id("x"), block_id("y")
    col = bx * tile[1]
    return by * tile[0], col


def load_and_wait(
    src: Value,
    buf: Value,
    origin: Sequence[Value],
    bar: Value,
    slot: Value,
    phase: Value,
    oob: str = "zeros",
    **options: object,
) -> None:
    """Loads the tile of `src` at `origin` into `buf` (`oob`: zero-filled out of bounds by
    default), completing on barrier `slot` of `bar`, and waits for it (`phase`); `options`
    are the copy's others (`l2`, `collective`, `map`, ...)."""
    emit(copy.AsyncCopyOp, src, buf, src_indices=list(origin), barrier=bar, barrier_index=slot,
         oob=oob, **options)  # fmt: skip
    emit(copy.BarrierWaitOp, bar, slot, phase)


def drain_bulk() -> None:
    """Commits the bulk copies issued so far and waits until they are complete."""
    emit(copy.CommitGroupOp, "bulk")
    emit(copy.WaitGroupOp, "bulk", 0)


def inside(point: tuple[Value, Value], bounds: tuple[Value, Value]) -> Value:
    """Whether (row, col) `point` lies below `bounds` (rows, cols), unsigned."""
    return (point[0] < bounds[0]) & (point[1] < bounds[1])


def store_inside(
    buf: Value,
    tile: Sequence[int],
    origin: tuple[Value, Value],
    bounds: tuple[Value, Value],
    threads: int,
    store: Callable[[Value, Value, Value], None],
) -> None:
    """The block's `threads` threads walk the SMEM tile `buf` (element t, t + threads, ...,
    row-major) and `store` each element whose GMEM (row, col), `origin` plus its place in
    the tile, lies inside `bounds` (rows, cols)."""
    tid = thread_id()
    with loop(index(prod(tile)), start=tid, step=threads) as i:
        r, c = i // tile[1], i % tile[1]
        row, col = origin[0] + r, origin[1] + c
        with if_(inside((row, col), bounds)):
            store(Value(emit(memref.LoadOp.get, buf, [r, c]).res), row, col)


def butterfly(values: Sequence[Value], width: Value) -> list[Value]:
    """The sums of `values` over the lanes of the warp (`width` their i32 count): a butterfly
    of shuffles (xor 16, 8, 4, 2, 1), the values' steps interleaved so that they overlap."""
    sums = list(values)
    for offset in (16, 8, 4, 2, 1):
        off = i32_const(offset)
        for j in range(len(sums)):
            other = Value(emit(ShuffleOp, sums[j], off, width, "xor").shuffle_result)
            sums[j] = result(arith.AddfOp, sums[j], other)
    return sums
