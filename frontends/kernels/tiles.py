"""One tile per block: the plain copies. `tma_copy` moves a 2-D tile with TMA (or reduces it
into y), `cp_async_copy` loads it with cp.async by all threads and stores its in-bounds
elements, and `bulk_copy` moves a 1-D part with non-tensor bulk copies; each is launched on
`grid(shape, tile)` blocks (`bulk_copy` on ceil(n / tile))."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, ModuleOp

from copy_dialect import ops as copy
from facts.errors import ArgumentError
from frontends.dsl import Value, block_id, boolean, emit, if_, index, kernel, result
from frontends.kernels.checks import checked
from frontends.kernels.common import CP_ASYNC_BLOCK, TMA_BLOCK, _gmem, _smem, element_type
from frontends.kernels.parts import drain_bulk, load_and_wait, store_inside, tile_origin


@checked(shape=2, tile=2)
def tma_copy(
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int] = (64, 64),
    *,
    swizzle: int = 16,
    reduce: str | None = None,
    prefetch_destination: bool = False,
    dynamic: bool = False,
    cache_hints: tuple[str | copy.CachePolicy | None, str | copy.CachePolicy | None] = (
        None,
        None,
    ),
    l2_promotion: int | None = None,
    target: str = "sm_90a",
) -> ModuleOp:
    """`y = x` (or `y <reduce>= x`) tile by tile: a TMA load into SMEM (zero-filled out of
    bounds), a wait on its barrier, a TMA store (clipped) or reduction. With
    `prefetch_destination`, the block first prefetches its tile of y into L2 (a reduction
    reads y), so that reading y overlaps loading x. With `dynamic`, the arrays' shapes are
    `?x?`: one compiled kernel serves every shape (the tensor maps are encoded at launch).
    `cache_hints` are the L2 cache policies of the load and of the store (`"evict_first"`,
    `"evict_last"`, `"evict_normal"`, `"evict_unchanged"`: copy.async_copy's `l2`; or a
    `copy.CachePolicy` with a fraction and a secondary priority); the prefetch of the
    destination takes the store's. `l2_promotion` (bytes, 0 for none) is that of the
    load's tensor map and of the prefetch's (the default: 128)."""
    elt = element_type(dtype)
    gmem = _gmem(elt, shape, dynamic)
    smem = _smem(elt, tile, swizzle)

    def body(x: Value, y: Value) -> None:
        c0, phase = index(0), boolean(False)
        row, col = tile_origin(tile)
        buf = result(copy.AllocSmemOp, smem)
        bar = result(copy.BarrierInitOp, 1)
        if prefetch_destination:
            emit(copy.PrefetchOp, y, [row, col], tile, l2=cache_hints[1], l2_promotion=l2_promotion)
        load_and_wait(
            x, buf, [row, col], bar, c0, phase, l2=cache_hints[0], l2_promotion=l2_promotion
        )
        emit(copy.AsyncCopyOp, buf, y, dst_indices=[row, col], reduction=reduce, l2=cache_hints[1])
        drain_bulk()

    name = "tma_reduce" if reduce else "tma_copy"
    return kernel(name, [gmem, gmem], body, target=target, block=TMA_BLOCK)


@checked(shape=2, tile=2)
def cp_async_copy(
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int] = (32, 128),
    *,
    dynamic: bool = False,
    target: str = "sm_80",
) -> ModuleOp:
    """`y = x` tile by tile: a cp.async load into SMEM by all threads (zero-filled out of
    bounds), then plain stores of the in-bounds elements. With `dynamic`, the arrays'
    shapes are `?x?`: one compiled kernel serves every shape (the runtime passes the sizes,
    and the copy picks its chunk size from the row pitch at run time)."""
    elt = element_type(dtype)
    gmem = _gmem(elt, shape, dynamic)
    smem = _smem(elt, tile)

    def body(x: Value, y: Value) -> None:
        row, col = tile_origin(tile)
        if dynamic:
            rows, cols = result(memref.DimOp, y, index(0)), result(memref.DimOp, y, index(1))
        else:
            rows, cols = index(shape[0]), index(shape[1])
        buf = result(copy.AllocSmemOp, smem)
        emit(copy.AsyncCopyOp, x, buf, src_indices=[row, col], implementation="cp_async",
             oob="zeros")  # fmt: skip
        emit(copy.CommitGroupOp, "cp_async")
        emit(copy.WaitGroupOp, "cp_async", 0)

        def store(value: Value, r: Value, c: Value) -> None:
            emit(memref.StoreOp.get, value, y, [r, c])

        store_inside(buf, tile, (row, col), (rows, cols), CP_ASYNC_BLOCK, store)

    return kernel("cp_async_copy", [gmem, gmem], body, target=target, block=CP_ASYNC_BLOCK)


@checked(tile=1)
def bulk_copy(
    n: int,
    dtype: str,
    tile: int = 4096,
    *,
    prefetch: bool = False,
    target: str = "sm_90a",
) -> ModuleOp:
    """`y = x` for 1-D arrays of `n` elements by non-tensor bulk copies (`impl bulk`): block
    b copies elements [b * tile, (b + 1) * tile) through SMEM, and the last block, when
    `tile` does not divide `n`, the tail with a box of its own. Each part must be a
    multiple of 16 bytes (rule BK2). With `prefetch`, each block first prefetches its part
    into L2 (a bulk prefetch). Launch it on `ceil(n / tile)` blocks."""
    elt = element_type(dtype)
    bits = copy.bitwidth(elt) or 8
    tail = n % tile
    for part in (tile, tail):
        if part * bits % 128:
            raise ArgumentError(
                f"expected parts of a multiple of 16 bytes, got {part} {dtype} elements "
                f"({part * bits / 8:g} bytes): choose n and tile accordingly"
            )
    gmem = MemRefType(elt, [n])
    full = n // tile

    def body(x: Value, y: Value) -> None:
        phase, bx = boolean(False), block_id()
        origin = bx * tile
        # One barrier per part: the analysis need not know that one block takes one part.
        bars = result(copy.BarrierInitOp, 2 if tail else 1)
        parts = [result(copy.AllocSmemOp, _smem(elt, [tile]))]
        if tail:
            parts.append(result(copy.AllocSmemOp, _smem(elt, [tail])))

        def copy_part(part: int) -> None:
            buf, slot = parts[part], index(part)
            if prefetch:
                size = buf.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue]
                emit(copy.PrefetchOp, x, [origin], size, implementation="bulk")
            load_and_wait(x, buf, [origin], bars, slot, phase, oob="promise_in_bounds",
                          implementation="bulk")  # fmt: skip
            emit(copy.AsyncCopyOp, buf, y, dst_indices=[origin], oob="promise_in_bounds",
                 implementation="bulk")  # fmt: skip
            drain_bulk()

        with if_(bx < full):
            copy_part(0)
        if tail:
            with if_(bx.eq(full)):
                copy_part(1)

    return kernel("bulk_copy", [gmem, gmem], body, target=target, block=TMA_BLOCK)
