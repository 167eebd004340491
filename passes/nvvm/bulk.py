"""Bulk copies (sm_90, upstream NVVMOps.td's `NVVM_CpAsyncBulk*` ops that move no tensor): the
bulk group's commit and wait, and the non-tensor bulk copies of one contiguous byte range:
the load into (cluster) shared memory, the store, the L2 prefetch. The TMA tensor ops are
`bulk_tensor` (load, store), `bulk_reduce` (the reduction) and `prefetch` (the L2 prefetch).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I16, I32, I64, IntegerAttr, UnitAttr, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import GLOBAL_PTR, SHARED_PTR, addr_space, ptr_in
from passes.nvvm.emit import IntrinsicOp, arg, cache_hint, call, cast


@irdl_op_definition
class CpAsyncBulkCommitGroupOp(IntrinsicOp):
    """`cp.async.bulk.commit_group` (sm_90).

    ```mlir
    nvvm.cp.async.bulk.commit.group
    ```
    """

    name = "nvvm.cp.async.bulk.commit.group"

    INTRINSIC: ClassVar[str] = "llvm.nvvm.cp.async.bulk.commit.group"


@irdl_op_definition
class CpAsyncBulkWaitGroupOp(IRDLOperation):
    """`cp.async.bulk.wait_group{.read} group` (sm_90): waits until at most `group` bulk
    groups are pending (with `read`, only until they have read their sources).

    ```mlir
    nvvm.cp.async.bulk.wait_group 0 {read}
    ```
    """

    name = "nvvm.cp.async.bulk.wait_group"

    group = prop_def(IntegerAttr[I32])
    read = opt_prop_def(UnitAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$group attr-dict"

    def __init__(self, group: int = 0, read: bool = True):
        properties: dict[str, Attribute] = {"group": IntegerAttr(group, i32)}
        if read:
            properties["read"] = UnitAttr()
        super().__init__(properties=properties)

    def verify_(self) -> None:
        if self.group.value.data < 0:
            raise VerifyException(
                "attribute 'group' failed to satisfy constraint: 32-bit signless integer "
                "attribute whose minimum value is 0"
            )

    def to_llvm_ir(self, e: IREmitter) -> None:
        read = ".read" if self.read is not None else ""
        call(e, f"llvm.nvvm.cp.async.bulk.wait.group{read}", [("i32", str(self.group.value.data))])


@irdl_op_definition
class CpAsyncBulkSharedClusterGlobalOp(IRDLOperation):
    """`cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes` (sm_90): copies
    `size` bytes (a multiple of 16) from `src` to `dst`, completing on `mbar`; with
    `multicast_mask`, into the SMEM of every CTA of the cluster in the mask
    (`.multicast::cluster`, sm_90a).

    ```mlir
    nvvm.cp.async.bulk.shared.cluster.global %dst, %src, %bar, %size
        : !llvm.ptr<3>, !llvm.ptr<1>
    ```
    """

    name = "nvvm.cp.async.bulk.shared.cluster.global"

    dst = operand_def(ptr_in(3, 7))
    src = operand_def(GLOBAL_PTR)
    mbar = operand_def(SHARED_PTR)
    size = operand_def(I32)
    multicast_mask = opt_operand_def(I16)
    l2_cache_hint = opt_operand_def(I64)
    cta_destination = opt_prop_def(UnitAttr)
    """The `.shared::cta` form (PTX ISA 8.6): `dst` in this CTA's window, no multicast."""

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$dst `,` $src `,` $mbar `,` $size "
        "(`multicast_mask` `=` $multicast_mask^)? "
        "(`l2_cache_hint` `=` $l2_cache_hint^)? "
        "attr-dict `:` type($dst) `,` type($src)"
    )

    def __init__(
        self,
        dst: SSAValue | Operation,
        src: SSAValue | Operation,
        mbar: SSAValue | Operation,
        size: SSAValue | Operation,
        multicast_mask: SSAValue | Operation | None = None,
        l2_cache_hint: SSAValue | Operation | None = None,
        cta_destination: bool = False,
    ):
        super().__init__(
            operands=[dst, src, mbar, size, multicast_mask, l2_cache_hint],
            properties={"cta_destination": UnitAttr()} if cta_destination else {},
        )

    def verify_(self) -> None:
        verify_cta_destination(self, self.dst, self.multicast_mask)

    def to_llvm_ir(self, e: IREmitter) -> None:
        hint, hint_flag = cache_hint(e, self.l2_cache_hint)
        if self.cta_destination is not None:
            call(
                e,
                "llvm.nvvm.cp.async.bulk.global.to.shared.cta",
                [arg(e, self.dst), arg(e, self.mbar), arg(e, self.src), arg(e, self.size)]
                + [hint, hint_flag],
            )
            return
        mask = ("i16", "0") if self.multicast_mask is None else arg(e, self.multicast_mask)
        call(
            e,
            "llvm.nvvm.cp.async.bulk.global.to.shared.cluster",
            [
                # The intrinsic's destination is a shared::cluster (addrspace 7) pointer.
                cast(e, self.dst, 7),
                arg(e, self.mbar),
                arg(e, self.src),
                arg(e, self.size),
                mask,
                hint,
                ("i1", "false" if self.multicast_mask is None else "true"),
                hint_flag,
            ],
        )


@irdl_op_definition
class CpAsyncBulkGlobalSharedCtaOp(IRDLOperation):
    """`cp.async.bulk.global.shared::cta.bulk_group` (sm_90): copies `size` bytes (a multiple
    of 16) from this CTA's SMEM at `src` to `dst`; completes with the bulk group.

    ```mlir
    nvvm.cp.async.bulk.global.shared.cta %dst, %src, %size : !llvm.ptr<1>, !llvm.ptr<3>
    ```
    """

    name = "nvvm.cp.async.bulk.global.shared.cta"

    dst = operand_def(GLOBAL_PTR)
    src = operand_def(SHARED_PTR)
    size = operand_def(I32)
    l2_cache_hint = opt_operand_def(I64)

    assembly_format = (
        "$dst `,` $src `,` $size (`l2_cache_hint` `=` $l2_cache_hint^)? "
        "attr-dict `:` type($dst) `,` type($src)"
    )

    def __init__(
        self,
        dst: SSAValue | Operation,
        src: SSAValue | Operation,
        size: SSAValue | Operation,
        l2_cache_hint: SSAValue | Operation | None = None,
    ):
        super().__init__(operands=[dst, src, size, l2_cache_hint])

    def to_llvm_ir(self, e: IREmitter) -> None:
        hint, hint_flag = cache_hint(e, self.l2_cache_hint)
        call(
            e,
            "llvm.nvvm.cp.async.bulk.shared.cta.to.global",
            [arg(e, self.dst), arg(e, self.src), arg(e, self.size), hint, hint_flag],
        )


@irdl_op_definition
class CpAsyncBulkPrefetchOp(IRDLOperation):
    """`cp.async.bulk.prefetch.L2.global` (sm_90): prefetches `size` bytes (a multiple of
    16) at `src` into L2.

    ```mlir
    nvvm.cp.async.bulk.prefetch %src, %size : !llvm.ptr<1>
    ```
    """

    name = "nvvm.cp.async.bulk.prefetch"

    src = operand_def(GLOBAL_PTR)
    size = operand_def(I32)
    l2_cache_hint = opt_operand_def(I64)

    assembly_format = (
        "$src `,` $size (`l2_cache_hint` `=` $l2_cache_hint^)? attr-dict `:` type($src)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        size: SSAValue | Operation,
        l2_cache_hint: SSAValue | Operation | None = None,
    ):
        super().__init__(operands=[src, size, l2_cache_hint])

    def to_llvm_ir(self, e: IREmitter) -> None:
        hint, hint_flag = cache_hint(e, self.l2_cache_hint)
        call(
            e,
            "llvm.nvvm.cp.async.bulk.prefetch.L2",
            [arg(e, self.src), arg(e, self.size), hint, hint_flag],
        )


def verify_cta_destination(op: Operation, dst: SSAValue, multicast_mask: SSAValue | None) -> None:
    """Upstream's rule for a `.shared::cta` destination: this CTA's window (a `ptr<3>`), no
    multicast (upstream takes the form from the pointer's space; here it is the
    `cta_destination` property, since a `ptr<3>` destination means `.shared::cluster`
    in LLVM 19's NVVM, which this subset follows)."""
    if op.properties.get("cta_destination") is None:
        return
    if multicast_mask is not None:
        raise VerifyException("Multicast is not supported with shared::cta mode.")
    if addr_space(dst.type) != 3:
        raise VerifyException("the shared::cta destination is a shared (addrspace 3) pointer")
