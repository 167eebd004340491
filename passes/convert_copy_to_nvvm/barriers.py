"""Lowers the mbarrier ops.

- `barrier_init`: the elected thread initializes each barrier of the group in its arena
  slot, then a fence and a block (or, in a cluster, cluster) barrier make every thread, and
  the TMA unit, see them initialized;
- `barrier_arrive` is executed by every thread that reaches it, and arrives from each of them
  (`issuer threads`), from lane 0 of each warp after the warp synchronizes (`issuer warps`),
  or from the group's elected thread (`issuer elected`);
- `barrier_wait` blocks the threads that execute it: `mbarrier.try_wait.parity` with its
  suspend-time hint on sm_90+, a `test_wait.parity` loop on sm_80; `barrier_test` is one
  `test_wait.parity`;
- `barrier_arrive_expect_tx` is issued by the elected thread of the block or role (it issues
  the TMA loads whose bytes the barrier expects);
- named barriers are `barrier.sync` / `barrier.arrive` (unaligned: see `kernel.named_barrier`).

Under debug guards, the thread that issues the op checks a dynamic index (P9), and a wait is
bounded (P6): see `guards`.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i32
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from copy_dialect import ops as copy
from copy_dialect.verify_common import constant_int
from passes import nvvm
from passes.convert_copy_to_nvvm.emit import Emit
from passes.convert_copy_to_nvvm.kernel import Kernel, KernelPattern, named_barrier
from passes.llvm_types import cast, lowered

TRY_WAIT_TICKS = 10_000_000
"""Suspend-time hint of `mbarrier.try_wait` (ns), as CUTLASS uses."""


class LowerBarrierInit(KernelPattern):
    """`copy.barrier_init` -> `mbarrier.init` (elected thread), fence, block/cluster barrier."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.BarrierInitOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        assert isinstance(t := op.result.type, copy.BarrierType)
        e = Emit()
        group = kernel.arena_address(e, op)
        init_barriers(kernel, e, group, t.count.data, op.arrivals.value.data)
        rewriter.replace(op, e.ops, [cast(group, t, e.ops)])


def init_barriers(kernel: Kernel, e: Emit, group: SSAValue, size: int, arrivals: int) -> None:
    """The elected thread initializes the `size` barriers at `group`, then a fence and a
    block (or cluster) barrier make every thread, and the TMA unit, see them initialized."""
    init = Emit()
    count = init.const(arrivals, i32)
    for i in range(size):
        init(nvvm.MBarrierInitSharedOp(init.byte_offset(group, 8 * i), count))
    kernel.elected(e, init.ops)
    if kernel.target.has_tma:
        e(nvvm.FenceProxyOp(kind="async.shared", space="cta"))
    if kernel.clustered:
        e(nvvm.FenceMbarrierInitOp())
        e(nvvm.ClusterArriveOp(aligned=True))
        e(nvvm.ClusterWaitOp(aligned=True))
    else:
        e(nvvm.Barrier0Op())


class LowerBarrierArrive(KernelPattern):
    """`copy.barrier_arrive` -> `mbarrier.arrive` (inline PTX with a count or cluster scope)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.BarrierArriveOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        e = Emit()
        if kernel.guards is not None:
            kernel.guards.barrier_index(e, kernel.fn, op, op.barrier, op.index)
        address = barrier_pointer(e, op.barrier, op.index)
        count = 1 if op.count is None else op.count.value.data
        scope = "cluster" if op.scope is not None and op.scope.data.value == "cluster" else "cta"
        arrive = Emit()
        if op.nocomplete is not None:
            arrive(nvvm.MBarrierArriveNocompleteSharedOp(address, arrive.const(count, i32)))
        elif count == 1 and scope == "cta":
            arrive(nvvm.MBarrierArriveSharedOp(address))
        else:
            # No NVVM op takes a count or a cluster scope: inline PTX (sm_90+, verified).
            arrive(
                llvm.InlineAsmOp(
                    f"mbarrier.arrive.release.{scope}.shared::cta.b64 _, [$0], $1;",
                    "r,r",
                    [arrive.resize(arrive.ptrtoint(address), i32), arrive.const(count, i32)],
                    has_side_effects=True,
                )
            )
        issue(kernel, op, op.arriving, e, arrive.ops)
        rewriter.replace(op, e.ops, [])


def issue(kernel: Kernel, op: Operation, issuer: copy.Issuer, e: Emit, body: list[Operation]):
    """`body` (an arrival, a complete_tx) from each thread that reaches `op`, from lane 0 of
    each warp after the warp synchronizes, or from the elected thread of the block or role."""
    if issuer == copy.Issuer.THREADS:
        e.ops += body
    elif issuer == copy.Issuer.ELECTED:
        kernel.group(op).elected(e, body)
    else:
        # The warp's threads are done with what they arrive for before lane 0 arrives.
        e(llvm.InlineAsmOp("bar.warp.sync -1;", "~{memory}", [], has_side_effects=True))
        lane = e.binary(llvm.AndOp, kernel.group(op).tid, copy.WARP - 1)
        e.if_(e.icmp("eq", lane, 0), body)


def elected_on_barrier(
    kernel: Kernel, op: Operation, make: Callable[[Emit, SSAValue], Operation]
) -> list[Operation]:
    """`make(e, address)` on barrier `op.index` of `op.barrier`, by the elected thread (after
    the debug guards' P9 check of a dynamic index)."""
    e = Emit()
    address = barrier_pointer(e, op.barrier, op.index)
    body = Emit()
    if kernel.guards is not None:
        kernel.guards.barrier_index(body, kernel.fn, op, op.barrier, op.index)
    body(make(body, address))
    kernel.group(op).elected(e, body.ops)
    return e.ops


class LowerBarrierArriveExpectTx(KernelPattern):
    """`copy.barrier_arrive_expect_tx` -> `mbarrier.arrive.expect_tx` (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.BarrierArriveExpectTxOp, rewriter: PatternRewriter, /):
        tx = op.bytes.value.data
        arrive = nvvm.MBarrierArriveExpectTxSharedOp
        ops = elected_on_barrier(self.kernel(op), op, lambda b, bar: arrive(bar, b.const(tx, i32)))
        rewriter.replace(op, ops, [])


class LowerBarrierWait(KernelPattern):
    """`copy.barrier_wait` -> `mbarrier.try_wait.parity` (sm_90+) or `test_wait.parity`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.BarrierWaitOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        e = Emit()
        if kernel.guards is not None:
            kernel.guards.barrier_index(e, kernel.fn, op, op.barrier, op.index)
        address = barrier_pointer(e, op.barrier, op.index)
        phase = e.resize(op.parity, i32)
        if kernel.guards is not None:
            kernel.guards.bounded_wait(e, kernel.fn, op, address, phase, kernel.target.has_tma)
        elif kernel.target.has_tma:
            hint = TRY_WAIT_TICKS if op.suspend_hint is None else op.suspend_hint.value.data
            ticks = e.const(hint, i32)
            e(nvvm.MBarrierTryWaitParitySharedOp(address, phase, ticks))
        else:
            e(nvvm.MBarrierTestWaitParitySharedOp(address, phase))
        rewriter.replace(op, e.ops, [])


class LowerBarrierTest(KernelPattern):
    """`copy.barrier_test` -> one `mbarrier.test_wait.parity` (non-blocking)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.BarrierTestOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        e = Emit()
        if kernel.guards is not None:
            kernel.guards.barrier_index(e, kernel.fn, op, op.barrier, op.index)
        address = barrier_pointer(e, op.barrier, op.index)
        test = e(
            llvm.InlineAsmOp(
                "{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [$1], $2; "
                "selp.u32 $0, 1, 0, p; }",
                "=r,r,r,~{memory}",
                [e.resize(e.ptrtoint(address), i32), e.resize(op.parity, i32)],
                [i32],
                has_side_effects=True,
            )
        ).results[0]
        ready = e.icmp("ne", test, 0)
        rewriter.replace(op, e.ops, [cast(ready, op.result.type, e.ops)])


class LowerBarrierArriveDrop(KernelPattern):
    """`copy.barrier_arrive_drop` -> `mbarrier.arrive_drop` (`.noComplete`, `.expect_tx`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.BarrierArriveDropOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        e = Emit()
        if kernel.guards is not None:
            kernel.guards.barrier_index(e, kernel.fn, op, op.barrier, op.index)
        address = barrier_pointer(e, op.barrier, op.index)
        drop = Emit()
        if op.expect_tx is not None:
            tx = drop.const(op.expect_tx.value.data, i32)
            drop(nvvm.MBarrierArriveDropExpectTxOp(address, tx))
        elif op.nocomplete is not None:
            drop(nvvm.MBarrierArriveDropNocompleteOp(address, drop.const(op.arrivals, i32)))
        elif op.arrivals == 1:
            drop(nvvm.MBarrierArriveDropOp(address))
        else:
            drop(nvvm.MBarrierArriveDropOp(address, drop.const(op.arrivals, i32)))
        issue(kernel, op, op.arriving, e, drop.ops)
        rewriter.replace(op, e.ops, [])


class LowerBarrierExpectTx(KernelPattern):
    """`copy.barrier_expect_tx` -> `mbarrier.expect_tx` (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.BarrierExpectTxOp, rewriter: PatternRewriter, /):
        tx = op.bytes.value.data
        ops = elected_on_barrier(
            self.kernel(op), op, lambda b, bar: nvvm.MBarrierExpectTxOp(bar, b.const(tx, i32))
        )
        rewriter.replace(op, ops, [])


class LowerBarrierCompleteTx(KernelPattern):
    """`copy.barrier_complete_tx` -> `fence.acq_rel.cta` and `mbarrier.complete_tx` (each
    thread, lane 0 of each warp, or the elected thread): complete_tx is relaxed, the fence
    makes it release the issuer's writes to the phase's waiters."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.BarrierCompleteTxOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        e = Emit()
        if kernel.guards is not None:
            kernel.guards.barrier_index(e, kernel.fn, op, op.barrier, op.index)
        address = barrier_pointer(e, op.barrier, op.index)
        body = Emit()
        body(llvm.InlineAsmOp("fence.acq_rel.cta;", "~{memory}", [], has_side_effects=True))
        body(nvvm.MBarrierCompleteTxOp(address, body.const(op.bytes.value.data, i32)))
        issue(kernel, op, op.arriving, e, body.ops)
        rewriter.replace(op, e.ops, [])


class LowerBarrierInval(KernelPattern):
    """`copy.barrier_inval` -> a block barrier (every thread is done with the group), then
    `mbarrier.inval` of each barrier (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.BarrierInvalOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        assert isinstance(t := op.barrier.type, copy.BarrierType)
        e = Emit()
        (group,) = lowered([op.barrier], e.ops)
        e(nvvm.Barrier0Op())
        inval = Emit()
        for i in range(t.count.data):
            inval(nvvm.MBarrierInvalSharedOp(inval.byte_offset(group, 8 * i)))
        kernel.elected(e, inval.ops)
        rewriter.replace(op, e.ops, [])


class LowerBarrierReinit(KernelPattern):
    """`copy.barrier_reinit` -> copy.barrier_init's `mbarrier.init`, fence and barrier, on
    the group's SMEM."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.BarrierReinitOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        assert isinstance(t := op.barrier.type, copy.BarrierType)
        e = Emit()
        (group,) = lowered([op.barrier], e.ops)
        init_barriers(kernel, e, group, t.count.data, op.arrivals.value.data)
        rewriter.replace(op, e.ops, [])


class LowerNamedBarrier(KernelPattern):
    """`copy.named_barrier_sync` / `_arrive` -> `barrier.sync` / `barrier.arrive id, threads`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: copy.NamedBarrierSyncOp | copy.NamedBarrierArriveOp, rewriter: PatternRewriter, /
    ):
        kind = "sync" if isinstance(op, copy.NamedBarrierSyncOp) else "arrive"
        rewriter.replace(op, [named_barrier(kind, op.id.value.data, op.threads.value.data)], [])


def barrier_pointer(e: Emit, barrier: SSAValue, index: SSAValue | None) -> SSAValue:
    """The `!llvm.ptr<3>` of barrier `index` of a group (its first without an index; a
    constant index folded into the address)."""
    (group,) = lowered([barrier], e.ops)
    if index is None:
        return group
    known = constant_int(index)
    if known is not None:  # a constant index: the barrier's address, folded
        return group if known == 0 else e.byte_offset(group, e.const(8 * known))
    (i,) = lowered([index], e.ops)
    return e.byte_offset(group, e.mul(i, 8))
