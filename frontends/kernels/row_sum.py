"""The warp-specialized row sum: `ws_row_sum` sums each row of a matrix in f32, a band of rows
per block (no atomics: the sums do not depend on timing), its consumer warps keeping their
rows' partial sums in registers (at most `ROW_SUM_MAX_ROWS_PER_WARP` a warp) and adding the
lanes' with warp shuffles; `balanced_band_rows` picks the band height that spreads the rows
evenly over the SMs. It shares the producer and the ring of `warp_specialized`."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from math import ceil

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr, MemRefType, ModuleOp

from copy_dialect import ops as copy
from facts.errors import ArgumentError
from frontends.dsl import (
    Value,
    emit,
    for_range,
    i32_const,
    if_,
    index,
    kernel,
    result,
    warp_specialize,
)
from frontends.kernels.checks import checked
from frontends.kernels.common import _check_consumer_warps, _check_float, _smem, element_type
from frontends.kernels.parts import butterfly
from frontends.kernels.warp_specialized import (
    _Bands,
    _check_ws,
    _producer,
    _wait_full,
    _ws_stages,
)

ROW_SUM_MAX_ROWS_PER_WARP = 64
"""`ws_row_sum`: each consumer lane keeps one f32 partial sum per row its warp owns, in
registers; more than this many would spill them."""


@checked()
def balanced_band_rows(rows: int, blocks: int, limit: int = 256, multiple: int = 1) -> int:
    """The band height (a multiple of `multiple`, at most `limit`: a TMA box dim) that
    spreads `rows` rows over `blocks` persistent blocks best: bands go round-robin to the
    blocks, so the busiest block sums ceil(ceil(rows / h) / blocks) bands of h rows; the
    least such rows wins, and of those heights the tallest (fewest, largest tiles). For
    16384 rows on 132 SMs that is 125: 132 bands, the busiest block sums 125 rows, the least
    any split can give (16384 / 132 = 124.1); 64 or 128 leave it 128 rows (3% more)."""

    def busiest(h: int) -> int:
        return ceil(ceil(rows / h) / blocks) * h

    if multiple > limit:
        raise ArgumentError(
            f"expected multiple <= limit, got multiple={multiple}, limit={limit}: no band "
            "height is a multiple of it within the limit"
        )
    heights = range(multiple, min(limit, max(rows, multiple)) + 1, multiple)
    return min(heights, key=lambda h: (busiest(h), -h))


def _check_row_sum(
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int],
    stages: int | None,
    consumer_warps: int,
    target: str,
) -> int:
    """The stages of a `ws_row_sum` (`_ws_stages`), or a ValueError (expected, got, fix)
    for one the kernel cannot be."""
    _check_float(dtype)
    _check_ws(shape, tile, 1 if stages is None else stages, [dtype], target)
    _check_consumer_warps(consumer_warps)
    size = copy.bitwidth(element_type(dtype)) // 8
    if tile[1] % copy.WARP:
        raise ArgumentError(
            f"expected tile[1] to be a multiple of 32 (lane l of a consumer warp sums columns "
            f"l, l + 32, ... of each tile row), got tile {tuple(tile)}; use tile[1] = "
            f"{min(256, max(32, tile[1] + (-tile[1]) % 32))}"
        )
    if shape[1] * size % 16:
        raise ArgumentError(
            f"expected rows of a multiple of 16 bytes (TMA's row stride), got {shape[1]} x "
            f"{dtype} = {shape[1] * size} bytes per row; pad the columns to a multiple of "
            f"{16 // size} with zeros (they add nothing to the sums)"
        )
    rows = ceil(tile[0] / consumer_warps)
    if rows > ROW_SUM_MAX_ROWS_PER_WARP:
        raise ArgumentError(
            f"expected at most {ROW_SUM_MAX_ROWS_PER_WARP} tile rows per consumer warp (each "
            f"lane keeps one partial sum per row in registers), got {rows} ({tile[0]} rows, "
            f"{consumer_warps} warps); use more consumer warps or a smaller tile[0]"
        )
    slot = tile[0] * tile[1] * size
    if slot % 128:
        raise ArgumentError(
            f"expected a tile of a multiple of 128 bytes (each ring slot is a TMA destination, "
            f"128-byte aligned), got {tuple(tile)} x {dtype} = {slot} bytes; use an even "
            "tile[0] or a tile[1] that is a multiple of 64"
        )
    return _ws_stages(stages, tile, [dtype], [], target)


@checked(own=("stages", "consumer_warps"), shape=2, tile=2)
def ws_row_sum(
    shape: Sequence[int],
    dtype: str = "f32",
    tile: Sequence[int] = (64, 128),
    *,
    stages: int | None = None,
    consumer_warps: int = 4,
    cache_hint: str | None = None,
    target: str = "sm_90a",
) -> ModuleOp:
    """`y[i] = sum_j x[i, j]` (x: (M, N) of f32, bf16 or f16; y: (M,) f32, accumulated in
    f32) by a warp-specialized persistent kernel (launch it on `ws_grid(sms)`).

    A band of `tile[0]` rows is summed by one block, so that no two blocks add into one
    sum (no atomics: the result does not depend on timing). Block `bid` of `nblocks` sums
    bands bid, bid + nblocks, ..., each over its column tiles in order (`balanced_band_rows`
    picks a band height that spreads the rows evenly over the SMs).

    Warp 0, the producer, loads the block's tiles into a ring of `stages` SMEM slots (full
    and empty mbarriers, as in `ws_elementwise`). Consumer warp w owns rows w, w + W, ... of
    each tile (W = `consumer_warps`; when W does not divide `tile[0]`, a warp's last row
    repeats row tile[0] - 1 and is not stored); lane l of it adds columns l, l + 32, ... of
    each of its rows to one f32 partial sum per row, kept in registers across the band's
    column tiles, then releases the slot (one arrive per warp on `empty`). After the band's
    last column tile, a butterfly of warp shuffles (`gpu.shuffle xor` 16, 8, 4, 2, 1) adds
    the lanes' partial sums and lane 0 stores each row's sum to y (rows past M are not
    stored). Every sum is added in a fixed order: lane l's columns in order, then the fixed
    shuffle tree, so each y[i] is within (ceil(N / 32) + 5) * 2**-24 * sum_j |x[i, j]| of the
    exact sum (the recursive-summation bound for that depth).

    Any M, N with rows of a multiple of 16 bytes (TMA's row stride); out-of-bounds tiles are
    zero-filled by TMA (a zero adds nothing). `tile[1]` must be a multiple of 32. `stages`
    defaults to the most that fit up to 4 (`ws_stages_limit`)."""
    stages = _check_row_sum(shape, dtype, tile, stages, consumer_warps, target)
    elt = element_type(dtype)
    f32 = element_type("f32")
    gmem = MemRefType(elt, list(shape))
    out = MemRefType(f32, [shape[0]])
    ring_type = _smem(elt, [stages, *tile])
    warps = consumer_warps
    per_warp = ceil(tile[0] / warps)
    ragged = tile[0] % warps != 0

    def body(x: Value, y: Value) -> None:
        tiles = _Bands(shape, tile)
        ring = result(copy.AllocSmemOp, ring_type)
        full = result(copy.BarrierInitOp, stages, 1)
        empty = result(copy.BarrierInitOp, stages, warps)

        def flush(k: Value, lane: Value, owned: list[Value], sums: list[Value]) -> None:
            """The band's rows' sums, across the lanes, to y (lane 0 stores them)."""
            width = i32_const(copy.WARP)
            totals = [butterfly([s], width)[0] for s in sums]
            band = tiles.band_row(k)
            with if_(lane.eq(0)):
                for i, (r, total) in enumerate(zip(owned, totals, strict=True)):
                    row = band + r
                    inside = row < shape[0]
                    if ragged and i == per_warp - 1:
                        inside = inside & (r < tile[0])
                    with if_(inside):
                        emit(memref.StoreOp.get, total, y, [row])

        def consumer(t: Value) -> None:
            warp, lane = t // copy.WARP, t % copy.WARP
            # Row i of this warp in each tile, and the row it reads (in the tile).
            owned = [warp + i * warps for i in range(per_warp)]
            read = list(owned)
            if ragged:
                read[-1] = result(arith.MinUIOp, owned[-1], index(tile[0] - 1))
            zero = result(arith.ConstantOp, FloatAttr(0.0, f32))
            with for_range(tiles.count, carry=[zero] * per_warp) as tiles_loop:
                k = tiles_loop.index
                slot, column = k % stages, k % tiles.cols
                first, last = column.eq(0), column.eq(tiles.cols - 1)
                _wait_full(full, slot, k, stages)
                # A band's first column tile starts its sums afresh.
                sums = [result(arith.SelectOp, first, zero, s) for s in tiles_loop.carried]
                # Lane l adds columns l, l + 32, ... of each of the warp's rows of the tile.
                with for_range(tile[1], start=lane, step=copy.WARP, carry=sums) as columns:
                    added = []
                    for r, s in zip(read, columns.carried, strict=True):
                        v = Value(emit(memref.LoadOp.get, ring, [slot, r, columns.index]).res)
                        if v.type != f32:
                            v = result(arith.ExtFOp, v, f32)
                        added.append(result(arith.AddfOp, s, v))
                    columns.carry(*added)
                sums = columns.results
                # The warp is done reading the slot.
                emit(copy.BarrierArriveOp, empty, slot, issuer="warps")
                # After the band's last column tile: its rows' sums, across the lanes, to y.
                with if_(last):
                    flush(k, lane, owned, sums)
                tiles_loop.carry(*sums)

        producer = partial(_producer, tiles, [x], [ring], full, empty, stages, cache_hint)
        warp_specialize([(1, lambda t: producer()), (warps, consumer)])

    block = (1 + warps) * copy.WARP
    return kernel("ws_row_sum", [gmem, out], body, target=target, block=block)
