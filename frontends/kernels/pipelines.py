"""The software-pipelined copy: `tma_copy_pipelined` is a persistent kernel whose blocks walk
their tiles through a ring of SMEM slots, the loads of the next tiles in flight while the
current one is stored; `pipeline_stages_limit` is the most slots a tile can have on a
target (its SMEM and the barriers of one group)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import MemRefType, ModuleOp

from copy_dialect import ops as copy
from facts.errors import ArgumentError
from frontends.dsl import Value, block_id, emit, grid_dim, if_, index, kernel, loop, result
from frontends.kernels.checks import checked
from frontends.kernels.common import (
    TMA_BLOCK,
    _bulk_oob,
    _check_target,
    _smem,
    _smem_budget,
    _stages_limit,
    element_type,
    grid,
)


@checked(tile=2)
def pipeline_stages_limit(tile: Sequence[int], dtype: str, target: str = "sm_90a") -> int:
    """The most ring slots `tma_copy_pipelined` can give `tile`s of `dtype` on `target`: the
    ring and its barriers must fit the block's SMEM (rule TR6, the verifier's layout) and one
    barrier group holds at most `MAX_BARRIERS` (rule I1). 0 when not even one slot fits."""
    return _stages_limit(tile, [dtype], [], 1, target)


def _check_stages(stages: int, tile: Sequence[int], dtype: str, target: str) -> None:
    """A ValueError (expected, got, fix) for a ring `tma_copy_pipelined` cannot build."""
    _check_target(target)
    limit = pipeline_stages_limit(tile, dtype, target)
    budget = _smem_budget(target)
    if limit == 0:
        raise ArgumentError(
            f"expected a tile whose SMEM slot fits {budget}, got a {tuple(tile)} tile of "
            f"{dtype}; use a smaller tile"
        )
    if stages < 1:
        raise ArgumentError(
            f"expected at least 1 pipeline stage, got stages={stages}; use stages=1 to {limit}"
        )
    if stages > limit == copy.MAX_BARRIERS:
        raise ArgumentError(
            f"expected at most {limit} pipeline stages (one !copy.barrier group holds at most "
            f"{limit} barriers), got stages={stages}; use stages={limit} or fewer"
        )
    if stages > limit:
        raise ArgumentError(
            f"expected at most {limit} pipeline stages of {tuple(tile)} {dtype} tiles (the ring "
            f"and its barriers must fit {budget}), got stages={stages}; use stages={limit} or "
            "fewer, or a smaller tile"
        )


@checked(own=("stages", "consumer_warps"), shape=2, tile=2)
def tma_copy_pipelined(
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int] = (128, 128),
    *,
    stages: int = 3,
    reduce: str | None = None,
    implementation: str | None = None,
    target: str = "sm_90a",
) -> ModuleOp:
    """`y = x` (or `y <reduce>= x`) at full bandwidth: a persistent kernel (launch it on a
    few blocks per SM) in which each block walks its tiles `k = 0, 1, ...` (tile
    `block + k * grid`) through a ring of `stages` SMEM slots, tile k in slot `k % stages`.

    Iteration k waits for tile k (its barrier's phase `k / stages`, parity
    `(k / stages) % 2`), stores it and commits the store. Then, with `pending =
    min(1, stages - 1)`, it waits until all but the last `pending` stores have read their
    slots (`wait_group bulk <pending> read_only`) and refills the slot of tile `k - pending`
    with tile `k - pending + stages`, if the block has it. So loads run `stages - pending`
    tiles ahead of the stores; with one stage, the store of tile k finishes reading the only
    slot before tile k + 1 is loaded into it. The shape must be a multiple of the tile, and
    `stages` between 1 and `pipeline_stages_limit(tile, dtype, target)`. With
    `implementation="bulk"`, the tiles are whole rows (tile[1] == shape[1]) and the loads
    and stores are non-tensor bulk copies that promise to stay in bounds."""
    if shape[0] % tile[0] or shape[1] % tile[1]:
        raise ArgumentError(f"expected a shape that is a multiple of the tile {tuple(tile)}")
    _check_stages(stages, tile, dtype, target)
    oob = _bulk_oob(shape, tile, implementation)
    pending = min(1, stages - 1)
    elt = element_type(dtype)
    gmem = MemRefType(elt, list(shape))
    ring = _smem(elt, [stages, *tile])
    tiles_n, tiles_m = grid(shape, tile)
    total = tiles_m * tiles_n

    def body(x: Value, y: Value) -> None:
        c0, c1, c2 = index(0), index(1), index(2)
        s = index(stages)
        bid, blocks = block_id(), grid_dim()
        # Tiles of this block: bid + k * blocks for k < count (0 when bid >= total: the
        # unsigned sum wraps below `blocks`).
        left = total - bid
        count = (left + (blocks - c1)) // blocks
        buf = result(copy.AllocSmemOp, ring)
        bars = result(copy.BarrierInitOp, stages)

        def origin(k: Value) -> tuple[Value, Value]:
            t = bid + k * blocks
            tr, tc = t // tiles_n, t % tiles_n
            return tr * tile[0], tc * tile[1]

        def load(k: Value, slot: Value) -> None:
            at = origin(k)
            emit(copy.AsyncCopyOp, x, buf, src_indices=at, dst_indices=[slot], barrier=bars,
                 barrier_index=slot, oob=oob, implementation=implementation)  # fmt: skip

        # Prologue: tiles 0 .. stages - 1 into slots 0 .. stages - 1.
        for i in range(stages):
            k = index(i)
            with if_(k < count):
                load(k, k)

        with loop(count, start=c0, step=c1) as k:
            slot = k % s
            emit(copy.BarrierWaitOp, bars, slot, (k // s % c2).ne(c0))
            row, col = origin(k)
            emit(copy.AsyncCopyOp, buf, y, src_indices=[slot], dst_indices=[row, col],
                 reduction=reduce, oob=oob, implementation=implementation)  # fmt: skip
            emit(copy.CommitGroupOp, "bulk")
            # Refill the slot of tile k - pending (whose store is no longer among the last
            # `pending` groups) with tile k - pending + stages, once that store has read it.
            done = k if pending == 0 else k - pending
            refill = done + s
            cond = refill < count
            if pending:
                cond = (k >= pending) & cond
            with if_(cond):
                emit(copy.WaitGroupOp, "bulk", pending, read_only=True)
                load(refill, done % s)
        emit(copy.WaitGroupOp, "bulk", 0)

    return kernel("tma_copy_pipelined", [gmem, gmem], body, target=target, block=TMA_BLOCK)
