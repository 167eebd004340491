"""Lowers `arith` to the `llvm` dialect (integers, `index` as i64, and basic floats)."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith, builtin, llvm
from xdsl.dialects.builtin import IntegerAttr, IntegerType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from copy_dialect import upstream_llvm
from passes import llvm_build
from passes.convert_math_to_llvm import fast_math
from passes.llvm_types import lowered, replace_with_casts, to_llvm_type
from passes.rewrite import apply_patterns

BINARY = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.DivSIOp: llvm.SDivOp,
    arith.RemUIOp: llvm.URemOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRUIOp: llvm.LShrOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}
"""arith ops that map one to one onto an llvm op."""

MIN_MAX = {
    arith.MinSIOp: "slt",
    arith.MaxSIOp: "sgt",
    arith.MinUIOp: "ult",
    arith.MaxUIOp: "ugt",
}
"""arith min/max as `select(icmp(pred, a, b), a, b)`."""

FLOAT_MIN_MAX = {
    arith.MaximumfOp: upstream_llvm.MaximumOp,
    arith.MinimumfOp: upstream_llvm.MinimumOp,
    arith.MaxnumfOp: llvm.VectorFMaxOp,
    arith.MinnumfOp: llvm.VectorFMinOp,
}
"""arith's float min/max as ArithToLLVM lowers them: `maximumf`/`minimumf` (NaN if either is
NaN) to `llvm.intr.maximum`/`minimum` (PTX `max.NaN.f32`), `maxnumf`/`minnumf` (the number if
one is NaN) to `llvm.intr.maxnum`/`minnum` (PTX `max.f32`)."""


class ConvertConstant(RewritePattern):
    """`arith.constant` -> `llvm.mlir.constant` (index constants become i64)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter, /):
        value, result_type = op.value, to_llvm_type(op.result.type)
        if isinstance(value, IntegerAttr):
            assert isinstance(result_type, IntegerType)
            new = llvm_build.constant(value.value.data, result_type)
        else:
            new = llvm.ConstantOp(value, result_type)
        replace_with_casts(rewriter, op, [new], new.results)


class ConvertBinary(RewritePattern):
    """`arith.addi` and friends -> their llvm op."""

    OP_TYPES = tuple(BINARY)
    """The ops it acts on (`passes.rewrite` tries it on no other)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        llvm_op = BINARY.get(type(op))
        if llvm_op is None:
            return
        ops: list[Operation] = []
        lhs, rhs = lowered(op.operands, ops)
        new = llvm_build.binary(llvm_op, lhs, rhs)
        ops.append(new)
        replace_with_casts(rewriter, op, ops, new.results)


class ConvertMinMax(RewritePattern):
    """`arith.minsi` and friends -> `llvm.icmp` + `llvm.select`."""

    OP_TYPES = tuple(MIN_MAX)
    """The ops it acts on (`passes.rewrite` tries it on no other)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        predicate = MIN_MAX.get(type(op))
        if predicate is None:
            return
        ops: list[Operation] = []
        lhs, rhs = lowered(op.operands, ops)
        cmp = llvm.ICmpOp(lhs, rhs, _icmp_predicate(predicate))
        select = llvm.SelectOp(cmp, lhs, rhs)
        ops += [cmp, select]
        replace_with_casts(rewriter, op, ops, select.results)


class ConvertFloatMinMax(RewritePattern):
    """`arith.maximumf` and friends -> their llvm intrinsic, with the op's fast-math flags."""

    OP_TYPES = tuple(FLOAT_MIN_MAX)
    """The ops it acts on (`passes.rewrite` tries it on no other)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        cls = FLOAT_MIN_MAX.get(type(op))
        if cls is None:
            return
        ops: list[Operation] = []
        lhs, rhs = lowered(op.operands, ops)
        new = cls(lhs, rhs, fast_math(op))
        ops.append(new)
        replace_with_casts(rewriter, op, ops, new.results)


class ConvertCmpi(RewritePattern):
    """`arith.cmpi` -> `llvm.icmp` (the predicates are numbered alike)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpiOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        lhs, rhs = lowered(op.operands, ops)
        new = llvm.ICmpOp(lhs, rhs, IntegerAttr(op.predicate.value.data, 64))
        ops.append(new)
        replace_with_casts(rewriter, op, ops, new.results)


class ConvertSelect(RewritePattern):
    """`arith.select` -> `llvm.select`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        cond, lhs, rhs = lowered(op.operands, ops)
        new = llvm.SelectOp(cond, lhs, rhs)
        ops.append(new)
        replace_with_casts(rewriter, op, ops, new.results)


class ConvertIntegerCast(RewritePattern):
    """`arith.index_cast`, `extui`, `extsi`, `trunci` -> zext/sext/trunc (or nothing)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: arith.IndexCastOp | arith.ExtUIOp | arith.ExtSIOp | arith.TruncIOp,
        rewriter: PatternRewriter,
        /,
    ):
        ops: list[Operation] = []
        (value,) = lowered(op.operands, ops)
        result_type = to_llvm_type(op.results[0].type)
        assert isinstance(source := value.type, IntegerType)
        assert isinstance(result_type, IntegerType)
        signed = isinstance(op, arith.IndexCastOp | arith.ExtSIOp)
        if source.width.data == result_type.width.data:
            replace_with_casts(rewriter, op, ops, [value])
            return
        if source.width.data > result_type.width.data:
            new = llvm_build.resize(llvm.TruncOp, value, result_type)
        elif signed:
            new = llvm_build.resize(llvm.SExtOp, value, result_type)
        else:
            new = llvm_build.resize(llvm.ZExtOp, value, result_type)
        ops.append(new)
        replace_with_casts(rewriter, op, ops, new.results)


class ConvertFloatCast(RewritePattern):
    """`arith.truncf` / `arith.extf` -> `llvm.fptrunc` / `llvm.fpext` (round to nearest even)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.TruncFOp | arith.ExtFOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        (value,) = lowered(op.operands, ops)
        result_type = to_llvm_type(op.results[0].type)
        cls = llvm.FPTruncOp if isinstance(op, arith.TruncFOp) else llvm.FPExtOp
        new = cls(value, result_type)
        ops.append(new)
        replace_with_casts(rewriter, op, ops, new.results)


def _icmp_predicate(name: str) -> IntegerAttr:
    return IntegerAttr(llvm.ICmpPredicateFlag(name).to_int(), 64)


class ConvertArithToLLVMPass(ModulePass):
    """Lowers `arith` to `llvm`."""

    name = "convert-arith-to-llvm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        apply_patterns(
            op,
            [
                ConvertConstant(),  # arith.constant
                ConvertBinary(),  # arith.addi, subi, muli, ...
                ConvertMinMax(),  # arith.minsi, maxsi, minui, maxui
                ConvertFloatMinMax(),  # arith.maximumf, minimumf, maxnumf, minnumf
                ConvertCmpi(),  # arith.cmpi
                ConvertSelect(),  # arith.select
                ConvertIntegerCast(),  # arith.index_cast, extui, extsi, trunci
                ConvertFloatCast(),  # arith.truncf, extf
            ],
        )
