"""Thread-level reductions into global memory, `red.global` (what a TMA reduction becomes
before sm_90, passes/legalize.py), and into shared memory, `red.shared` (a `red.async` into
a peer CTA's SMEM once copy-legalize folds the cluster into one block,
passes/legalize_cluster.py). Upstream lowers `memref.atomic_rmw` to `llvm.atomicrmw`,
which xDSL 0.75 lacks; this op prints the PTX instruction instead (inline PTX)."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IntegerType, StringAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import ANY_PTR
from passes.nvvm.emit import cast

RED_OPS = ("add", "min", "max", "and", "or", "xor", "inc", "dec")
RED_TYPES = ("u32", "s32", "u64", "s64", "b32", "b64", "f32", "f64", "noftz.f16")
WRAPPING = ("inc", "dec")
"""The ops PTX takes on `.u32` only: `inc` is `old >= val ? 0 : old + 1`, `dec` is
`old == 0 || old > val ? val : old - 1`."""


def _constraint(t: Attribute) -> str:
    """The NVPTX inline-asm register constraint of the value."""
    if isinstance(t, Float32Type):
        return "f"
    if isinstance(t, Float64Type):
        return "d"
    if isinstance(t, Float16Type):
        return "h"
    assert isinstance(t, IntegerType)
    return {32: "r", 64: "l"}[t.width.data]


class _RedOp(IRDLOperation):
    """`red.<space>.<op>.<type> [addr], val` (sm_70 for `.noftz.f16`, else sm_60 and older):
    combines `val` into the element at `addr` atomically, with no result."""

    SPACE: ClassVar[tuple[str, int]]
    """The state space and its LLVM address space."""

    addr = operand_def(ANY_PTR)
    val = operand_def(AnyAttr())
    op = prop_def(StringAttr)
    type = prop_def(StringAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$op $type $addr `,` $val attr-dict `:` type($addr) `,` type($val)"

    def __init__(self, op: str, type: str, addr: SSAValue | Operation, val: SSAValue | Operation):
        super().__init__(
            operands=[addr, val], properties={"op": StringAttr(op), "type": StringAttr(type)}
        )

    def verify_(self) -> None:
        if self.op.data not in RED_OPS:
            raise VerifyException(f"expected a red op of {', '.join(RED_OPS)}, got {self.op}")
        if self.type.data not in RED_TYPES:
            raise VerifyException(f"expected a red type of {', '.join(RED_TYPES)}, got {self.type}")
        if self.op.data in WRAPPING and self.type.data != "u32":
            raise VerifyException(f"expected red.global.{self.op.data} on u32, got {self.type}")

    def to_llvm_ir(self, e: IREmitter) -> None:
        space, address_space = self.SPACE
        ptr_type, ptr = cast(e, self.addr, address_space)
        value_type, value = e.type(self.val.type), e.value(self.val)
        ptx = f"red.{space}.{self.op.data}.{self.type.data} [$0], $1;"
        constraints = f"l,{_constraint(self.val.type)},~{{memory}}"
        e.emit(
            f'call void asm sideeffect "{ptx}", "{constraints}"({ptr_type} {ptr}, '
            f"{value_type} {value})"
        )


@irdl_op_definition
class RedGlobalOp(_RedOp):
    """`red.global.<op>.<type> [addr], val`: into global memory.

    ```mlir
    nvvm.red.global "add" "f32" %ptr, %v : !llvm.ptr<1>, f32
    ```
    """

    name = "nvvm.red.global"

    SPACE: ClassVar[tuple[str, int]] = ("global", 1)


@irdl_op_definition
class RedSharedOp(_RedOp):
    """`red.shared.<op>.<type> [addr], val`: into shared memory.

    ```mlir
    nvvm.red.shared "add" "u32" %ptr, %v : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.red.shared"

    SPACE: ClassVar[tuple[str, int]] = ("shared", 3)
