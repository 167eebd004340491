"""The ops the lowering builds most often, made with `Operation.create`.

Each function makes the op that its xDSL constructor makes (the same operands, result type
and properties, the constructor's defaults included), without the generic argument building
and checks that IRDL's constructor runs on every call: about 10 of the 15-20 us an op costs
there, and compiling the TMA example builds about 90 of these. The lowered module is
verified as a whole before it is compiled (`passes.pipeline.compile_lowered`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import builtin, llvm, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, i1, i32
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

NO_FLAGS = IntegerAttr(0, 32)
"""The overflow flags of an integer binary op's constructor, and a GEP's no-wrap flags: none."""

NO_OVERFLOW = llvm.OverflowAttr(None)
"""`llvm.trunc`'s constructor's overflow flags: none."""

GEP_SSA_INDEX = builtin.DenseArrayBase.from_list(i32, [llvm.GEP_USE_SSA_VAL])
"""A GEP's constant indices when its one index is an SSA value."""


def constant(value: int, type: IntegerType) -> llvm.ConstantOp:
    """`llvm.ConstantOp(IntegerAttr(value, type), type)`."""
    return llvm.ConstantOp.create(
        result_types=[type], properties={"value": IntegerAttr(value, type)}
    )


def binary(cls: type[Operation], lhs: SSAValue, rhs: SSAValue) -> Operation:
    """`cls(lhs, rhs)`, an integer binary op of the llvm dialect (add, mul, and, ...)."""
    if issubclass(cls, llvm.ArithmeticBinOpOverflow):
        properties: dict[str, Attribute] = {"overflowFlags": NO_FLAGS}
    else:
        properties = {}
    return cls.create(operands=[lhs, rhs], result_types=[lhs.type], properties=properties)


def icmp(predicate: IntegerAttr, lhs: SSAValue, rhs: SSAValue) -> llvm.ICmpOp:
    """`llvm.ICmpOp(lhs, rhs, predicate)` on scalars."""
    return llvm.ICmpOp.create(
        operands=[lhs, rhs], result_types=[i1], properties={"predicate": predicate}
    )


def resize(
    cls: type[llvm.TruncOp | llvm.ZExtOp | llvm.SExtOp], value: SSAValue, type: IntegerType
) -> Operation:
    """`cls(value, type)`: `llvm.trunc`, `llvm.zext` or `llvm.sext`."""
    properties: dict[str, Attribute] = {}
    if cls is llvm.TruncOp:
        properties["overflowFlags"] = NO_OVERFLOW
    return cls.create(operands=[value], result_types=[type], properties=properties)


def byte_gep(base: SSAValue, offset: SSAValue) -> llvm.GEPOp:
    """`llvm.GEPOp.from_mixed_indices(base, [offset], i8, result_type=base.type)`."""
    return llvm.GEPOp.create(
        operands=[base, offset],
        result_types=[base.type],
        properties={
            "rawConstantIndices": GEP_SSA_INDEX,
            "elem_type": IntegerType(8),
            "noWrapFlags": NO_FLAGS,
        },
    )


def unrealized_cast(value: SSAValue, type: Attribute) -> builtin.UnrealizedConversionCastOp:
    """`builtin.UnrealizedConversionCastOp.get([value], [type])`."""
    return builtin.UnrealizedConversionCastOp.create(operands=[value], result_types=[type])


def br(dest: Block, args: Sequence[SSAValue]) -> llvm.BrOp:
    """`llvm.BrOp(dest, *args)`."""
    return llvm.BrOp.create(operands=args, successors=[dest])


def cond_br(
    cond: SSAValue,
    then_block: Block,
    then_args: Sequence[SSAValue],
    else_block: Block,
    else_args: Sequence[SSAValue],
) -> llvm.CondBrOp:
    """`llvm.CondBrOp(cond, then_block, then_args, else_block, else_args)`."""
    sizes = builtin.DenseArrayBase.from_list(i32, [1, len(then_args), len(else_args)])
    return llvm.CondBrOp.create(
        operands=[cond, *then_args, *else_args],
        successors=[then_block, else_block],
        properties={"operandSegmentSizes": sizes},
    )


def if_then(condition: SSAValue, body: Sequence[Operation]) -> scf.IfOp:
    """`scf.IfOp(condition, [], [*body, scf.YieldOp()])`: `body` where `condition` holds."""
    block = Block([*body, scf.YieldOp.create()])
    return scf.IfOp.create(operands=[condition], regions=[Region(block), Region()])
