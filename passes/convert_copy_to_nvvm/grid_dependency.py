"""Lowers programmatic dependent launch: `copy.grid_dependency_wait` ->
`nvvm.griddepcontrol wait` and `copy.launch_dependents` -> `nvvm.griddepcontrol
launch_dependents`, where each thread reaches them (the wait is a thread's; the trigger
counts once per CTA, whichever threads execute it). The kernel's ABI records that it waits
(`KernelAbi.grid_dependent`), so that the runtime launches it with programmatic stream
serialization."""

from __future__ import annotations

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from copy_dialect import ops as copy
from passes import nvvm


class LowerGridDependencyWait(RewritePattern):
    """`copy.grid_dependency_wait` -> `griddepcontrol.wait`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.GridDependencyWaitOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, [nvvm.GriddepcontrolOp("wait")], [])


class LowerLaunchDependents(RewritePattern):
    """`copy.launch_dependents` -> `griddepcontrol.launch_dependents`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.LaunchDependentsOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, [nvvm.GriddepcontrolOp("launch_dependents")], [])
