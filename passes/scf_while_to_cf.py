"""`scf.while` to branches: the pattern xDSL's convert-scf-to-cf lacks (xdsl 0.75 lowers
scf.if, scf.for and scf.index_switch only), written after MLIR's `WhileLowering`
(mlir/lib/Conversion/SCFToControlFlow).

    ^init:  ...; cf.br ^before(%inits)
    ^before(%args): <before region>; cf.cond_br %cond, ^after(%vals), ^continue(%vals)
    ^after(%vals): <after region>; cf.br ^before(%yielded)
    ^continue(%results): ...
"""

from __future__ import annotations

from xdsl.dialects.cf import BranchOp, ConditionalBranchOp
from xdsl.dialects.scf import ConditionOp, WhileOp, YieldOp
from xdsl.ir import Block
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import BlockInsertPoint, InsertPoint


class WhileLowering(RewritePattern):
    """Lowers `scf.while` to a before block, an after block and a continuation block."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, while_op: WhileOp, rewriter: PatternRewriter, /):
        init_block = while_op.parent_block()
        assert init_block is not None
        remaining = init_block.split_before(while_op)
        # The continuation receives the values scf.condition forwards (the loop's results).
        continue_block = Block(arg_types=while_op.result_types)
        parent = init_block.parent_region()
        assert parent is not None
        parent.insert_block_before(continue_block, remaining)
        rewriter.insert(BranchOp(remaining), InsertPoint.at_end(continue_block))

        before_first = while_op.before_region.first_block
        after_first = while_op.after_region.first_block
        assert before_first is not None
        assert after_first is not None
        for block in while_op.before_region.blocks:
            if isinstance(cond := block.last_op, ConditionOp):
                rewriter.replace(
                    cond,
                    ConditionalBranchOp(
                        cond.condition, after_first, cond.args, continue_block, cond.args
                    ),
                )
        for block in while_op.after_region.blocks:
            if isinstance(yield_op := block.last_op, YieldOp):
                rewriter.replace(yield_op, BranchOp(before_first, *yield_op.arguments))
        rewriter.inline_region(while_op.before_region, BlockInsertPoint.before(continue_block))
        rewriter.inline_region(while_op.after_region, BlockInsertPoint.before(continue_block))
        rewriter.insert(
            BranchOp(before_first, *while_op.arguments), InsertPoint.at_end(init_block)
        )
        rewriter.replace(while_op, [], continue_block.args)
