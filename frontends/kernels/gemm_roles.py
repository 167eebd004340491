"""The roles of `kernels.gemm`'s kernel, written on the concise API (`frontends.dsl`):
the producer warp's TMA loads into the ring, the consumer warpgroups' K loops on wgmma
(`Consumer`), their epilogues through `stmatrix` and TMA stores, and `fence_operand`, which
pins the accumulator's registers after the wait."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import ceil

from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, IndexType, VectorType, i32, i64
from xdsl.ir import Attribute

from copy_dialect import ops as copy
from frontends.dsl import (
    Ring,
    Value,
    block_id,
    emit,
    for_range,
    grid_dim,
    if_,
    index,
    loop,
    parity,
    result,
)
from frontends.kernels.common import element_type
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

    def __init__(self, plan: Plan):
        self.plan = plan
        bid, blocks = block_id(), grid_dim()
        if plan.cluster == 2:
            self.rank = bid % 2
            self.peer = self.rank ^ 1
            bid, blocks = bid // 2, blocks // 2
        self.unit, self.step = bid, blocks
        # ceil((units - unit) / step), 0 when unit >= units (unit < step: the sum is at
        # least units). In i32: a 64-bit division by a value is a call in SASS (the
        # slow path of LLVM's division bypass), and a call serializes every wgmma of the
        # function (ptxas C7509: each then waits for the last to complete).
        bid32, blocks32 = narrow(bid), narrow(blocks)
        count = (blocks32 + (plan.units - 1) - bid32) // blocks32
        self.count = result(arith.IndexCastOp, count.ssa, IndexType())

    def origin(self, j: Value) -> tuple[Value, Value]:
        """The first row and column of C of the block's tile j: unit u is column
        (u % (g * per_row)) // g of tile row (u // (g * per_row)) * g + u % g (g =
        `plan.group` rows walked together, column by column; g = 1: row-major)."""
        per_row, g = ceil(self.plan.tiles[1] / self.plan.cluster), self.plan.group
        u = self.unit + j * self.step
        if g == 1:
            row, col = u // per_row * self.plan.tile[0], u % per_row
        else:
            r = u % (g * per_row)
            row, col = (u // (g * per_row) * g + r % g) * self.plan.tile[0], r // g
        if self.plan.cluster == 2:
            col = col * 2 + self.rank
        return row, col * self.plan.tile[1]


@dataclass
class Roles:
    """The values the roles share."""

    plan: Plan
    work: Work
    a: Value
    b: Value
    c: Value
    ring_a: Value
    ring_b: Value
    out: Value
    full: Value
    empty: Value
    orders: tuple[Value, Value] | None
    """pingpong: the barriers of the mainloops' and the epilogues' turns."""

    @property
    def ring(self) -> Ring:
        return Ring(self.plan.stages)


def producer(k: Roles, t: Value) -> None:
    """Warp 0 of the producer warpgroup: ring position p = j * k_tiles + kb takes the A and
    B tiles of K-block kb of the block's tile j (each load arriving on the slot's `full`
    barrier with its bytes), once the consumers released the slot's previous use (the
    producer's parity: its first lap does not wait, as CUTLASS's producer_acquire)."""
    plan, kt = k.plan, k.plan.k_tiles

    def acquire(p: Value) -> Value:
        slot, phase = k.ring.producer_at(p)
        emit(copy.BarrierWaitOp, k.empty, slot, phase)
        return slot

    with if_((t // copy.WARP).eq(0)):
        with loop(k.work.count) as j:
            m0, n0 = k.work.origin(j)
            base = j * kt
            with loop(index(kt)) as kb:
                slot = acquire(base + kb)
                k0 = kb * plan.tile[2]
                multicast = [0] if plan.cluster == 2 else None
                for src, ring, row, collective in (
                    (k.a, k.ring_a, m0, multicast),
                    (k.b, k.ring_b, n0, None),
                ):
                    emit(
                        copy.AsyncCopyOp, src, ring, src_indices=[row, k0], dst_indices=[slot],
                        barrier=k.full, barrier_index=slot, oob="zeros", collective=collective,
                    )  # fmt: skip
        if plan.cluster == 2:
            # No peer's release or multicast may reach this block after it exits: wait
            # for the release of each slot's last use (CUTLASS's load_tail).
            total = k.work.count * kt
            with loop(index(plan.stages)) as s:
                acquire(total + s)


def narrow(value: Value) -> Value:
    """An index below 2^31 (a block id, a grid size) as an i32."""
    return result(arith.IndexCastOp, value.ssa, i32)


def fence_operand(acc: Value) -> Value:
    """The accumulator struct `acc` through an empty `llvm.inline_asm` with side effects
    whose outputs are tied to its registers ("=f" and "0", "1", ...: CUTLASS's
    `warpgroup_fence_operand`, "+f"): a use of the result cannot be moved above the
    side-effecting ops before it (the `wait.group` that makes the registers final)."""
    struct = acc.type
    assert isinstance(struct, llvm.LLVMStructType)
    types = list(struct.types)
    parts = [element(acc, i, ty) for i, ty in enumerate(types)]
    constraints = ",".join([*(["=f"] * len(types)), *(str(i) for i in range(len(types)))])
    asm = emit(llvm.InlineAsmOp, "", constraints, parts, [struct], has_side_effects=True)
    return Value(asm.res)


def element(acc: Value, i: int, type_: Attribute | None = None) -> Value:
    ty = type_ or element_type("f32")
    return Value(emit(llvm.ExtractValueOp, DenseArrayBase.from_list(i64, [i]), acc, ty).res)


def pack(parts: Sequence[Value], out: Attribute) -> Value:
    """A vector of `parts` (f32), converted to `out` (rounded to nearest even)."""
    f32, n = element_type("f32"), len(parts)
    v = Value(emit(vector.BroadcastOp, parts[0], VectorType(f32, [n])).vector)
    for i, x in enumerate(parts[1:], 1):
        v = result(vector.InsertOp, x, v, [i])
    return v if out == f32 else result(arith.TruncFOp, v, VectorType(out, [n]))


class Consumer:
    """Consumer warpgroup `w` (role w + 1): its tiles' K loops on wgmma and their
    epilogues."""

    def __init__(self, k: Roles, w: int, t: Value):
        self.k, self.w, self.plan = k, w, k.plan
        self.row0 = w * self.plan.wg_rows if self.plan.schedule == "cooperative" else 0
        self.lane, self.warp = t % copy.WARP, t // copy.WARP
        self.acc_type = accumulator_type(self.plan.tile[1], WGMMAType.F32)
        assert self.acc_type.types.data[0] == element_type("f32")

    def run(self) -> None:
        plan, work, orders, w = self.plan, self.k.work, self.k.orders, self.w
        # cooperative: every tile; pingpong: tiles w, w + 2, ...: (count + 1 - w) / 2
        mine = work.count if plan.schedule == "cooperative" else (work.count + (1 - w)) // 2
        with loop(mine) as i:
            j = i if plan.schedule == "cooperative" else i * 2 + w
            m0, n0 = work.origin(j)
            if orders is not None:
                # The mainloops, and the epilogues, take turns (CUTLASS's
                # OrderedSequenceBarrier): warpgroup w's i-th waits for the other's
                # (i - w)-th to end, warpgroup 0 first (its first wait is for the phase
                # before the barrier's first). Without the turns, a warpgroup could wait
                # on a slot's parity two phases ahead of the last it saw.
                turn = parity(i) if w else parity(i) ^ True
                me, other = index(w), index(1 - w)
                emit(copy.BarrierWaitOp, orders[0], me, turn)
            accs = self.mainloop(j * plan.k_tiles)
            if orders is not None:
                emit(copy.BarrierArriveOp, orders[0], other, issuer="warps")
                emit(copy.BarrierWaitOp, orders[1], me, turn)
            self.epilogue(accs, m0 + self.row0, n0)
            if orders is not None:
                emit(copy.BarrierArriveOp, orders[1], other, issuer="warps")
        emit(copy.WaitGroupOp, "bulk", 0)

    def release(self, p: Value) -> None:
        """Ring position p's slot is free again (its wgmma reads retired)."""
        slot = self.k.ring.slot(p)
        if self.plan.cluster == 1:
            emit(copy.BarrierArriveOp, self.k.empty, slot, issuer="warps")
            return
        # The warpgroup is done with the slot: one release here and one in the peer,
        # whose next multicast writes this block's slot. The peer's is relaxed: the slot's
        # reads were the tensor core's, retired by the wgmma wait (a cluster-scope release
        # costs the H100 a GPU-wide membar per k-block: 0.58 of torch against 0.96 without,
        # benchmarks/RESULTS.md run 82).
        emit(copy.NamedBarrierSyncOp, ROLE_BARRIERS + self.w, WARPGROUP)
        emit(copy.BarrierArriveOp, self.k.empty, slot, issuer="elected")
        emit(copy.PeerArriveOp, self.k.empty, slot, self.k.work.peer, relaxed=True)

    def mainloop(self, base: Value) -> list[Value]:
        """The tile's K loop from ring position `base`: the accumulators, final."""
        plan, k = self.plan, self.k
        zero = [result(llvm.ZeroOp, result_types=[self.acc_type]) for _ in range(plan.m_blocks)]
        with for_range(plan.k_tiles, carry=[fence_operand(z) for z in zero]) as body:
            kb, accs = body.index, body.carried
            p = base + kb
            slot, phase = k.ring.at(p)
            emit(copy.BarrierWaitOp, k.full, slot, phase)
            da = result(copy.MatrixDescriptorOp, k.ring_a, [slot], major="k")
            db = result(copy.MatrixDescriptorOp, k.ring_b, [slot], major="k")
            emit(WgmmaFenceAlignedOp)
            row_bytes = plan.tile[2] * 2
            for step in range(plan.tile[2] * 2 // MMA_K_BYTES):
                k_units = step * MMA_K_BYTES >> 4
                b_desc = advance(db, k_units)
                for mi in range(plan.m_blocks):
                    a_units = ((self.row0 + mi * MMA_M) * row_bytes >> 4) + k_units
                    shape, types = (MMA_M, plan.tile[1], 16), (plan.dtype, plan.dtype, "f32")
                    a_desc = advance(da, a_units)
                    mma = emit(WgmmaMmaAsyncOp, a_desc, b_desc, accs[mi], shape=shape, types=types)
                    accs[mi] = Value(mma.res)
            emit(WgmmaGroupSyncAlignedOp)
            # The previous K-block's wgmma group is retired: its slot may be refilled.
            emit(WgmmaWaitGroupSyncOp, 1)
            previous = p - 1
            with if_(kb > 0):
                self.release(previous)
            body.carry(*accs)
        emit(WgmmaWaitGroupSyncOp, 0)
        final = [fence_operand(r) for r in body.results]
        self.release(base + (plan.k_tiles - 1))
        return final

    def epilogue(self, accs: list[Value], row: Value, n0: Value) -> None:
        """The warpgroup's rows of C from `accs`: converted, into its SMEM tile in the wgmma
        fragment layout, then TMA stores of the tile's column blocks at (row, n0)."""
        plan, k = self.plan, self.k
        # The warpgroup's previous stores have read its tile.
        emit(copy.WaitGroupOp, "bulk", 0, read_only=True)
        out = element_type(plan.out)
        buf = index(self.w)
        lane, sub = self.lane, plan.sub
        warp_row = self.warp * 16
        if plan.out_bytes == 2:
            # stmatrix x4 of each 16 x 16 block: thread i gives row i % 8 of matrix i / 8
            # (matrices: rows 0-7 and 8-15 of columns 0-7, then of columns 8-15), which
            # hold the fragment's registers 8c .. 8c + 7 in pairs.
            q = lane // 8
            rows = warp_row + q % 2 * 8 + lane % 8
            cols = q // 2 * 8
            for mi, acc in enumerate(accs):
                r = rows + mi * MMA_M
                for c in range(plan.tile[1] // 16):
                    parts = [element(acc, 8 * c + i) for i in range(8)]
                    col = cols + 16 * c % sub
                    at = [buf, index(16 * c // sub), r, col]
                    emit(copy.StmatrixOp, pack(parts, out), k.out, at, num=4)
        else:
            # f32: each thread's pairs (row lane / 4 (+ 8), columns 8j + 2 (lane % 4) + 0, 1)
            rows, cols = warp_row + lane // 4, lane % 4 * 2
            for mi, acc in enumerate(accs):
                for j in range(plan.tile[1] // 8):
                    col = cols + 8 * j % sub
                    for h in (0, 1):
                        r = rows + (mi * MMA_M + 8 * h)
                        pair = [element(acc, 4 * j + 2 * h + i) for i in (0, 1)]
                        at = [buf, index(8 * j // sub), r, col]
                        emit(vector.StoreOp, pack(pair, out), k.out, at)
        emit(copy.FenceAsyncSharedOp)
        for q in range(plan.tile[1] // sub):
            col = n0 + q * sub
            emit(copy.AsyncCopyOp, k.out, k.c, src_indices=[buf, index(q)], dst_indices=[row, col])
        emit(copy.CommitGroupOp, "bulk")


def turns() -> Value:
    """A pair of barriers the consumer warpgroups pass each other turns on."""
    return result(copy.BarrierInitOp, 2, copy.WARPGROUP_WARPS)


def advance(descriptor: Value, n: int) -> Value:
    """`descriptor + n` (a matrix descriptor advanced by n 16-byte units)."""
    return descriptor if n == 0 else descriptor + n
