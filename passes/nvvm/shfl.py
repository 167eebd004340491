"""Warp shuffles: `shfl.sync` (upstream NVVMOps.td's `NVVM_ShflOp`)."""

from __future__ import annotations

from xdsl.dialects.builtin import I32, Float32Type, IntegerType, UnitAttr, i1, i32
from xdsl.dialects.llvm import LLVMStructType
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Operation, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from passes.llvm_ir import IREmitter
from passes.nvvm.emit import arg, call_bound


class ShflKind(StrEnum):
    BFLY = "bfly"
    UP = "up"
    DOWN = "down"
    IDX = "idx"


@irdl_attr_definition
class ShflKindAttr(EnumAttribute[ShflKind], SpacedOpaqueSyntaxAttribute):
    """Which lane `shfl.sync` reads: `#nvvm<shfl_kind bfly>`."""

    name = "nvvm.shfl_kind"


def _is_32_bit(t: Attribute) -> bool:
    return t == i32 or isinstance(t, Float32Type)


@irdl_op_definition
class ShflOp(IRDLOperation):
    """`shfl.sync.<kind>.b32 d[|p], val, offset, mask_and_clamp, thread_mask`: lane k of the
    threads in `thread_mask` gets `val` from lane `k ^ offset` (bfly), `k - offset` (up),
    `k + offset` (down) or `offset` (idx), clamped by `mask_and_clamp`; with
    `return_value_and_is_valid`, also whether that lane was in range (`{T, i1}`).

    ```mlir
    %r = nvvm.shfl.sync bfly %mask, %v, %offset, %clamp : f32 -> f32
    ```
    """

    name = "nvvm.shfl.sync"

    thread_mask = operand_def(I32)
    val = operand_def(AnyAttr())
    offset = operand_def(I32)
    mask_and_clamp = operand_def(I32)
    kind = prop_def(ShflKindAttr)
    return_value_and_is_valid = opt_prop_def(UnitAttr)

    res = result_def(AnyAttr())

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$kind $thread_mask `,` $val `,` $offset `,` $mask_and_clamp attr-dict "
        "`:` type($val) `->` type($res)"
    )

    def __init__(
        self,
        kind: ShflKind | str,
        thread_mask: SSAValue | Operation,
        val: SSAValue | Operation,
        offset: SSAValue | Operation,
        mask_and_clamp: SSAValue | Operation,
        *,
        return_value_and_is_valid: bool = False,
    ):
        value_type = SSAValue.get(val).type
        result = (
            LLVMStructType.from_type_list([value_type, i1])
            if return_value_and_is_valid
            else value_type
        )
        properties: dict[str, Attribute] = {"kind": ShflKindAttr(ShflKind(kind))}
        if return_value_and_is_valid:
            properties["return_value_and_is_valid"] = UnitAttr()
        super().__init__(
            operands=[thread_mask, val, offset, mask_and_clamp],
            properties=properties,
            result_types=[result],
        )

    def verify_(self) -> None:
        if not _is_32_bit(self.val.type):
            raise VerifyException(
                f"expected an i32 or f32 value (shfl.sync moves 32 bits), got {self.val.type}"
            )
        if self.return_value_and_is_valid is None:
            if self.res.type != self.val.type:
                raise VerifyException(
                    f"expected the result type to be the value's ({self.val.type}), got "
                    f"{self.res.type}"
                )
            return
        t = self.res.type
        body = t.types.data if isinstance(t, LLVMStructType) else ()
        if len(body) != 2 or not (isinstance(body[1], IntegerType) and body[1].width.data == 1):
            raise VerifyException(
                "expected return type to be a two-element struct with i1 as the second element"
            )

    def to_llvm_ir(self, e: IREmitter) -> None:
        suffix = "i32" if isinstance(self.val.type, IntegerType) else "f32"
        if self.return_value_and_is_valid is not None:
            suffix += "p"
        operands = (self.thread_mask, self.val, self.offset, self.mask_and_clamp)
        call_bound(
            e,
            self.res,
            f"llvm.nvvm.shfl.sync.{self.kind.data.value}.{suffix}",
            [arg(e, v) for v in operands],
        )
