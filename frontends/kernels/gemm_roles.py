"""The roles of `kernels.gemm`'s kernel: the producer warp's TMA loads into the ring, the
consumer warpgroups' K loops on wgmma (`Consumer`), their epilogues through `stmatrix` and
TMA stores, and `fence_operand`, which pins the accumulator's registers after the wait."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import ceil

from xdsl.builder import Builder
from xdsl.dialects import arith, llvm, scf, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    VectorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from copy_dialect import ops as copy
from frontends.kernels.common import (
    _bin,
    _block_id,
    _grid_dim,
    _if,
    _index,
    _Loop,
    _parity,
    element_type,
)
from frontends.kernels.gemm_plan import MMA_K_BYTES, MMA_M, ROLE_BARRIERS, WARPGROUP, Plan
from passes.nvvm.wgmma import (
    WgmmaFenceAlignedOp,
    WgmmaGroupSyncAlignedOp,
    WgmmaMmaAsyncOp,
    WGMMAType,
    WgmmaWaitGroupSyncOp,
    accumulator_type,
)


class Work:
    """The block's share of the tiles: unit `unit + j * step` for j < count, row-major over
    the grid of units (tiles, or pairs of tiles with `cluster=2`, this block's the pair's
    `rank`-th)."""

    def __init__(self, b: Builder, plan: Plan):
        self.plan = plan
        bid, blocks = _block_id(b), _grid_dim(b)
        if plan.cluster == 2:
            self.rank = _bin(b, arith.RemUIOp, bid, 2)
            self.peer = _bin(b, arith.XOrIOp, self.rank, 1)
            unit = _bin(b, arith.DivUIOp, bid, 2)
            step = _bin(b, arith.DivUIOp, blocks, 2)
        else:
            unit, step = bid, blocks
        self.unit, self.step = unit, step
        # ceil((units - unit) / step), 0 when unit >= units (the unsigned sum wraps)
        left = _bin(b, arith.SubiOp, _index(b, plan.units), unit)
        spare = _bin(b, arith.SubiOp, step, 1)
        self.count = _bin(b, arith.DivUIOp, _bin(b, arith.AddiOp, left, spare), step)

    def origin(self, b: Builder, j: SSAValue) -> tuple[SSAValue, SSAValue]:
        """The first row and column of C of the block's tile j."""
        plan = self.plan
        per_row = ceil(plan.tiles[1] / plan.cluster)
        u = _bin(b, arith.AddiOp, self.unit, _bin(b, arith.MuliOp, j, self.step))
        row = _bin(b, arith.MuliOp, _bin(b, arith.DivUIOp, u, per_row), plan.tile[0])
        col = _bin(b, arith.RemUIOp, u, per_row)
        if plan.cluster == 2:
            col = _bin(b, arith.AddiOp, _bin(b, arith.MuliOp, col, 2), self.rank)
        return row, _bin(b, arith.MuliOp, col, plan.tile[1])


@dataclass
class Roles:
    """The values the roles share."""

    plan: Plan
    work: Work
    a: SSAValue
    b: SSAValue
    c: SSAValue
    ring_a: SSAValue
    ring_b: SSAValue
    out: SSAValue
    full: SSAValue
    empty: SSAValue
    orders: tuple[SSAValue, SSAValue] | None
    """pingpong: the barriers of the mainloops' and the epilogues' turns."""

    def slot(self, b: Builder, p: SSAValue) -> tuple[SSAValue, SSAValue]:
        """Ring position p's slot and lap."""
        stages = self.plan.stages
        return _bin(b, arith.RemUIOp, p, stages), _bin(b, arith.DivUIOp, p, stages)


def producer(b: Builder, k: Roles, t: SSAValue) -> None:
    """Warp 0 of the producer warpgroup: ring position p = j * k_tiles + kb takes the A and
    B tiles of K-block kb of the block's tile j (each load arriving on the slot's `full`
    barrier with its bytes), once the consumers released the slot's previous use."""
    plan, stages = k.plan, k.plan.stages
    kt = plan.k_tiles

    def acquire(lb: Builder, p: SSAValue) -> SSAValue:
        # The producer's phase starts at 1 (CUTLASS's producer_acquire): on the first lap
        # the wait is for the phase before the barrier's first, which has completed.
        slot, lap = k.slot(lb, p)
        parity = lb.insert(arith.XOrIOp(_parity(lb, lap), _true(lb))).result
        lb.insert(copy.BarrierWaitOp(k.empty, slot, parity))
        return slot

    def loop(pb: Builder) -> None:
        tiles = _Loop(pb, k.work.count)
        m0, n0 = k.work.origin(tiles.b, tiles.k)
        base = _bin(tiles.b, arith.MuliOp, tiles.k, kt)
        blocks = _Loop(tiles.b, _index(tiles.b, kt))
        lb, kb = blocks.b, blocks.k
        slot = acquire(lb, _bin(lb, arith.AddiOp, base, kb))
        k0 = _bin(lb, arith.MuliOp, kb, plan.tile[2])
        collective = [0] if plan.cluster == 2 else None
        for src, ring, origin, multicast in (
            (k.a, k.ring_a, m0, collective),
            (k.b, k.ring_b, n0, None),
        ):
            lb.insert(
                copy.AsyncCopyOp(
                    src,
                    ring,
                    src_indices=[origin, k0],
                    dst_indices=[slot],
                    barrier=k.full,
                    barrier_index=slot,
                    oob="zeros",
                    collective=multicast,
                )
            )
        blocks.close()
        tiles.close()
        if plan.cluster == 2:
            # No peer's release or multicast may reach this block after it exits: wait
            # for the release of each slot's last use (CUTLASS's load_tail).
            total = _bin(pb, arith.MuliOp, k.work.count, kt)
            tail = _Loop(pb, _index(pb, stages))
            acquire(tail.b, _bin(tail.b, arith.AddiOp, total, tail.k))
            tail.close()

    warp = _bin(b, arith.DivUIOp, t, copy.WARP)
    _if(b, b.insert(arith.CmpiOp(warp, _index(b, 0), "eq")).result, loop)


def _true(b: Builder) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(1, i1))).result


def fence_operand(b: Builder, acc: SSAValue) -> SSAValue:
    """The accumulator struct `acc` through an empty `llvm.inline_asm` with side effects
    whose outputs are tied to its registers ("=f" and "0", "1", ...: CUTLASS's
    `warpgroup_fence_operand`, "+f"): a use of the result cannot be moved above the
    side-effecting ops before it (the `wait.group` that makes the registers final)."""
    struct = acc.type
    assert isinstance(struct, llvm.LLVMStructType)
    types = list(struct.types)
    values = [
        b.insert(llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [i]), acc, ty)).res
        for i, ty in enumerate(types)
    ]
    constraints = ",".join([*(["=f"] * len(types)), *(str(i) for i in range(len(types)))])
    asm = llvm.InlineAsmOp("", constraints, values, [struct], has_side_effects=True)
    return b.insert(asm).res


def _element(b: Builder, acc: SSAValue, i: int) -> SSAValue:
    f32 = element_type("f32")
    return b.insert(llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [i]), acc, f32)).res


def _pack(b: Builder, values: Sequence[SSAValue], out: Attribute) -> SSAValue:
    """A vector of `values` (f32), converted to `out` (rounded to nearest even)."""
    f32 = element_type("f32")
    v = b.insert(vector.BroadcastOp(values[0], VectorType(f32, [len(values)]))).vector
    for i, x in enumerate(values[1:], 1):
        v = b.insert(vector.InsertOp(x, v, [i])).result
    if out == f32:
        return v
    return b.insert(arith.TruncFOp(v, VectorType(out, [len(values)]))).result


class Consumer:
    """Consumer warpgroup `w` (role w + 1): its tiles' K loops on wgmma and their
    epilogues."""

    def __init__(self, k: Roles, w: int, b: Builder, t: SSAValue):
        self.k, self.w, self.plan = k, w, k.plan
        self.row0 = w * self.plan.wg_rows if self.plan.schedule == "cooperative" else 0
        self.lane = _bin(b, arith.RemUIOp, t, copy.WARP)
        self.warp = _bin(b, arith.DivUIOp, t, copy.WARP)
        f32 = element_type("f32")
        self.acc_type = accumulator_type(self.plan.tile[1], WGMMAType.F32)
        assert self.acc_type.types.data[0] == f32

    def run(self, b: Builder) -> None:
        plan, work = self.plan, self.k.work
        if plan.schedule == "cooperative":
            tiles = _Loop(b, work.count)
            j = tiles.k
        else:
            # warpgroup w takes the block's tiles w, w + 2, ...: (count + 1 - w) / 2 of them
            mine = _bin(b, arith.DivUIOp, _bin(b, arith.AddiOp, work.count, 1 - self.w), 2)
            tiles = _Loop(b, mine)
            j = _bin(tiles.b, arith.AddiOp, _bin(tiles.b, arith.MuliOp, tiles.k, 2), self.w)
        tb = tiles.b
        m0, n0 = work.origin(tb, j)
        orders = self.k.orders
        if orders is not None:
            # The mainloops, and the epilogues, take turns (CUTLASS's
            # OrderedSequenceBarrier): warpgroup w's i-th waits for the other's (i - w)-th
            # to end, warpgroup 0 first (its first wait is for the phase before the
            # barrier's first). Without the turns, a warpgroup could wait on a slot's
            # parity two phases ahead of the last it saw.
            odd = _parity(tb, tiles.k)
            turn = odd if self.w else tb.insert(arith.XOrIOp(odd, _true(tb))).result
            mine, other = _index(tb, self.w), _index(tb, 1 - self.w)
            tb.insert(copy.BarrierWaitOp(orders[0], mine, turn))
        accs = self.mainloop(tb, _bin(tb, arith.MuliOp, j, plan.k_tiles))
        if orders is not None:
            tb.insert(copy.BarrierArriveOp(orders[0], other, issuer="warps"))
            tb.insert(copy.BarrierWaitOp(orders[1], mine, turn))
        self.epilogue(tb, accs, _bin(tb, arith.AddiOp, m0, self.row0), n0)
        if orders is not None:
            tb.insert(copy.BarrierArriveOp(orders[1], other, issuer="warps"))
        tiles.close()
        b.insert(copy.WaitGroupOp("bulk", 0))

    def release(self, b: Builder, p: SSAValue) -> None:
        """Ring position p's slot is free again (its wgmma reads retired)."""
        slot = _bin(b, arith.RemUIOp, p, self.plan.stages)
        if self.plan.cluster == 1:
            b.insert(copy.BarrierArriveOp(self.k.empty, slot, issuer="warps"))
            return
        # The warpgroup is done with the slot: one release here and one in the peer,
        # whose next multicast writes this block's slot.
        b.insert(copy.NamedBarrierSyncOp(ROLE_BARRIERS + self.w, WARPGROUP))
        b.insert(copy.BarrierArriveOp(self.k.empty, slot, issuer="elected"))
        b.insert(copy.PeerArriveOp(self.k.empty, slot, self.k.work.peer))

    def mainloop(self, b: Builder, base: SSAValue) -> list[SSAValue]:
        """The tile's K loop from ring position `base`: the accumulators, final."""
        plan, k = self.plan, self.k
        zero = [
            b.insert(llvm.ZeroOp(result_types=[self.acc_type])).res for _ in range(plan.m_blocks)
        ]
        accs = [fence_operand(b, z) for z in zero]
        body = Block(arg_types=[IndexType(), *(self.acc_type for _ in accs)])
        lb = Builder(InsertPoint.at_end(body))
        kb, carried = body.args[0], list(body.args[1:])
        p = _bin(lb, arith.AddiOp, base, kb)
        slot, lap = k.slot(lb, p)
        lb.insert(copy.BarrierWaitOp(k.full, slot, _parity(lb, lap)))
        da = lb.insert(copy.MatrixDescriptorOp(k.ring_a, [slot], major="k")).result
        db = lb.insert(copy.MatrixDescriptorOp(k.ring_b, [slot], major="k")).result
        lb.insert(WgmmaFenceAlignedOp())
        row_bytes = plan.tile[2] * 2
        for step in range(plan.tile[2] * 2 // MMA_K_BYTES):
            k_units = step * MMA_K_BYTES >> 4
            b_desc = _add_i64(lb, db, k_units)
            for mi in range(plan.m_blocks):
                a_units = ((self.row0 + mi * MMA_M) * row_bytes >> 4) + k_units
                mma = WgmmaMmaAsyncOp(
                    _add_i64(lb, da, a_units),
                    b_desc,
                    carried[mi],
                    shape=(MMA_M, plan.tile[1], 16),
                    types=(plan.dtype, plan.dtype, "f32"),
                )
                carried[mi] = lb.insert(mma).res
        lb.insert(WgmmaGroupSyncAlignedOp())
        # The previous K-block's wgmma group is retired: its slot may be refilled.
        lb.insert(WgmmaWaitGroupSyncOp(1))
        previous = _bin(lb, arith.SubiOp, p, 1)
        started = lb.insert(arith.CmpiOp(kb, _index(lb, 0), "ugt")).result
        _if(lb, started, lambda tb: self.release(tb, previous))
        lb.insert(scf.YieldOp(*carried))
        c0, c1 = _index(b, 0), _index(b, 1)
        loop = b.insert(scf.ForOp(c0, _index(b, plan.k_tiles), c1, accs, Region(body)))
        b.insert(WgmmaWaitGroupSyncOp(0))
        final = [fence_operand(b, r) for r in loop.results]
        last = _bin(b, arith.AddiOp, base, plan.k_tiles - 1)
        self.release(b, last)
        return final

    def epilogue(self, b: Builder, accs: list[SSAValue], row: SSAValue, n0: SSAValue) -> None:
        """The warpgroup's rows of C from `accs`: converted, into its SMEM tile in the wgmma
        fragment layout, then TMA stores of the tile's column blocks at (row, n0)."""
        plan, k = self.plan, self.k
        # The warpgroup's previous stores have read its tile.
        b.insert(copy.WaitGroupOp("bulk", 0, read_only=True))
        out = element_type(plan.out)
        buf = _index(b, self.w)
        lane, warp, sub = self.lane, self.warp, plan.sub
        warp_row = _bin(b, arith.MuliOp, warp, 16)
        if plan.out_bytes == 2:
            # stmatrix x4 of each 16 x 16 block: thread i gives row i % 8 of matrix i / 8
            # (matrices: rows 0-7 and 8-15 of columns 0-7, then of columns 8-15), which
            # hold the fragment's registers 8c .. 8c + 7 in pairs.
            q = _bin(b, arith.DivUIOp, lane, 8)
            half = _bin(b, arith.MuliOp, _bin(b, arith.RemUIOp, q, 2), 8)
            rows = _bin(b, arith.AddiOp, warp_row, half)
            rows = _bin(b, arith.AddiOp, rows, _bin(b, arith.RemUIOp, lane, 8))
            cols = _bin(b, arith.MuliOp, _bin(b, arith.DivUIOp, q, 2), 8)
            for mi, acc in enumerate(accs):
                r = _bin(b, arith.AddiOp, rows, mi * MMA_M)
                for c in range(plan.tile[1] // 16):
                    values = [_element(b, acc, 8 * c + i) for i in range(8)]
                    col = _bin(b, arith.AddiOp, cols, 16 * c % sub)
                    at = [buf, _index(b, 16 * c // sub), r, col]
                    b.insert(copy.StmatrixOp(_pack(b, values, out), k.out, at, num=4))
        else:
            # f32: each thread's pairs (row lane / 4 (+ 8), columns 8j + 2 (lane % 4) + 0, 1)
            rows = _bin(b, arith.AddiOp, warp_row, _bin(b, arith.DivUIOp, lane, 4))
            cols = _bin(b, arith.MuliOp, _bin(b, arith.RemUIOp, lane, 4), 2)
            for mi, acc in enumerate(accs):
                for j in range(plan.tile[1] // 8):
                    col = _bin(b, arith.AddiOp, cols, 8 * j % sub)
                    for h in (0, 1):
                        r = _bin(b, arith.AddiOp, rows, mi * MMA_M + 8 * h)
                        pair = [_element(b, acc, 4 * j + 2 * h + i) for i in (0, 1)]
                        at = [buf, _index(b, 8 * j // sub), r, col]
                        b.insert(vector.StoreOp(_pack(b, pair, out), k.out, at))
        b.insert(copy.FenceAsyncSharedOp())
        for q in range(plan.tile[1] // sub):
            col = _bin(b, arith.AddiOp, n0, q * sub)
            b.insert(
                copy.AsyncCopyOp(
                    k.out, k.c, src_indices=[buf, _index(b, q)], dst_indices=[row, col]
                )
            )
        b.insert(copy.CommitGroupOp("bulk"))


def turns(b: Builder) -> SSAValue:
    """A pair of barriers the consumer warpgroups pass each other turns on."""
    return b.insert(copy.BarrierInitOp(2, copy.WARPGROUP_WARPS)).result


def _add_i64(b: Builder, value: SSAValue, n: int) -> SSAValue:
    """`value + n` (a descriptor advanced by n 16-byte units)."""
    if n == 0:
        return value
    return b.insert(
        arith.AddiOp(value, b.insert(arith.ConstantOp.from_int_and_width(n, 64)).result)
    ).result
