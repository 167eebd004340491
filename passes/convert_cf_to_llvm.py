"""Lowers `cf.br`/`cf.cond_br` to `llvm.br`/`llvm.cond_br`; the successor blocks' arguments
take their llvm-dialect types."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import builtin, cf
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from passes import llvm_build
from passes.llvm_types import convert_block_arguments, lowered
from passes.rewrite import apply_patterns


class ConvertBranch(RewritePattern):
    """`cf.br ^bb(%x)` -> `llvm.br ^bb(%x)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.BranchOp, rewriter: PatternRewriter, /):
        convert_block_arguments(rewriter, op.successor)
        ops: list[Operation] = []
        args = lowered(op.arguments, ops)
        rewriter.replace(op, [*ops, llvm_build.br(op.successor, args)], [])


class ConvertCondBranch(RewritePattern):
    """`cf.cond_br %c, ^a(...), ^b(...)` -> `llvm.cond_br`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.ConditionalBranchOp, rewriter: PatternRewriter, /):
        convert_block_arguments(rewriter, op.then_block)
        convert_block_arguments(rewriter, op.else_block)
        ops: list[Operation] = []
        then_args = lowered(op.then_arguments, ops)
        else_args = lowered(op.else_arguments, ops)
        new = llvm_build.cond_br(op.cond, op.then_block, then_args, op.else_block, else_args)
        rewriter.replace(op, [*ops, new], [])


class ConvertCfToLLVMPass(ModulePass):
    """Lowers `cf` branches to `llvm`."""

    name = "convert-cf-to-llvm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        apply_patterns(
            op,
            [
                ConvertBranch(),  # cf.br
                ConvertCondBranch(),  # cf.cond_br
            ],
        )
