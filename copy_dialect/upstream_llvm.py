"""The upstream `llvm` ops that xDSL 0.75's `llvm` dialect lacks, and that dialect with them.

- `llvm.extractelement` (MLIR's `LLVM_ExtractElementOp`): one element of a vector, which
  convert-vector-to-llvm makes of `vector.extract`;
- `llvm.intr.maximum` and `llvm.intr.minimum` (MLIR's `LLVM_MaximumOp`, `LLVM_MinimumOp`):
  IEEE 754-2019 maximum and minimum (NaN if either operand is NaN, -0.0 < +0.0), which
  convert-arith-to-llvm makes of `arith.maximumf` / `arith.minimumf` and LLVM's NVPTX backend
  emits as `max.NaN.f32` / `min.NaN.f32` (sm_80 and later).

`LLVM` is xDSL's `llvm` dialect plus these ops, under the same name: copy-opt and
`copy_tools.make_context` register it in place of xDSL's (as `upstream_gpu.GPU`).

Deviations from upstream: none in the syntax or the semantics.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloatConstr,
    ArrayAttr,
    IntAttr,
    SignlessIntegerConstraint,
    VectorType,
)
from xdsl.ir import Dialect, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    RangeOf,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import NoMemoryEffect, Pure


@irdl_op_definition
class ExtractElementOp(IRDLOperation):
    """
    The element of a 1-D vector at a (dynamic) position.

    ```mlir
    %e = llvm.extractelement %v[%i : i32] : vector<4xf32>
    ```
    """

    name = "llvm.extractelement"

    ELEMENT: ClassVar = VarConstraint("ELEMENT", AnyAttr())
    VECTOR: ClassVar = VarConstraint(
        "VECTOR_T",
        VectorType.constr(ELEMENT, shape=ArrayAttr.constr(RangeOf(IntAttr).of_length(1))),
    )

    vector = operand_def(VECTOR)
    position = operand_def(SignlessIntegerConstraint)
    res = result_def(ELEMENT)

    traits = traits_def(NoMemoryEffect())

    assembly_format = "$vector `[` $position `:` type($position) `]` attr-dict `:` type($vector)"

    def __init__(self, vector: Operation | SSAValue, position: Operation | SSAValue):
        vector = SSAValue.get(vector)
        assert isinstance(t := vector.type, VectorType)
        super().__init__(operands=[vector, position], result_types=[t.element_type])


class _FloatBinaryIntrinsic(IRDLOperation):
    """A float intrinsic of two operands and the result of their type, with fast-math flags
    (the form of xDSL's `llvm.intr.maxnum`)."""

    T: ClassVar = VarConstraint("T", AnyFloatConstr | VectorType.constr(AnyFloatConstr))

    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(T)

    fastmathFlags = prop_def(llvm.FastMathAttr, default_value=llvm.FastMathAttr(None))

    traits = traits_def(Pure())

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "`(` operands `)` attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        lhs: Operation | SSAValue,
        rhs: Operation | SSAValue,
        fast_math: llvm.FastMathAttr | None = None,
    ):
        super().__init__(
            operands=[lhs, rhs],
            result_types=[SSAValue.get(lhs).type],
            properties={"fastmathFlags": fast_math or llvm.FastMathAttr(None)},
        )


@irdl_op_definition
class MaximumOp(_FloatBinaryIntrinsic):
    """
    IEEE 754-2019 `maximum`: NaN if either operand is NaN, and +0.0 above -0.0 (LLVM's
    `llvm.maximum`).

    ```mlir
    %m = llvm.intr.maximum(%a, %b) : (f32, f32) -> f32
    ```
    """

    name = "llvm.intr.maximum"


@irdl_op_definition
class MinimumOp(_FloatBinaryIntrinsic):
    """
    IEEE 754-2019 `minimum`: NaN if either operand is NaN, and -0.0 below +0.0 (LLVM's
    `llvm.minimum`).

    ```mlir
    %m = llvm.intr.minimum(%a, %b) : (f32, f32) -> f32
    ```
    """

    name = "llvm.intr.minimum"


LLVM = Dialect(
    "llvm",
    [*llvm.LLVM.operations, ExtractElementOp, MaximumOp, MinimumOp],
    [*llvm.LLVM.attributes],
)
