"""Bulk copies (sm_90): the bulk group's commit and wait; the non-tensor bulk copies of one
contiguous byte range (the load into (cluster) shared memory, the store, the L2 prefetch);
and the TMA tensor ops: the tensor load, the store, the reduction and the L2 prefetch
(upstream NVVMOps.td's `NVVM_CpAsyncBulk*` ops).

"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I1, I16, I32, I64, IntegerAttr, UnitAttr, i32
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import (
    ANY_PTR,
    GENERIC_PTR,
    GLOBAL_PTR,
    SHARED_PTR,
    AngleBracketEnum,
    CTAGroupKind,
    CTAGroupKindAttr,
    addr_space,
    cta_group,
    ptr_in,
)
from passes.nvvm.emit import IntrinsicOp, arg, asm, cache_hint, call, cast, predicated


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
        _verify_cta_destination(self, self.dst, self.multicast_mask)

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


def _verify_cta_destination(op: Operation, dst: SSAValue, multicast_mask: SSAValue | None) -> None:
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


def _verify_tensor_dims(dims: int, im2col_offsets: int = 0) -> None:
    """Upstream's `cpAsyncBulkTensorCommonVerifier` (im2col when there are offsets)."""
    if not 1 <= dims <= 5:
        raise VerifyException("expects coordinates between 1 to 5 dimension")
    if im2col_offsets:
        if dims < 3:
            raise VerifyException("to use im2col mode, the tensor has to be at least 3-dimensional")
        if dims != im2col_offsets + 2:
            raise VerifyException("im2col offsets must be 2 less than number of coordinates")


def _box(first: int, count: int) -> str:
    """`{$first, ..., $(first + count - 1)}`: inline PTX operands of a TMA box."""
    return "{" + ", ".join(f"${first + i}" for i in range(count)) + "}"


_CTA_GROUP = {None: 0, CTAGroupKind.CTA_1: 1, CTAGroupKind.CTA_2: 2}
"""The g2s intrinsics' `cta_group` immarg (0: none)."""


@irdl_op_definition
class CpAsyncBulkTensorSharedClusterGlobalOp(IRDLOperation):
    """`cp.async.bulk.tensor.Nd.shared::cluster.global{.im2col}.mbarrier::complete_tx::bytes`
    (sm_90): TMA load of a box at `coordinates` (innermost first) into SMEM, completing on
    `mbar`; with `multicast_mask`, into the SMEM of every CTA of the cluster in the mask.

    ```mlir
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmap, %bar, box[%c0, %c1]
        multicast_mask = %mask : !llvm.ptr<3>, !llvm.ptr
    ```
    """

    name = "nvvm.cp.async.bulk.tensor.shared.cluster.global"

    dst = operand_def(ptr_in(3, 7))
    tma_descriptor = operand_def(GENERIC_PTR)
    coordinates = var_operand_def(I32)
    mbar = operand_def(SHARED_PTR)
    im2col_offsets = var_operand_def(I16)
    multicast_mask = opt_operand_def(I16)
    l2_cache_hint = opt_operand_def(I64)
    predicate = opt_operand_def(I1)
    group = opt_prop_def(CTAGroupKindAttr)
    cta_destination = opt_prop_def(UnitAttr)
    """The `.shared::cta` form (PTX ISA 8.6): `dst` in this CTA's window, neither multicast
    nor a CTA group."""

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$dst `,` $tma_descriptor `,` $mbar `,` `box` `[` $coordinates `]` "
        "(`im2col` `[` $im2col_offsets^ `]`)? "
        "(`multicast_mask` `=` $multicast_mask^)? "
        "(`l2_cache_hint` `=` $l2_cache_hint^)? "
        "(`predicate` `=` $predicate^)? "
        "attr-dict `:` type($dst) `,` type($tma_descriptor)"
    )

    def __init__(
        self,
        dst: SSAValue | Operation,
        tma_descriptor: SSAValue | Operation,
        coordinates: Sequence[SSAValue | Operation],
        mbar: SSAValue | Operation,
        multicast_mask: SSAValue | Operation | None = None,
        l2_cache_hint: SSAValue | Operation | None = None,
        predicate: SSAValue | Operation | None = None,
        group: str | None = None,
        im2col_offsets: Sequence[SSAValue | Operation] = (),
        cta_destination: bool = False,
    ):
        properties = cta_group(group)
        if cta_destination:
            properties["cta_destination"] = UnitAttr()
        super().__init__(
            operands=[
                dst,
                tma_descriptor,
                coordinates,
                mbar,
                im2col_offsets,
                multicast_mask,
                l2_cache_hint,
                predicate,
            ],
            properties=properties,
        )

    def verify_(self) -> None:
        _verify_tensor_dims(len(self.coordinates), len(self.im2col_offsets))
        _verify_cta_destination(self, self.dst, self.multicast_mask)
        if self.cta_destination is not None and self.group is not None:
            raise VerifyException("a CTA group is not supported with the shared::cta destination")

    def to_llvm_ir(self, e: IREmitter) -> None:
        if self.predicate is not None:
            self._inline_ptx(e)
            return
        dims, mode = len(self.coordinates), "im2col" if self.im2col_offsets else "tile"
        hint, hint_flag = cache_hint(e, self.l2_cache_hint)
        if self.cta_destination is not None:
            call(
                e,
                f"llvm.nvvm.cp.async.bulk.tensor.g2s.cta.{mode}.{dims}d",
                [
                    arg(e, self.dst),
                    arg(e, self.mbar),
                    arg(e, self.tma_descriptor),
                    *(arg(e, c) for c in self.coordinates),
                    *(arg(e, o) for o in self.im2col_offsets),
                    hint,
                    hint_flag,
                ],
            )
            return
        mask = ("i16", "0") if self.multicast_mask is None else arg(e, self.multicast_mask)
        group = None if self.group is None else self.group.data
        call(
            e,
            f"llvm.nvvm.cp.async.bulk.tensor.g2s.{mode}.{dims}d",
            [
                # The intrinsic's destination is a shared::cluster (addrspace 7) pointer.
                cast(e, self.dst, 7),
                arg(e, self.mbar),
                arg(e, self.tma_descriptor),
                *(arg(e, c) for c in self.coordinates),
                *(arg(e, o) for o in self.im2col_offsets),
                mask,
                hint,
                ("i1", "false" if self.multicast_mask is None else "true"),
                hint_flag,
                ("i32", str(_CTA_GROUP[group])),
            ],
        )

    def _inline_ptx(self, e: IREmitter) -> None:
        dims, offsets = len(self.coordinates), len(self.im2col_offsets)
        operands = [self.dst, self.tma_descriptor, *self.coordinates, self.mbar]
        window = "cta" if self.cta_destination is not None else "cluster"
        ptx = f"cp.async.bulk.tensor.{dims}d.shared::{window}.global"
        ptx += ".im2col" if offsets else ""
        ptx += ".mbarrier::complete_tx::bytes"
        ptx += "" if self.multicast_mask is None else ".multicast::cluster"
        if self.group is not None:
            ptx += f".cta_group::{_CTA_GROUP[self.group.data]}"
        ptx += "" if self.l2_cache_hint is None else ".L2::cache_hint"
        ptx += f" [$0], [$1, {_box(2, dims)}], [${dims + 2}]"
        if offsets:
            ptx += f", {_box(len(operands), offsets)}"
            operands += self.im2col_offsets
        for extra in (self.multicast_mask, self.l2_cache_hint):
            if extra is not None:
                ptx += f", ${len(operands)}"
                operands.append(extra)
        assert self.predicate is not None
        asm(e, predicated(ptx + ";", self.predicate, len(operands)), [*operands, self.predicate])


@irdl_op_definition
class CpAsyncBulkTensorGlobalSharedCtaOp(IRDLOperation):
    """`cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group` (sm_90): TMA store of the
    SMEM box at `src` to `coordinates` (innermost first); completes with the bulk group.

    ```mlir
    nvvm.cp.async.bulk.tensor.global.shared.cta %tmap, %src, box[%c0, %c1]
        : !llvm.ptr, !llvm.ptr<3>, i32, i32
    ```
    """

    name = "nvvm.cp.async.bulk.tensor.global.shared.cta"

    tma_descriptor = operand_def(GENERIC_PTR)
    src = operand_def(SHARED_PTR)
    coordinates = var_operand_def(I32)
    l2_cache_hint = opt_operand_def(I64)
    predicate = opt_operand_def(I1)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    # LLVM 19's format, which ends in `type(operands)`: a declarative format cannot parse
    # that after variadic and optional operands, hence `parse` and `print`.
    #   $tma_descriptor `,` $src `,` `box` `[` $coordinates `]`
    #   (`l2_cache_hint` `=` $l2_cache_hint^)? (`,` `predicate` `=` $predicate^)?
    #   attr-dict `:` type(operands)

    @classmethod
    def parse(cls, parser: Parser) -> CpAsyncBulkTensorGlobalSharedCtaOp:
        pos = parser.pos
        tma_descriptor = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        parser.parse_keyword("box")
        coordinates = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        l2_cache_hint = predicate = None
        if parser.parse_optional_keyword("l2_cache_hint") is not None:
            parser.parse_punctuation("=")
            l2_cache_hint = parser.parse_unresolved_operand()
        if parser.parse_optional_punctuation(",") is not None:
            parser.parse_keyword("predicate")
            parser.parse_punctuation("=")
            predicate = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        optional = [u for u in (l2_cache_hint, predicate) if u is not None]
        unresolved = [tma_descriptor, src, *coordinates, *optional]
        if len(types) != len(unresolved):
            parser.raise_error(
                f"{len(unresolved)} operands present, but expected {len(types)}", pos
            )
        values = [parser.resolve_operand(u, t) for u, t in zip(unresolved, types, strict=True)]
        rest = iter(values[2 + len(coordinates) :])
        op = cls(
            values[0],
            values[1],
            values[2 : 2 + len(coordinates)],
            l2_cache_hint=None if l2_cache_hint is None else next(rest),
            predicate=None if predicate is None else next(rest),
        )
        attributes.pop("operandSegmentSizes", None)
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.tma_descriptor)
        printer.print_string(", ")
        printer.print_operand(self.src)
        printer.print_string(", box[")
        printer.print_list(self.coordinates, printer.print_operand)
        printer.print_string("]")
        if self.l2_cache_hint is not None:
            printer.print_string(" l2_cache_hint = ")
            printer.print_operand(self.l2_cache_hint)
        if self.predicate is not None:
            printer.print_string(", predicate = ")
            printer.print_operand(self.predicate)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list((o.type for o in self.operands), printer.print_attribute)

    def __init__(
        self,
        tma_descriptor: SSAValue | Operation,
        src: SSAValue | Operation,
        coordinates: Sequence[SSAValue | Operation],
        l2_cache_hint: SSAValue | Operation | None = None,
        predicate: SSAValue | Operation | None = None,
    ):
        super().__init__(operands=[tma_descriptor, src, coordinates, l2_cache_hint, predicate])

    def verify_(self) -> None:
        # With a predicate the op lowers to inline PTX, which upstream writes without hint.
        if self.predicate is not None and self.l2_cache_hint is not None:
            raise VerifyException("Inline-ptx lowering unsupported with L2 cache-hint.")
        _verify_tensor_dims(len(self.coordinates))

    def to_llvm_ir(self, e: IREmitter) -> None:
        dims = len(self.coordinates)
        if self.predicate is not None:
            ptx = (
                f"cp.async.bulk.tensor.{dims}d.global.shared::cta.bulk_group "
                f"[$0, {_box(2, dims)}], [$1];"
            )
            operands = [self.tma_descriptor, self.src, *self.coordinates]
            asm(e, predicated(ptx, self.predicate, dims + 2), [*operands, self.predicate])
            return
        hint, hint_flag = cache_hint(e, self.l2_cache_hint)
        call(
            e,
            f"llvm.nvvm.cp.async.bulk.tensor.s2g.tile.{dims}d",
            [
                arg(e, self.src),
                arg(e, self.tma_descriptor),
                *(arg(e, c) for c in self.coordinates),
                hint,
                hint_flag,
            ],
        )


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
        _verify_tensor_dims(len(self.coordinates))

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


@irdl_op_definition
class CpAsyncBulkTensorPrefetchOp(IRDLOperation):
    """`cp.async.bulk.prefetch.tensor.Nd.L2.global{.im2col}` (sm_90): prefetches the box at
    `coordinates` into L2.

    ```mlir
    nvvm.cp.async.bulk.tensor.prefetch %tmap, box[%c0, %c1] : !llvm.ptr
    ```
    """

    name = "nvvm.cp.async.bulk.tensor.prefetch"

    tma_descriptor = operand_def(GENERIC_PTR)
    coordinates = var_operand_def(I32)
    im2col_offsets = var_operand_def(I16)
    l2_cache_hint = opt_operand_def(I64)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = (
        "$tma_descriptor `,` `box` `[` $coordinates `]` "
        "(`im2col` `[` $im2col_offsets^ `]`)? "
        "(`l2_cache_hint` `=` $l2_cache_hint^)? "
        "attr-dict `:` type($tma_descriptor)"
    )

    def __init__(
        self,
        tma_descriptor: SSAValue | Operation,
        coordinates: Sequence[SSAValue | Operation],
        l2_cache_hint: SSAValue | Operation | None = None,
        im2col_offsets: Sequence[SSAValue | Operation] = (),
    ):
        super().__init__(operands=[tma_descriptor, coordinates, im2col_offsets, l2_cache_hint])

    def verify_(self) -> None:
        _verify_tensor_dims(len(self.coordinates), len(self.im2col_offsets))

    def to_llvm_ir(self, e: IREmitter) -> None:
        dims, mode = len(self.coordinates), "im2col" if self.im2col_offsets else "tile"
        hint, hint_flag = cache_hint(e, self.l2_cache_hint)
        call(
            e,
            f"llvm.nvvm.cp.async.bulk.tensor.prefetch.{mode}.{dims}d",
            [
                arg(e, self.tma_descriptor),
                *(arg(e, c) for c in self.coordinates),
                *(arg(e, o) for o in self.im2col_offsets),
                hint,
                hint_flag,
            ],
        )
