"""The TMA tensor reduction (sm_90, upstream NVVMOps.td's `NVVM_CpAsyncBulkTensorReduceOp`):
the reduction of this CTA's SMEM box into a tensor, and its kinds (`TMAReduxKind`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I32, I64
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    var_operand_def,
)
from xdsl.utils.str_enum import StrEnum

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import ANY_PTR, SHARED_PTR, AngleBracketEnum
from passes.nvvm.bulk_tensor import verify_tensor_dims
from passes.nvvm.emit import arg, cache_hint, call, cast


class TMAReduxKind(StrEnum):
    ADD = "add"
    MIN = "min"
    MAX = "max"
    INC = "inc"
    DEC = "dec"
    AND = "and"
    OR = "or"
    XOR = "xor"


@irdl_attr_definition
class TMAReduxKindAttr(AngleBracketEnum, EnumAttribute[TMAReduxKind]):
    name = "nvvm.tma_redux_kind"


@irdl_op_definition
class CpAsyncBulkTensorReduceOp(IRDLOperation):
    """`cp.reduce.async.bulk.tensor.Nd.global.shared::cta.<redKind>.tile.bulk_group` (sm_90):
    reduces the SMEM box at `src` into the tensor at `coordinates`.

    ```mlir
    nvvm.cp.async.bulk.tensor.reduce %tmap, %src, box[%c0, %c1]
        {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
    ```
    """

    name = "nvvm.cp.async.bulk.tensor.reduce"

    tma_descriptor = operand_def(ANY_PTR)
    src = operand_def(SHARED_PTR)
    red_kind = prop_def(TMAReduxKindAttr, prop_name="redKind")
    coordinates = var_operand_def(I32)
    l2_cache_hint = opt_operand_def(I64)

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$tma_descriptor `,` $src `,` `box` `[` $coordinates `]` "
        "(`l2_cache_hint` `=` $l2_cache_hint^)? "
        "attr-dict `:` type($tma_descriptor) `,` type($src)"
    )

    def __init__(
        self,
        tma_descriptor: SSAValue | Operation,
        src: SSAValue | Operation,
        coordinates: Sequence[SSAValue | Operation],
        red_kind: str = "add",
        l2_cache_hint: SSAValue | Operation | None = None,
    ):
        super().__init__(
            operands=[tma_descriptor, src, coordinates, l2_cache_hint],
            properties={"redKind": TMAReduxKindAttr(TMAReduxKind(red_kind))},
        )

    def verify_(self) -> None:
        verify_tensor_dims(len(self.coordinates))

    def to_llvm_ir(self, e: IREmitter) -> None:
        dims = len(self.coordinates)
        hint, hint_flag = cache_hint(e, self.l2_cache_hint)
        call(
            e,
            f"llvm.nvvm.cp.async.bulk.tensor.reduce.{self.red_kind.data.value}.tile.{dims}d",
            [
                arg(e, self.src),
                cast(e, self.tma_descriptor, 0),
                *(arg(e, c) for c in self.coordinates),
                hint,
                hint_flag,
            ],
        )
