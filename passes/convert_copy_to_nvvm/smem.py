"""Lowers `copy.alloc_smem`: each buffer is its place in the kernel's shared-memory arena
(laid out by the dialect's `arena_layout`)."""

from __future__ import annotations

from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from copy_dialect import ops as copy
from passes.convert_copy_to_nvvm.emit import Emit
from passes.convert_copy_to_nvvm.kernel import KernelPattern
from passes.llvm_types import cast


class LowerAllocSmem(KernelPattern):
    """`copy.alloc_smem` -> its address in the kernel's shared-memory arena."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.AllocSmemOp, rewriter: PatternRewriter, /):
        e = Emit()
        address = self.kernel(op).arena_address(e, op)
        rewriter.replace(op, e.ops, [cast(address, op.result.type, e.ops)])
