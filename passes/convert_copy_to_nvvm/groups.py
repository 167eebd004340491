"""Lowers the completion ops: bulk and cp.async groups, and the async-proxy fence.

- a bulk group (TMA stores and reductions) is committed and waited on by the elected thread,
  which issued its copies; a cp.async group by every thread, each of which issued chunks;
- a `wait_group` of either kind ends with a barrier of the issuing group (the block's, or
  inside a role of `copy.warp_specialize` the role's named barrier): after it every thread of
  the group may read the loaded SMEM or overwrite the stored one;
- `fence_async_shared` is `fence.proxy.async.shared::cta` followed by the group's barrier.
"""

from __future__ import annotations

from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from copy_dialect import ops as copy
from passes import nvvm
from passes.convert_copy_to_nvvm.emit import Emit
from passes.convert_copy_to_nvvm.kernel import KernelPattern


class LowerFence(KernelPattern):
    """`copy.fence_async_shared` -> `fence.proxy.async.shared::cta` + the group's barrier."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.FenceAsyncSharedOp, rewriter: PatternRewriter, /):
        e = Emit()
        e(nvvm.FenceProxyOp(kind="async.shared", space="cta"))
        self.kernel(op).group(op).sync(e)
        rewriter.replace(op, e.ops, [])


class LowerCommitGroup(KernelPattern):
    """`copy.commit_group` -> `cp.async.bulk.commit_group` (elected) or `cp.async.commit_group`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.CommitGroupOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        e = Emit()
        if op.group.data == copy.GroupKind.BULK:
            kernel.group(op).elected(e, [nvvm.CpAsyncBulkCommitGroupOp()])
        else:
            e(nvvm.CpAsyncCommitGroupOp())
        rewriter.replace(op, e.ops, [])


class LowerWaitGroup(KernelPattern):
    """`copy.wait_group` -> `cp.async{.bulk}.wait_group` (bulk: elected), the group's barrier."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.WaitGroupOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        pending = op.pending.value.data
        e = Emit()
        group = kernel.group(op)
        if op.group.data == copy.GroupKind.BULK:
            group.elected(e, [nvvm.CpAsyncBulkWaitGroupOp(group=pending, read=op.is_read_only)])
        else:
            e(nvvm.CpAsyncWaitGroupOp(pending))
        group.sync(e)
        rewriter.replace(op, e.ops, [])
