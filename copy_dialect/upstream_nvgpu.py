"""Upstream MLIR's `nvgpu` data-movement ops and types, as compilers built on MLIR emit them.

Mirrors the TMA, mbarrier and cp.async part of MLIR's
[NVGPU dialect](https://mlir.llvm.org/docs/Dialects/NVGPU/) (NVGPUOps.td, NVGPUTypes.td):
the ops parse and print in upstream's generic form and in its custom syntax, so that
`convert-nvgpu-to-copy` (`passes.convert_nvgpu_to_copy`) can raise them into the copy
dialect, where the catalogue's verifiers and the protocol analysis check them. The ops
carry no verifier of their own beyond their operand types: the checks are the copy
dialect's, after the raising.

Types: `!nvgpu.device.async.token`, `!nvgpu.mbarrier.token`,
`!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>` and
`!nvgpu.tensormap.descriptor<tensor = memref<64x128xf16, 3>, swizzle = swizzle_128b,
l2promo = none, oob = zero, interleave = none>`; `#gpu.address_space<workgroup>` (which
xDSL's `gpu` lacks) is registered with the `gpu` dialect by `copy_tools.universe`.

Deviations from upstream: only the data-movement ops (no `mma.sync`, `ldmatrix`,
`warpgroup.*`, `rcp`); the mbarrier group's `memorySpace` is any attribute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I1,
    I16,
    I32,
    IndexType,
    IntAttr,
    IntegerAttr,
    MemRefType,
    UnitAttr,
    UnrankedMemRefType,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer

# ===----------------------------------------------------------------------=== #
# Attributes and types
# ===----------------------------------------------------------------------=== #


@irdl_attr_definition
class AddressSpaceAttr(ParametrizedAttribute):
    """`#gpu.address_space<global | workgroup | private>` (MLIR's GPU dialect): workgroup
    is SMEM, memref memory space 3."""

    name = "gpu.address_space"

    value: IntAttr = param_def()

    NAMES: ClassVar[tuple[str, ...]] = ("global", "workgroup", "private")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            pos = parser.pos
            word = parser.parse_identifier()
            if word not in cls.NAMES:
                parser.raise_error(f"expected one of {', '.join(cls.NAMES)}", pos, parser.pos)
        return (IntAttr(cls.NAMES.index(word)),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.NAMES[self.value.data]}>")

    @property
    def is_workgroup(self) -> bool:
        return self.value.data == 1


@irdl_attr_definition
class DeviceAsyncTokenType(ParametrizedAttribute, TypeAttribute):
    """The token of a `device_async_copy` or a `device_async_create_group`."""

    name = "nvgpu.device.async.token"


@irdl_attr_definition
class MBarrierTokenType(ParametrizedAttribute, TypeAttribute):
    """The phase token an `mbarrier.arrive` returns."""

    name = "nvgpu.mbarrier.token"


def _parse_struct(parser: AttrParser, fields: dict[str, object]) -> dict[str, object]:
    """`<name = value, ...>` (upstream's `struct(params)`): each field's parser by name, in
    any order; a field left out is absent from the result."""
    found: dict[str, object] = {}

    def one() -> None:
        pos = parser.pos
        key = parser.parse_identifier()
        if key not in fields or key in found:
            parser.raise_error(f"unexpected parameter '{key}'", pos, parser.pos)
        parser.parse_punctuation("=")
        found[key] = fields[key]()  # type: ignore[operator]

    parser.parse_comma_separated_list(parser.Delimiter.ANGLE, one)
    return found


@irdl_attr_definition
class MBarrierGroupType(ParametrizedAttribute, TypeAttribute):
    """`num_barriers` mbarriers (1 when left out) in `memorySpace`:
    `!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>`."""

    name = "nvgpu.mbarrier.group"

    memory_space: Attribute = param_def()
    num_barriers: IntAttr = param_def()

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        found = _parse_struct(
            parser,
            {"memorySpace": parser.parse_attribute, "num_barriers": parser.parse_integer},
        )
        if "memorySpace" not in found:
            parser.raise_error("expected memorySpace in !nvgpu.mbarrier.group")
        return (found["memorySpace"], IntAttr(found.get("num_barriers", 1)))  # type: ignore[arg-type]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<memorySpace = ")
        printer.print_attribute(self.memory_space)
        if self.num_barriers.data != 1:
            printer.print_string(f", num_barriers = {self.num_barriers.data}")
        printer.print_string(">")


TENSORMAP_ENUMS: dict[str, tuple[str, ...]] = {
    "swizzle": ("none", "swizzle_32b", "swizzle_64b", "swizzle_128b"),
    "l2promo": ("none", "l2promo_64b", "l2promo_128b", "l2promo_256b"),
    "oob": ("zero", "nan"),
    "interleave": ("none", "interleave_16b", "interleave_32b"),
}
"""The keywords of the tensor map descriptor's enum parameters (NVGPU.td's
TensorMapSwizzleKind, TensorMapL2PromoKind, TensorMapOOBKind, TensorMapInterleaveKind)."""


@irdl_attr_definition
class TensorMapDescriptorType(ParametrizedAttribute, TypeAttribute):
    """A TMA tensor map: the box each copy moves (`tensor`, an SMEM memref type) and the
    map's swizzle, L2 promotion, out-of-bounds fill and interleave."""

    name = "nvgpu.tensormap.descriptor"

    tensor: MemRefType = param_def()
    swizzle: IntAttr = param_def()
    l2promo: IntAttr = param_def()
    oob: IntAttr = param_def()
    interleave: IntAttr = param_def()

    def keyword(self, field: str) -> str:
        return TENSORMAP_ENUMS[field][getattr(self, field).data]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def enum(field: str):
            def parse() -> int:
                pos = parser.pos
                word = parser.parse_identifier()
                if word not in TENSORMAP_ENUMS[field]:
                    parser.raise_error(
                        f"expected {field} to be one of {', '.join(TENSORMAP_ENUMS[field])}",
                        pos,
                        parser.pos,
                    )
                return TENSORMAP_ENUMS[field].index(word)

            return parse

        fields: dict[str, object] = {"tensor": parser.parse_type}
        fields.update({f: enum(f) for f in TENSORMAP_ENUMS})
        pos = parser.pos
        found = _parse_struct(parser, fields)
        missing = [f for f in ("tensor", *TENSORMAP_ENUMS) if f not in found]
        if missing:
            parser.raise_error(f"expected {', '.join(missing)} in the descriptor", pos, parser.pos)
        if not isinstance(found["tensor"], MemRefType):
            parser.raise_error("expected the descriptor's tensor to be a memref type", pos)
        return (found["tensor"], *(IntAttr(found[f]) for f in TENSORMAP_ENUMS))  # type: ignore[arg-type,misc]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<tensor = ")
        printer.print_attribute(self.tensor)
        for field in TENSORMAP_ENUMS:
            printer.print_string(f", {field} = {self.keyword(field)}")
        printer.print_string(">")


# ===----------------------------------------------------------------------=== #
# cp.async: device_async_copy, device_async_create_group, device_async_wait
# ===----------------------------------------------------------------------=== #


@irdl_op_definition
class DeviceAsyncCopyOp(IRDLOperation):
    """`dstElements` elements from GMEM to SMEM by cp.async (`srcElements` of them read,
    the rest zero-filled):

    ```mlir
    %t = nvgpu.device_async_copy %src[%i, %j], %dst[%k, %i, %j], 4 bypassL1
        : memref<128x128xf32> to memref<3x16x128xf32, 3>
    ```
    """

    name = "nvgpu.device_async_copy"

    dst = operand_def(MemRefType)
    dstIndices = var_operand_def(IndexType)
    src = operand_def(MemRefType)
    srcIndices = var_operand_def(IndexType)
    srcElements = opt_operand_def(IndexType)
    dstElements = prop_def(IntegerAttr[IndexType])
    bypassL1 = opt_prop_def(UnitAttr)
    asyncToken = result_def(DeviceAsyncTokenType)

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$src `[` $srcIndices `]` `,` $dst `[` $dstIndices `]` `,` $dstElements "
        "(`,` $srcElements^)? (`bypassL1` $bypassL1^)? attr-dict `:` type($src) `to` type($dst)"
    )

    @property
    def bypasses_l1(self) -> bool:
        """`bypassL1`: upstream prints it as a keyword now, in the attribute dictionary
        before (`{bypassL1}`, which parses as a discardable attribute here)."""
        return self.bypassL1 is not None or "bypassL1" in self.attributes


@irdl_op_definition
class DeviceAsyncCreateGroupOp(IRDLOperation):
    """Commits the pending copies of `inputTokens` as one group: `%g =
    nvgpu.device_async_create_group %t0, %t1`."""

    name = "nvgpu.device_async_create_group"

    inputTokens = var_operand_def(DeviceAsyncTokenType)
    asyncToken = result_def(DeviceAsyncTokenType)

    assembly_format = "$inputTokens attr-dict"


@irdl_op_definition
class DeviceAsyncWaitOp(IRDLOperation):
    """Waits until at most `numGroups` groups are pending (0 when left out):
    `nvgpu.device_async_wait %g {numGroups = 1 : i32}`, `nvgpu.device_async_wait`."""

    name = "nvgpu.device_async_wait"

    asyncDependencies = opt_operand_def(DeviceAsyncTokenType)
    """The group's token: optional since upstream's commit that made the wait count-based
    (`nvgpu.device_async_wait {numGroups = 1 : i32}`); older IR names it."""
    numGroups = opt_prop_def(IntegerAttr[I32])

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "($asyncDependencies^)? attr-dict"


# ===----------------------------------------------------------------------=== #
# mbarriers
# ===----------------------------------------------------------------------=== #


@irdl_op_definition
class MBarrierCreateOp(IRDLOperation):
    """`%b = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<...>`: the group's SMEM."""

    name = "nvgpu.mbarrier.create"

    barriers = result_def(MBarrierGroupType)

    assembly_format = "attr-dict `->` type($barriers)"


@irdl_op_definition
class MBarrierInitOp(IRDLOperation):
    """`nvgpu.mbarrier.init %b[%i], %count (, predicate = %p)? : type`."""

    name = "nvgpu.mbarrier.init"

    barriers = operand_def(MBarrierGroupType)
    count = operand_def(IndexType)
    mbarId = operand_def(IndexType)
    predicate = opt_operand_def(I1)

    assembly_format = (
        "$barriers `[` $mbarId `]` `,` $count (`,` `predicate` `=` $predicate^)? "
        "attr-dict `:` type($barriers)"
    )


@irdl_op_definition
class MBarrierTestWaitOp(IRDLOperation):
    """Whether the phase of `token` completed: `%done = nvgpu.mbarrier.test.wait %b[%i],
    %token : type, !nvgpu.mbarrier.token`."""

    name = "nvgpu.mbarrier.test.wait"

    barriers = operand_def(MBarrierGroupType)
    token = operand_def(MBarrierTokenType)
    mbarId = operand_def(IndexType)
    waitComplete = result_def(I1)

    assembly_format = (
        "$barriers `[` $mbarId `]` `,` $token attr-dict `:` type($barriers) `,` type($token)"
    )


@irdl_op_definition
class MBarrierArriveOp(IRDLOperation):
    """`%token = nvgpu.mbarrier.arrive %b[%i] : type -> !nvgpu.mbarrier.token`."""

    name = "nvgpu.mbarrier.arrive"

    barriers = operand_def(MBarrierGroupType)
    mbarId = operand_def(IndexType)
    token = result_def(MBarrierTokenType)

    assembly_format = "$barriers `[` $mbarId `]` attr-dict `:` type($barriers) `->` type($token)"


@irdl_op_definition
class MBarrierArriveNoCompleteOp(IRDLOperation):
    """`count` arrivals that may not complete the phase:
    `%token = nvgpu.mbarrier.arrive.nocomplete %b[%i], %count : type -> !nvgpu.mbarrier.token`."""

    name = "nvgpu.mbarrier.arrive.nocomplete"

    barriers = operand_def(MBarrierGroupType)
    mbarId = operand_def(IndexType)
    count = operand_def(IndexType)
    token = result_def(MBarrierTokenType)

    assembly_format = (
        "$barriers `[` $mbarId `]` `,` $count attr-dict `:` type($barriers) `->` type($token)"
    )


@irdl_op_definition
class MBarrierArriveExpectTxOp(IRDLOperation):
    """An arrival that also expects `txcount` bytes:
    `nvgpu.mbarrier.arrive.expect_tx %b[%i], %bytes (, predicate = %p)? : type`."""

    name = "nvgpu.mbarrier.arrive.expect_tx"

    barriers = operand_def(MBarrierGroupType)
    txcount = operand_def(IndexType)
    mbarId = operand_def(IndexType)
    predicate = opt_operand_def(I1)

    assembly_format = (
        "$barriers `[` $mbarId `]` `,` $txcount (`,` `predicate` `=` $predicate^)? "
        "attr-dict `:` type($barriers)"
    )


@irdl_op_definition
class MBarrierTryWaitParityOp(IRDLOperation):
    """Waits for the phase of `phaseParity` (`ticks`: the suspend-time hint):
    `nvgpu.mbarrier.try_wait.parity %b[%i], %parity, %ticks : type`."""

    name = "nvgpu.mbarrier.try_wait.parity"

    barriers = operand_def(MBarrierGroupType)
    phaseParity = operand_def(I1)
    ticks = operand_def(IndexType)
    mbarId = operand_def(IndexType)

    assembly_format = (
        "$barriers `[` $mbarId `]` `,` $phaseParity `,` $ticks attr-dict `:` type($barriers)"
    )


# ===----------------------------------------------------------------------=== #
# TMA
# ===----------------------------------------------------------------------=== #


@irdl_op_definition
class TmaCreateDescriptorOp(IRDLOperation):
    """The tensor map of `tensor` with the box `boxDimensions` (`cuTensorMapEncodeTiled`):
    `%d = nvgpu.tma.create.descriptor %x box[%c64, %c128] : memref<*xf16> -> type`."""

    name = "nvgpu.tma.create.descriptor"

    tensor = operand_def(UnrankedMemRefType)
    boxDimensions = var_operand_def(IndexType)
    tensorMap = result_def(TensorMapDescriptorType)

    assembly_format = (
        "$tensor `box` `[` $boxDimensions `]` attr-dict `:` type($tensor) `->` type($tensorMap)"
    )


@irdl_op_definition
class TmaFenceOp(IRDLOperation):
    """`nvgpu.tma.fence.descriptor %d : type`: the map, rewritten from the host, is read
    fresh by later copies."""

    name = "nvgpu.tma.fence.descriptor"

    tensorMapDescriptor = operand_def(TensorMapDescriptorType)

    assembly_format = "$tensorMapDescriptor attr-dict `:` type($tensorMapDescriptor)"


@irdl_op_definition
class TmaPrefetchOp(IRDLOperation):
    """`nvgpu.tma.prefetch.descriptor %d (, predicate = %p)? : type`: the map's cache line."""

    name = "nvgpu.tma.prefetch.descriptor"

    tensorMapDescriptor = operand_def(TensorMapDescriptorType)
    predicate = opt_operand_def(I1)

    assembly_format = (
        "$tensorMapDescriptor (`,` `predicate` `=` $predicate^)? attr-dict "
        "`:` type($tensorMapDescriptor)"
    )


@irdl_op_definition
class TmaAsyncLoadOp(IRDLOperation):
    """A box through the map into `dst`, completing on the mbarrier (no arrival):
    `nvgpu.tma.async.load %d[%x, %y], %b[%i] to %buf : type, type -> memref<...>`."""

    name = "nvgpu.tma.async.load"

    dst = operand_def(MemRefType)
    barriers = operand_def(MBarrierGroupType)
    tensorMapDescriptor = operand_def(TensorMapDescriptorType)
    coordinates = var_operand_def(IndexType)
    mbarId = operand_def(IndexType)
    multicastMask = opt_operand_def(I16)
    predicate = opt_operand_def(I1)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$tensorMapDescriptor `[` $coordinates `]` `,` $barriers `[` $mbarId `]` `to` $dst "
        "(`multicast_mask` `=` $multicastMask^)? (`,` `predicate` `=` $predicate^)? "
        "attr-dict `:` type($tensorMapDescriptor) `,` type($barriers) `->` type($dst)"
    )


@irdl_op_definition
class TmaAsyncStoreOp(IRDLOperation):
    """`src` through the map to GMEM (a bulk group):
    `nvgpu.tma.async.store %buf to %d[%x, %y] : memref<...> -> type`."""

    name = "nvgpu.tma.async.store"

    src = operand_def(MemRefType)
    tensorMapDescriptor = operand_def(TensorMapDescriptorType)
    coordinates = var_operand_def(IndexType)
    predicate = opt_operand_def(I1)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$src `to` $tensorMapDescriptor `[` $coordinates `]` (`,` `predicate` `=` $predicate^)? "
        "attr-dict `:` type($src) `->` type($tensorMapDescriptor)"
    )


NVGPU = Dialect(
    "nvgpu",
    [
        DeviceAsyncCopyOp,
        DeviceAsyncCreateGroupOp,
        DeviceAsyncWaitOp,
        MBarrierCreateOp,
        MBarrierInitOp,
        MBarrierTestWaitOp,
        MBarrierArriveOp,
        MBarrierArriveNoCompleteOp,
        MBarrierArriveExpectTxOp,
        MBarrierTryWaitParityOp,
        TmaCreateDescriptorOp,
        TmaFenceOp,
        TmaPrefetchOp,
        TmaAsyncLoadOp,
        TmaAsyncStoreOp,
    ],
    [DeviceAsyncTokenType, MBarrierTokenType, MBarrierGroupType, TensorMapDescriptorType],
)
