"""The software-pipelined copy: `tma_copy_pipelined` is a persistent kernel whose blocks walk
their tiles through a ring of SMEM slots, the loads of the next tiles in flight while the
current one is stored; `pipeline_stages_limit` is the most slots a tile can have on a
target (its SMEM and the barriers of one group)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from copy_dialect import ops as copy
from facts.errors import ArgumentError
from frontends.kernels.checks import checked
from frontends.kernels.common import (
    TMA_BLOCK,
    _block_id,
    _bulk_oob,
    _check_target,
    _grid_dim,
    _if,
    _index,
    _kernel,
    _load_slot,
    _smem,
    _smem_budget,
    _stages_limit,
    element_type,
    grid,
)
from frontends.locations import LocatingBuilder


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

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        c0, c1, c2 = _index(b, 0), _index(b, 1), _index(b, 2)
        s = _index(b, stages)
        bid = _block_id(b)
        blocks = _grid_dim(b)
        # Tiles of this block: bid + k * blocks for k < count (0 when bid >= total: the
        # unsigned sum wraps below `blocks`).
        left = b.insert(arith.SubiOp(_index(b, total), bid)).result
        count = b.insert(
            arith.DivUIOp(
                b.insert(arith.AddiOp(left, b.insert(arith.SubiOp(blocks, c1)).result)).result,
                blocks,
            )
        ).result
        buf = b.insert(copy.AllocSmemOp(ring)).result
        bars = b.insert(copy.BarrierInitOp(stages)).result

        def origin(bb: Builder, k: SSAValue) -> tuple[SSAValue, SSAValue]:
            t = bb.insert(arith.AddiOp(bid, bb.insert(arith.MuliOp(k, blocks)).result)).result
            tr = bb.insert(arith.DivUIOp(t, _index(bb, tiles_n))).result
            tc = bb.insert(arith.RemUIOp(t, _index(bb, tiles_n))).result
            row = bb.insert(arith.MuliOp(tr, _index(bb, tile[0]))).result
            col = bb.insert(arith.MuliOp(tc, _index(bb, tile[1]))).result
            return row, col

        def load(bb: Builder, k: SSAValue, slot: SSAValue) -> None:
            _load_slot(
                bb, x, buf, origin(bb, k), slot, bars, oob=oob, implementation=implementation
            )

        # Prologue: tiles 0 .. stages - 1 into slots 0 .. stages - 1.
        for i in range(stages):
            k = _index(b, i)
            _if(b, b.insert(arith.CmpiOp(k, count, "ult")).result, lambda tb, k=k: load(tb, k, k))

        loop = Block(arg_types=[IndexType()])
        lb = LocatingBuilder(InsertPoint.at_end(loop))
        k = loop.args[0]
        slot = lb.insert(arith.RemUIOp(k, s)).result
        lap = lb.insert(arith.DivUIOp(k, s)).result
        parity = lb.insert(arith.CmpiOp(lb.insert(arith.RemUIOp(lap, c2)).result, c0, "ne")).result
        lb.insert(copy.BarrierWaitOp(bars, slot, parity))
        row, col = origin(lb, k)
        lb.insert(
            copy.AsyncCopyOp(
                buf,
                y,
                src_indices=[slot],
                dst_indices=[row, col],
                reduction=reduce,
                oob=oob,
                implementation=implementation,
            )
        )
        lb.insert(copy.CommitGroupOp("bulk"))
        # Refill the slot of tile k - pending (whose store is no longer among the last
        # `pending` groups) with tile k - pending + stages, once that store has read it.
        done = k if pending == 0 else lb.insert(arith.SubiOp(k, _index(lb, pending))).result
        refill = lb.insert(arith.AddiOp(done, s)).result
        cond = lb.insert(arith.CmpiOp(refill, count, "ult")).result
        if pending:
            started = lb.insert(arith.CmpiOp(k, _index(lb, pending), "uge")).result
            cond = lb.insert(arith.AndIOp(started, cond)).result

        def refill_slot(tb: Builder) -> None:
            tb.insert(copy.WaitGroupOp("bulk", pending, read_only=True))
            load(tb, refill, tb.insert(arith.RemUIOp(done, s)).result)

        _if(lb, cond, refill_slot)
        lb.insert(scf.YieldOp())
        b.insert(scf.ForOp(c0, count, c1, [], Region(loop)))
        b.insert(copy.WaitGroupOp("bulk", 0))

    return _kernel("tma_copy_pipelined", [gmem, gmem], body, target=target, block=TMA_BLOCK)
