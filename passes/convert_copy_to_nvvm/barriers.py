"""Lowers the mbarrier ops.

- `barrier_init`: the elected thread initializes each barrier of the group in its arena
  slot, then a fence and a block (or, in a cluster, cluster) barrier make every thread, and
  the TMA unit, see them initialized;
- `barrier_arrive` and `barrier_wait` are executed by every thread that reaches them; a wait
  is `mbarrier.try_wait.parity` on sm_90+ and a `test_wait.parity` loop on sm_80;
- `barrier_arrive_expect_tx` is issued by the elected thread (it issues the TMA loads whose
  bytes the barrier expects).

Under debug guards, the thread that issues the op checks a dynamic index (P9), and a wait is
bounded (P6): see `guards`.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from copy_dialect import ops as copy
from passes import nvvm
from passes.convert_copy_to_nvvm.emit import Emit
from passes.convert_copy_to_nvvm.kernel import KernelPattern
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
        init = Emit()
        count = init.const(op.arrivals.value.data, i32)
        for i in range(t.count.data):
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
        rewriter.replace(op, e.ops, [cast(group, t, e.ops)])


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
        if count == 1 and scope == "cta":
            e(nvvm.MBarrierArriveSharedOp(address))
        else:
            # No NVVM op takes a count or a cluster scope: inline PTX (sm_90+, verified).
            e(
                llvm.InlineAsmOp(
                    f"mbarrier.arrive.release.{scope}.shared::cta.b64 _, [$0], $1;",
                    "r,r",
                    [e.resize(e.ptrtoint(address), i32), e.const(count, i32)],
                    has_side_effects=True,
                )
            )
        rewriter.replace(op, e.ops, [])


class LowerBarrierArriveExpectTx(KernelPattern):
    """`copy.barrier_arrive_expect_tx` -> `mbarrier.arrive.expect_tx` (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.BarrierArriveExpectTxOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        e = Emit()
        address = barrier_pointer(e, op.barrier, op.index)
        body = Emit()
        if kernel.guards is not None:
            kernel.guards.barrier_index(body, kernel.fn, op, op.barrier, op.index)
        body(nvvm.MBarrierArriveExpectTxSharedOp(address, body.const(op.bytes.value.data, i32)))
        kernel.elected(e, body.ops)
        rewriter.replace(op, e.ops, [])


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
            ticks = e.const(TRY_WAIT_TICKS, i32)
            e(nvvm.MBarrierTryWaitParitySharedOp(address, phase, ticks))
        else:
            e(nvvm.MBarrierTestWaitParitySharedOp(address, phase))
        rewriter.replace(op, e.ops, [])


def barrier_pointer(e: Emit, barrier: SSAValue, index: SSAValue | None) -> SSAValue:
    """The `!llvm.ptr<3>` of barrier `index` of a group (its first without an index)."""
    (group,) = lowered([barrier], e.ops)
    if index is None:
        return group
    (i,) = lowered([index], e.ops)
    return e.byte_offset(group, e.mul(i, 8))
