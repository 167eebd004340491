"""The TMA tensor copies (sm_90, upstream NVVMOps.td's `NVVM_CpAsyncBulkTensor*` copies): the
load of a box into (cluster) shared memory, tiled or im2col, multicast or for a CTA pair,
and the store of a box from this CTA's shared memory; and the checks and PTX operand lists
the TMA tensor ops share (`bulk_reduce`, `prefetch`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I1, I16, I32, I64, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import (
    GENERIC_PTR,
    SHARED_PTR,
    CTAGroupKind,
    CTAGroupKindAttr,
    TMALoadMode,
    TMALoadModeAttr,
    TMAStoreMode,
    TMAStoreModeAttr,
    cta_group,
    ptr_in,
    verify_gather4_coordinates,
)
from passes.nvvm.bulk import verify_cta_destination
from passes.nvvm.emit import arg, asm, cache_hint, call, cast, predicated


def verify_tensor_dims(dims: int, im2col_offsets: int = 0) -> None:
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
    mode = opt_prop_def(TMALoadModeAttr)
    """Upstream's load mode; only `tile_gather4` is spelled (tile and im2col follow from the
    im2col offsets, as in LLVM 19)."""
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
        gather4: bool = False,
    ):
        properties = cta_group(group)
        if cta_destination:
            properties["cta_destination"] = UnitAttr()
        if gather4:
            properties["mode"] = TMALoadModeAttr(TMALoadMode.TILE_GATHER4)
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

    @property
    def is_gather4(self) -> bool:
        return self.mode is not None and self.mode.data == TMALoadMode.TILE_GATHER4

    def verify_(self) -> None:
        verify_tensor_dims(len(self.coordinates), len(self.im2col_offsets))
        if self.is_gather4:
            verify_gather4_coordinates(len(self.coordinates))
            if self.im2col_offsets:
                raise VerifyException("im2col offsets are only for the im2col mode")
        verify_cta_destination(self, self.dst, self.multicast_mask)
        if self.cta_destination is not None and self.group is not None:
            raise VerifyException("a CTA group is not supported with the shared::cta destination")

    def to_llvm_ir(self, e: IREmitter) -> None:
        if self.predicate is not None:
            self._inline_ptx(e)
            return
        dims, mode = len(self.coordinates), "im2col" if self.im2col_offsets else "tile"
        if self.is_gather4:
            dims, mode = 2, "tile.gather4"
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
        ptx = f"cp.async.bulk.tensor.{2 if self.is_gather4 else dims}d.shared::{window}.global"
        ptx += ".im2col" if offsets else ".tile::gather4" if self.is_gather4 else ""
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
    mode = opt_prop_def(TMAStoreModeAttr)
    """Upstream's store mode: `tile` (the default) or `tile_scatter4`."""

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
        mode = attributes.pop("mode", None)
        if mode is not None:
            op.properties["mode"] = mode
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
        mode = {} if self.mode is None else {"mode": self.mode}
        printer.print_op_attributes({**mode, **self.attributes})
        printer.print_string(" : ")
        printer.print_list((o.type for o in self.operands), printer.print_attribute)

    def __init__(
        self,
        tma_descriptor: SSAValue | Operation,
        src: SSAValue | Operation,
        coordinates: Sequence[SSAValue | Operation],
        l2_cache_hint: SSAValue | Operation | None = None,
        predicate: SSAValue | Operation | None = None,
        scatter4: bool = False,
    ):
        super().__init__(
            operands=[tma_descriptor, src, coordinates, l2_cache_hint, predicate],
            properties={"mode": TMAStoreModeAttr(TMAStoreMode.TILE_SCATTER4)} if scatter4 else {},
        )

    @property
    def is_scatter4(self) -> bool:
        return self.mode is not None and self.mode.data == TMAStoreMode.TILE_SCATTER4

    def verify_(self) -> None:
        # With a predicate the op lowers to inline PTX, which upstream writes without hint.
        if self.predicate is not None and self.l2_cache_hint is not None:
            raise VerifyException("Inline-ptx lowering unsupported with L2 cache-hint.")
        verify_tensor_dims(len(self.coordinates))
        if self.is_scatter4:
            verify_gather4_coordinates(len(self.coordinates))

    def to_llvm_ir(self, e: IREmitter) -> None:
        dims = len(self.coordinates)
        mode = "tile.scatter4" if self.is_scatter4 else "tile"
        if self.predicate is not None:
            ptx = (
                f"cp.async.bulk.tensor.{2 if self.is_scatter4 else dims}d.global.shared::cta"
                f"{'.tile::scatter4' if self.is_scatter4 else ''}.bulk_group "
                f"[$0, {_box(2, dims)}], [$1];"
            )
            operands = [self.tma_descriptor, self.src, *self.coordinates]
            asm(e, predicated(ptx, self.predicate, dims + 2), [*operands, self.predicate])
            return
        hint, hint_flag = cache_hint(e, self.l2_cache_hint)
        call(
            e,
            f"llvm.nvvm.cp.async.bulk.tensor.s2g.{mode}.{2 if self.is_scatter4 else dims}d",
            [
                arg(e, self.src),
                arg(e, self.tma_descriptor),
                *(arg(e, c) for c in self.coordinates),
                hint,
                hint_flag,
            ],
        )
