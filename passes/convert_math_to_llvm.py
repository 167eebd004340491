"""Lowers the `math` ops a kernel's arithmetic uses (softmax, normalisation) to LLVM's float
intrinsics, as upstream MLIR's convert-math-to-llvm does (MathToLLVM.cpp), with the op's
fast-math flags carried over:

| math op | llvm | PTX from LLVM's NVPTX backend (f32) |
|---|---|---|
| `math.exp2` | `llvm.intr.exp2` | `ex2.approx.f32` |
| `math.exp` | `llvm.intr.exp2(x * log2(e))` | `mul` + `ex2.approx.f32` |
| `math.fma` | `llvm.intr.fma` | `fma.rn.f32` |
| `math.sqrt` | `llvm.intr.sqrt` | `sqrt.rn.f32` (`sqrt.approx` under `afn`) |
| `math.rsqrt` | `1.0 / llvm.intr.sqrt` | `sqrt.rn` + `rcp.rn` (`rsqrt.approx.f32` under `afn`) |
| `math.absf` | `llvm.intr.fabs` | `abs.f32` |
| `math.floor`, `math.ceil` | `llvm.intr.floor`, `llvm.intr.ceil` | `cvt.rmi`, `cvt.rpi` |

Deviation from upstream: `math.exp` is not `llvm.intr.exp`, which LLVM's NVPTX backend cannot
select ("no libcall available for fexp": MLIR's GPU-to-NVVM calls libdevice's `__nv_expf`
instead, which the project does not link). It is `exp2(x * log2(e))`, CUDA's `__expf` and
Triton's lowering of `exp`: a relative error of a few ulp that grows with |x| (the rounding
of the product), where `__nv_expf` keeps 2 ulp. A kernel that needs `expf`'s accuracy writes
its own range reduction. `math.log` and the other transcendental functions stay unlowered
for the same reason (NVPTX has no `log`, `sin` of full accuracy).
"""

from __future__ import annotations

import math as pymath

from xdsl.context import Context
from xdsl.dialects import builtin, llvm, math
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import FloatAttr, VectorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from passes.llvm_types import lowered, replace_with_casts
from passes.rewrite import apply_patterns

UNARY = {
    math.Exp2Op: llvm.FExp2Op,
    math.SqrtOp: llvm.FSqrtOp,
    math.AbsFOp: llvm.FAbsOp,
    math.FloorOp: llvm.FFloorOp,
    math.CeilOp: llvm.FCeilOp,
}
"""math ops that map one to one onto an llvm float intrinsic."""

LOG2_E = 1 / pymath.log(2)
"""log2(e): `exp(x) = exp2(x * log2(e))`."""


def fast_math(op: Operation) -> llvm.FastMathAttr:
    """The llvm fast-math flags of an arith or math op's `fastmath` property."""
    flags = op.properties.get("fastmath")
    if not isinstance(flags, FastMathFlagsAttr) or not flags.data:
        return llvm.FastMathAttr(None)
    return llvm.FastMathAttr(list(flags.data))


def float_constant(value: float, type: Attribute) -> llvm.ConstantOp:
    """`llvm.mlir.constant` of `value` in the float type `type`, or splatted in a vector of
    them."""
    if isinstance(type, VectorType):
        dense = builtin.DenseIntOrFPElementsAttr.from_list(type, [value] * type.get_shape()[0])
        return llvm.ConstantOp(dense, type)
    return llvm.ConstantOp(FloatAttr(value, type), type)  # type: ignore[arg-type]


def _intrinsic(cls: type[Operation], value: SSAValue, flags: llvm.FastMathAttr) -> Operation:
    """The float intrinsic `cls` of `value` (xDSL's constructors of these ops disagree on
    their arguments)."""
    return cls.create(
        operands=[value], result_types=[value.type], properties={"fastmathFlags": flags}
    )


class ConvertUnary(RewritePattern):
    """`math.exp2` and friends -> their llvm intrinsic."""

    OP_TYPES = tuple(UNARY)
    """The ops it acts on (`passes.rewrite` tries it on no other)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        cls = UNARY.get(type(op))
        if cls is None:
            return
        ops: list[Operation] = []
        (value,) = lowered(op.operands, ops)
        new = _intrinsic(cls, value, fast_math(op))
        ops.append(new)
        replace_with_casts(rewriter, op, ops, new.results)


class ConvertExp(RewritePattern):
    """`math.exp` -> `llvm.intr.exp2(x * log2(e))` (see the module's docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.ExpOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        (value,) = lowered(op.operands, ops)
        flags = fast_math(op)
        log2e = float_constant(LOG2_E, value.type)
        scaled = llvm.FMulOp(value, log2e.result, flags)
        exp2 = _intrinsic(llvm.FExp2Op, scaled.res, flags)
        ops += [log2e, scaled, exp2]
        replace_with_casts(rewriter, op, ops, exp2.results)


class ConvertRsqrt(RewritePattern):
    """`math.rsqrt` -> `1.0 / llvm.intr.sqrt` (MathToLLVM's RsqrtOpLowering); under `afn`
    LLVM's NVPTX backend fuses the pair into `rsqrt.approx`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.RsqrtOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        (value,) = lowered(op.operands, ops)
        flags = fast_math(op)
        one = float_constant(1.0, value.type)
        sqrt = _intrinsic(llvm.FSqrtOp, value, flags)
        div = llvm.FDivOp(one.result, sqrt.results[0], flags)
        ops += [one, sqrt, div]
        replace_with_casts(rewriter, op, ops, div.results)


class ConvertFma(RewritePattern):
    """`math.fma` -> `llvm.intr.fma`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.FmaOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        a, b, c = lowered(op.operands, ops)
        new = llvm.FMAOp(a, b, c, fast_math(op))
        ops.append(new)
        replace_with_casts(rewriter, op, ops, new.results)


class ConvertMathToLLVMPass(ModulePass):
    """Lowers `math` float ops (exp2, exp, fma, sqrt, rsqrt, absf, floor, ceil)."""

    name = "convert-math-to-llvm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        apply_patterns(
            op,
            [
                ConvertUnary(),  # math.exp2, sqrt, absf, floor, ceil
                ConvertExp(),  # math.exp
                ConvertRsqrt(),  # math.rsqrt
                ConvertFma(),  # math.fma
            ],
        )
