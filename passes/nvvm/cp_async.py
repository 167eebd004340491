"""cp.async (sm_80): the per-thread asynchronous copy from global to shared memory, its
commit and wait groups, and its mbarrier arrival (upstream NVVMOps.td's `NVVM_CpAsync*`
ops)."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I32, BoolAttr, IntegerAttr, i32
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Operation, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import GLOBAL_PTR, SHARED_PTR
from passes.nvvm.emit import IntrinsicOp, arg, call


class LoadCacheModifier(StrEnum):
    CA = "ca"
    CG = "cg"
    CS = "cs"
    LU = "lu"
    CV = "cv"


@irdl_attr_definition
class LoadCacheModifierAttr(EnumAttribute[LoadCacheModifier], SpacedOpaqueSyntaxAttribute):
    """Upstream's default enum syntax: `#nvvm<load_cache_modifier cg>`."""

    name = "nvvm.load_cache_modifier"


@irdl_op_definition
class CpAsyncSharedGlobalOp(IRDLOperation):
    """`cp.async.{ca,cg}.shared.global [dst], [src], size{, cpSize}` (sm_80): copies `size`
    bytes; with `cpSize`, only that many are read and the rest are zero-filled.

    ```mlir
    nvvm.cp.async.shared.global %dst, %src, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
    ```
    """

    name = "nvvm.cp.async.shared.global"

    dst = operand_def(SHARED_PTR)
    src = operand_def(GLOBAL_PTR)
    size = prop_def(IntegerAttr[I32])
    modifier = prop_def(LoadCacheModifierAttr)
    cp_size = opt_operand_def(I32)

    assembly_format = (
        "$dst `,` $src `,` $size `,` `cache` `=` $modifier (`,` $cp_size^)? attr-dict "
        "`:` type(operands)"
    )

    def __init__(
        self,
        dst: SSAValue | Operation,
        src: SSAValue | Operation,
        size: int = 16,
        modifier: str = "cg",
        cp_size: SSAValue | Operation | None = None,
    ):
        super().__init__(
            operands=[dst, src, cp_size],
            properties={
                "size": IntegerAttr(size, i32),
                "modifier": LoadCacheModifierAttr(LoadCacheModifier(modifier)),
            },
        )

    def verify_(self) -> None:
        modifier = self.modifier.data
        size = self.size.value.data
        if modifier not in (LoadCacheModifier.CG, LoadCacheModifier.CA):
            raise VerifyException("Only CG and CA cache modifiers are supported.")
        if size not in (4, 8, 16):
            raise VerifyException("expected byte size to be either 4, 8 or 16.")
        if modifier == LoadCacheModifier.CG and size != 16:
            raise VerifyException("CG cache modifier is only support for 16 bytes copy.")

    def to_llvm_ir(self, e: IREmitter) -> None:
        callee = (
            f"llvm.nvvm.cp.async.{self.modifier.data.value}.shared.global.{self.size.value.data}"
        )
        args = [arg(e, self.dst), arg(e, self.src)]
        if self.cp_size is not None:
            callee += ".s"
            args.append(arg(e, self.cp_size))
        call(e, callee, args)


@irdl_op_definition
class CpAsyncCommitGroupOp(IntrinsicOp):
    """`cp.async.commit_group` (sm_80).

    ```mlir
    nvvm.cp.async.commit.group
    ```
    """

    name = "nvvm.cp.async.commit.group"

    INTRINSIC: ClassVar[str] = "llvm.nvvm.cp.async.commit.group"


@irdl_op_definition
class CpAsyncWaitGroupOp(IRDLOperation):
    """`cp.async.wait_group n` (sm_80): waits until at most `n` groups are pending.

    ```mlir
    nvvm.cp.async.wait.group 0
    ```
    """

    name = "nvvm.cp.async.wait.group"

    n = prop_def(IntegerAttr[I32])

    assembly_format = "$n attr-dict"

    def __init__(self, n: int = 0):
        super().__init__(properties={"n": IntegerAttr(n, i32)})

    def to_llvm_ir(self, e: IREmitter) -> None:
        call(e, "llvm.nvvm.cp.async.wait.group", [("i32", str(self.n.value.data))])


@irdl_op_definition
class CpAsyncMBarrierArriveSharedOp(IRDLOperation):
    """`cp.async.mbarrier.arrive{.noinc}.shared.b64 [addr]` (sm_80): the mbarrier at `addr`
    gets one arrive-on from the executing thread once all of its prior cp.async operations
    have completed; with `noinc`, the barrier's pending count is not incremented first, so
    its expected arrivals must count this one.

    ```mlir
    nvvm.cp.async.mbarrier.arrive.shared %bar {noinc = true} : !llvm.ptr<3>
    ```
    """

    name = "nvvm.cp.async.mbarrier.arrive.shared"

    addr = operand_def(SHARED_PTR)
    noinc = opt_prop_def(BoolAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$addr attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue | Operation, noinc: bool = False):
        super().__init__(
            operands=[addr], properties={"noinc": BoolAttr.from_bool(noinc) if noinc else None}
        )

    def to_llvm_ir(self, e: IREmitter) -> None:
        noinc = ".noinc" if self.noinc is not None and self.noinc.value.data else ""
        call(e, f"llvm.nvvm.cp.async.mbarrier.arrive{noinc}.shared", [arg(e, self.addr)])
