"""`copy.assume`: dropped, or under debug guards checked where it stands (`guards`, AS3).

The fact is for the protocol analysis; the emitted code does not rely on it (no
`llvm.intr.assume`): a kernel whose fact is wrong runs as it would without the op, and with
`--debug-guards` traps naming the fact and the value."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from copy_dialect import ops as copy
from passes.convert_copy_to_nvvm.emit import Emit, fail
from passes.convert_copy_to_nvvm.guards import Guards
from passes.convert_copy_to_nvvm.kernel import enclosing_function
from passes.llvm_types import lowered


@dataclass
class LowerAssume(RewritePattern):
    """`copy.assume` -> nothing; with `guards`, every thread that reaches it checks the fact
    (AS3) and traps where it does not hold."""

    guards: Guards | None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.AssumeOp, rewriter: PatternRewriter, /):
        if self.guards is None:
            rewriter.erase(op)
            return
        fn = enclosing_function(op)
        if fn is None:
            raise fail(op, "must be inside a func.func kernel to be lowered")
        e = Emit()
        (value,) = lowered([op.value], e.ops)
        self.guards.assumption(e, fn, op, value)
        rewriter.replace(op, e.ops, [])
