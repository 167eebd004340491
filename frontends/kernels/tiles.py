"""One tile per block: the plain copies. `tma_copy` moves a 2-D tile with TMA (or reduces it
into y), `cp_async_copy` loads it with cp.async by all threads and stores its in-bounds
elements, and `bulk_copy` moves a 1-D part with non-tensor bulk copies; each is launched on
`grid(shape, tile)` blocks (`bulk_copy` on ceil(n / tile))."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import SSAValue

from copy_dialect import ops as copy
from facts.errors import ArgumentError
from frontends.kernels.checks import checked
from frontends.kernels.common import (
    CP_ASYNC_BLOCK,
    TMA_BLOCK,
    _block_id,
    _drain_bulk,
    _false,
    _gmem,
    _if,
    _index,
    _kernel,
    _load_and_wait,
    _smem,
    _store_inside,
    _tile_origin,
    element_type,
)


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

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        c0 = _index(b, 0)
        phase = _false(b)
        row, col = _tile_origin(b, tile)
        buf = b.insert(copy.AllocSmemOp(smem)).result
        bar = b.insert(copy.BarrierInitOp(1)).result
        if prefetch_destination:
            b.insert(
                copy.PrefetchOp(y, [row, col], tile, l2=cache_hints[1], l2_promotion=l2_promotion)
            )
        _load_and_wait(
            b, x, buf, [row, col], bar, c0, phase, l2=cache_hints[0], l2_promotion=l2_promotion
        )
        b.insert(
            copy.AsyncCopyOp(buf, y, dst_indices=[row, col], reduction=reduce, l2=cache_hints[1])
        )
        _drain_bulk(b)

    name = "tma_reduce" if reduce else "tma_copy"
    return _kernel(name, [gmem, gmem], body, target=target, block=TMA_BLOCK)


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

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        row, col = _tile_origin(b, tile)
        if dynamic:
            rows = b.insert(memref.DimOp(y, _index(b, 0))).result
            cols = b.insert(memref.DimOp(y, _index(b, 1))).result
        else:
            rows, cols = _index(b, shape[0]), _index(b, shape[1])
        buf = b.insert(copy.AllocSmemOp(smem)).result
        b.insert(
            copy.AsyncCopyOp(x, buf, src_indices=[row, col], implementation="cp_async", oob="zeros")
        )
        b.insert(copy.CommitGroupOp("cp_async"))
        b.insert(copy.WaitGroupOp("cp_async", 0))

        def store(tb: Builder, value: SSAValue, r: SSAValue, c: SSAValue) -> None:
            tb.insert(memref.StoreOp.get(value, y, [r, c]))

        _store_inside(b, buf, tile, (row, col), (rows, cols), CP_ASYNC_BLOCK, store)

    return _kernel("cp_async_copy", [gmem, gmem], body, target=target, block=CP_ASYNC_BLOCK)


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

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        phase = _false(b)
        bx = _block_id(b)
        origin = b.insert(arith.MuliOp(bx, _index(b, tile))).result
        # One barrier per part: the analysis need not know that one block takes one part.
        bars = b.insert(copy.BarrierInitOp(2 if tail else 1)).result
        parts = [b.insert(copy.AllocSmemOp(_smem(elt, [tile]))).result]
        if tail:
            parts.append(b.insert(copy.AllocSmemOp(_smem(elt, [tail]))).result)

        def copy_part(tb: Builder, part: int) -> None:
            buf, index = parts[part], _index(tb, part)
            if prefetch:
                size = buf.type.get_shape()
                tb.insert(copy.PrefetchOp(x, [origin], size, implementation="bulk"))
            _load_and_wait(
                tb,
                x,
                buf,
                [origin],
                bars,
                index,
                phase,
                oob="promise_in_bounds",
                implementation="bulk",
            )
            tb.insert(
                copy.AsyncCopyOp(
                    buf, y, dst_indices=[origin], oob="promise_in_bounds", implementation="bulk"
                )
            )
            _drain_bulk(tb)

        is_full = b.insert(arith.CmpiOp(bx, _index(b, full), "ult")).result
        _if(b, is_full, lambda tb: copy_part(tb, 0))
        if tail:
            is_tail = b.insert(arith.CmpiOp(bx, _index(b, full), "eq")).result
            _if(b, is_tail, lambda tb: copy_part(tb, 1))

    return _kernel("bulk_copy", [gmem, gmem], body, target=target, block=TMA_BLOCK)
