"""Lowers cluster launch control (`copy_dialect.cluster_launch_control`):

- `copy.try_cancel` -> `nvvm.clusterlaunchcontrol.try.cancel (multicast,) %slot, %mbar`,
  issued by the group's elected thread (one request per CTA: each request that succeeds
  cancels a cluster, whose work the issuing CTA then owns); PTX
  `clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes
  {.multicast::cluster::all}.b128`. It does not arrive on the barrier: the kernel's own
  `copy.barrier_arrive_expect_tx ..., 16` does, as in CUTLASS's CLC pipeline.
- `copy.query_cancel` -> a 16-byte load of the slot (`ld.shared.v2.b64`: the i128
  response, 16-byte aligned) and `nvvm.clusterlaunchcontrol.query.cancel` of it for
  `is_canceled` and `get_first_cta_id_{x,y,z}`, by every thread that reaches it.
"""

from __future__ import annotations

from math import prod

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerType, MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from copy_dialect import ops as copy
from copy_dialect.memory import bitwidth
from passes import nvvm
from passes.convert_copy_to_nvvm.barriers import barrier_pointer
from passes.convert_copy_to_nvvm.emit import Arith, Emit
from passes.convert_copy_to_nvvm.kernel import KernelPattern
from passes.llvm_types import lowered


def response_slot(e: Emit, ref: SSAValue, indices: tuple[SSAValue, ...]) -> SSAValue:
    """The `!llvm.ptr<3>` of the 16-byte slot `ref[indices]` (a row-major, unswizzled
    buffer: rule CL3)."""
    t = ref.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    element = (bitwidth(t.get_element_type()) or 8) // 8
    (base,) = lowered([ref], e.ops)
    offset: Arith | int = 0
    for i, index in enumerate(lowered(indices, e.ops)):
        offset = Arith(e, index) * (prod(shape[i + 1 :]) * element) + offset
    return e.byte_offset(base, offset if isinstance(offset, int) else offset.value)


class LowerTryCancel(KernelPattern):
    """`copy.try_cancel` -> `clusterlaunchcontrol.try_cancel` (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.TryCancelOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        body = Emit()
        slot = response_slot(body, op.response, tuple(op.response_indices))
        if kernel.guards is not None:
            kernel.guards.barrier_index(body, kernel.fn, op, op.barrier, op.barrier_index)
        bar = barrier_pointer(body, op.barrier, op.barrier_index)
        body(nvvm.ClusterLaunchControlTryCancelOp(slot, bar, op.is_multicast))
        e = Emit()
        kernel.group(op).elected(e, body.ops)
        rewriter.replace(op, e.ops, [])


class LowerQueryCancel(KernelPattern):
    """`copy.query_cancel` -> the slot's 16-byte load and `clusterlaunchcontrol.query_cancel`
    of it (every thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.QueryCancelOp, rewriter: PatternRewriter, /):
        e = Emit()
        slot = response_slot(e, op.response, tuple(op.response_indices))
        load = e(llvm.LoadOp(slot, IntegerType(128), alignment=copy.RESPONSE_BYTES))
        response = load.results[0]
        results: list[SSAValue] = []
        for query in nvvm.QUERIES:
            query_op: Operation = e(nvvm.ClusterLaunchControlQueryCancelOp(query, response))
            results.append(query_op.results[0])
        rewriter.replace(op, e.ops, results)
