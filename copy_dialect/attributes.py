"""The copy dialect's enums, attributes and types.

The enums of op properties (implementation, reduction, OOB mode, cache mode, group kind,
barrier scope, the tcgen05 TMEM shapes) with their attributes; `#copy.target`, the memory
spaces `#copy.smem` (with its swizzle) and `#copy.tmem`, `#copy.leader_tracked`, and the
barrier group type `!copy.barrier<N>`.
"""

from __future__ import annotations

import inspect
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from enum import auto
from typing import Any

from xdsl.dialects.builtin import (
    ArrayAttr,
    IntAttr,
    NoneAttr,
    StringAttr,
)
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import (
    Attribute,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    TypeAttribute,
)
from xdsl.irdl import (
    irdl_attr_definition,
    param_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum

from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.smem_space import SWIZZLES as SWIZZLES  # re-exported
from copy_dialect.smem_space import SmemSpaceAttr as SmemSpaceAttr  # re-exported
from facts import hardware
from facts.target import TARGETS, Target

# ===----------------------------------------------------------------------=== #
# Enums
# ===----------------------------------------------------------------------=== #


class Implementation(StrEnum):
    """How `copy.async_copy` moves its box: `tma` (a tensor copy through a tensor map),
    `bulk` (a non-tensor `cp.async.bulk` of one contiguous byte range: no tensor map) or
    `cp_async` (every thread's 4- to 16-byte chunks, sm_80+)."""

    TMA = auto()
    CP_ASYNC = auto()
    BULK = auto()

    @property
    def is_bulk_async(self) -> bool:
        """Issued by one thread to the TMA unit, completing on an mbarrier (loads) or a bulk
        group (stores): `tma` and `bulk`."""
        return self in (Implementation.TMA, Implementation.BULK)


class ReductionKind(StrEnum):
    ADD = "add"
    MIN = "min"
    MAX = "max"
    UMIN = "umin"
    UMAX = "umax"
    SMIN = "smin"
    SMAX = "smax"
    INC = "inc"
    DEC = "dec"
    AND = "and"
    OR = "or"
    XOR = "xor"


class OOBMode(StrEnum):
    """What a load puts in SMEM for elements outside the GMEM array."""

    ZEROS = auto()
    NAN = auto()
    UNDEFINED = auto()
    PROMISE_IN_BOUNDS = auto()


class CacheMode(StrEnum):
    """cp.async cache operator: `.ca` (L1 and L2) or `.cg` (L2 only, 16-byte copies)."""

    CA = auto()
    CG = auto()


class L2Policy(StrEnum):
    """The L2 cache eviction priority a TMA copy gives the lines it touches (PTX's
    `.L2::cache_hint` operand)."""

    EVICT_NORMAL = auto()
    EVICT_FIRST = auto()
    EVICT_LAST = auto()
    EVICT_UNCHANGED = auto()
    """Leaves the lines' eviction priority as it is (no documented constant: made in the
    kernel by `createpolicy`)."""


L2_SECONDARY_POLICIES = (L2Policy.EVICT_FIRST, L2Policy.EVICT_UNCHANGED)
"""The priorities `createpolicy.fractional` takes as its secondary one (PTX ISA); without
one, the secondary priority is evict_unchanged."""

L2_PROMOTIONS = (0, 64, 128, 256)
"""A tensor map's L2 promotion in bytes (`CU_TENSOR_MAP_L2_PROMOTION_*`: none, 64 B,
128 B, 256 B); 0 means none."""


L2_POLICY_ENCODING = {
    L2Policy.EVICT_NORMAL: 0x1000000000000000,
    L2Policy.EVICT_FIRST: 0x12F0000000000000,
    L2Policy.EVICT_LAST: 0x14F0000000000000,
}
"""The 64-bit cache-policy operand of each policy: what `createpolicy.fractional.L2::<policy>
.b64 p, 1.0` gives (CUTLASS's CacheHintSm90 values). The one table the verifier (a raw
`cache_hint` must be one of these) and the lowering read. evict_unchanged has no entry:
no source documents its value, so the lowering makes it in the kernel."""


@dataclass(frozen=True)
class CachePolicy:
    """A fraction-based L2 cache policy (PTX `createpolicy.fractional`): each access gets
    `primary` with probability `fraction`, else `secondary`."""

    primary: L2Policy
    fraction: float | None = None
    """In (0, 1] as an f32; None is PTX's default, 1.0."""
    secondary: L2Policy | None = None
    """evict_first or evict_unchanged; None is PTX's default, evict_unchanged."""

    @property
    def constant(self) -> int | None:
        """The policy's 64-bit operand where a source documents it (a named policy alone:
        `L2_POLICY_ENCODING`), else None: `createpolicy` makes it in the kernel."""
        if self.fraction is None and self.secondary is None:
            return L2_POLICY_ENCODING.get(self.primary)
        return None

    def createpolicy(self, dest: str) -> str:
        """The PTX that makes the policy in register `dest`. The fraction is written as an
        exact f32 literal (0fXXXXXXXX); the default secondary (evict_unchanged) is left out,
        so that one policy has one spelling."""
        secondary = ""
        if self.secondary is not None and self.secondary != L2Policy.EVICT_UNCHANGED:
            secondary = f".L2::{self.secondary}"
        fraction = 1.0 if self.fraction is None else self.fraction
        bits = struct.unpack(">I", struct.pack(">f", fraction))[0]
        return f"createpolicy.fractional.L2::{self.primary}{secondary}.b64 {dest}, 0f{bits:08X};"


class TensorMapField(StrEnum):
    """The field of a tensor map in global memory that `copy.tensormap_replace` rewrites."""

    GLOBAL_ADDRESS = auto()
    GLOBAL_DIM = auto()
    GLOBAL_STRIDE = auto()


class GroupKind(StrEnum):
    """Which async-group mechanism a commit/wait refers to."""

    BULK = auto()
    CP_ASYNC = auto()


class BarrierScope(StrEnum):
    CTA = auto()
    CLUSTER = auto()


class Issuer(StrEnum):
    """Which of the threads that reach a `copy.barrier_arrive` arrive: every one, one lane
    per warp (after the warp synchronizes), or the elected thread of the block or role."""

    THREADS = auto()
    WARPS = auto()
    ELECTED = auto()


class TmemShape(StrEnum):
    """tcgen05.ld/st data-movement shapes (lanes x bits)."""

    S32X32B = "shape_32x32b"
    S16X64B = "shape_16x64b"
    S16X128B = "shape_16x128b"
    S16X256B = "shape_16x256b"
    S16X32BX2 = "shape_16x32bx2"


class TmemReduce(StrEnum):
    MIN = auto()
    MAX = auto()


class TmemWaitKind(StrEnum):
    LOAD = auto()
    STORE = auto()


class MatrixShape(StrEnum):
    """ldmatrix/stmatrix matrix shapes: m8n8 (16-bit elements), m16n16 (ldmatrix, 8-bit),
    m16n8 (stmatrix, 8-bit)."""

    M8N8 = "m8n8"
    M16N16 = "m16n16"
    M16N8 = "m16n8"


class MatrixFormat(StrEnum):
    """The packed sources an 8-bit ldmatrix widens to bytes (`.b8x16.<format>`): 16 6-bit
    elements and 32 bits of padding, or 16 4-bit elements and 64 bits of padding, a row."""

    B6X16_P32 = "b6x16_p32"
    B4X16_P64 = "b4x16_p64"


class TmemCopyShape(StrEnum):
    """tcgen05.cp shapes (rows x bits)."""

    S128X256B = "shape_128x256b"
    S4X256B = "shape_4x256b"
    S128X128B = "shape_128x128b"
    S64X128B = "shape_64x128b"
    S32X128B = "shape_32x128b"


class TmemCopyMulticast(StrEnum):
    WARPX2_02_13 = auto()
    WARPX2_01_23 = auto()
    WARPX4 = auto()


@irdl_attr_definition
class ImplementationAttr(EnumAttribute[Implementation], SpacedOpaqueSyntaxAttribute):
    name = "copy.implementation"


@irdl_attr_definition
class ReductionKindAttr(EnumAttribute[ReductionKind], SpacedOpaqueSyntaxAttribute):
    name = "copy.reduction"


@irdl_attr_definition
class OOBModeAttr(EnumAttribute[OOBMode], SpacedOpaqueSyntaxAttribute):
    name = "copy.oob"


@irdl_attr_definition
class CacheModeAttr(EnumAttribute[CacheMode], SpacedOpaqueSyntaxAttribute):
    name = "copy.cache"


@irdl_attr_definition
class L2PolicyAttr(EnumAttribute[L2Policy], SpacedOpaqueSyntaxAttribute):
    name = "copy.l2"


@irdl_attr_definition
class TensorMapFieldAttr(EnumAttribute[TensorMapField], SpacedOpaqueSyntaxAttribute):
    name = "copy.tensormap_field"


@irdl_attr_definition
class GroupKindAttr(EnumAttribute[GroupKind], SpacedOpaqueSyntaxAttribute):
    name = "copy.group"


@irdl_attr_definition
class BarrierScopeAttr(EnumAttribute[BarrierScope], SpacedOpaqueSyntaxAttribute):
    name = "copy.scope"


@irdl_attr_definition
class IssuerAttr(EnumAttribute[Issuer], SpacedOpaqueSyntaxAttribute):
    name = "copy.issuer"


@irdl_attr_definition
class TmemShapeAttr(EnumAttribute[TmemShape], SpacedOpaqueSyntaxAttribute):
    name = "copy.tmem_shape"


@irdl_attr_definition
class TmemReduceAttr(EnumAttribute[TmemReduce], SpacedOpaqueSyntaxAttribute):
    name = "copy.tmem_reduce"


@irdl_attr_definition
class TmemWaitKindAttr(EnumAttribute[TmemWaitKind], SpacedOpaqueSyntaxAttribute):
    name = "copy.tmem_wait_kind"


@irdl_attr_definition
class MatrixShapeAttr(EnumAttribute[MatrixShape], SpacedOpaqueSyntaxAttribute):
    name = "copy.matrix_shape"


@irdl_attr_definition
class MatrixFormatAttr(EnumAttribute[MatrixFormat], SpacedOpaqueSyntaxAttribute):
    name = "copy.matrix_format"


@irdl_attr_definition
class TmemCopyShapeAttr(EnumAttribute[TmemCopyShape], SpacedOpaqueSyntaxAttribute):
    name = "copy.tmem_copy_shape"


@irdl_attr_definition
class TmemCopyMulticastAttr(EnumAttribute[TmemCopyMulticast], SpacedOpaqueSyntaxAttribute):
    name = "copy.tmem_copy_multicast"


ENUM_ATTRIBUTES = (
    ImplementationAttr,
    ReductionKindAttr,
    OOBModeAttr,
    CacheModeAttr,
    L2PolicyAttr,
    TensorMapFieldAttr,
    GroupKindAttr,
    BarrierScopeAttr,
    IssuerAttr,
    TmemShapeAttr,
    TmemReduceAttr,
    TmemWaitKindAttr,
    TmemCopyShapeAttr,
    TmemCopyMulticastAttr,
    MatrixShapeAttr,
    MatrixFormatAttr,
)
"""The dialect's enum attributes: each one's docstring (what `help()` shows) lists its
values, from its enum, so that the two cannot disagree."""


def _document_enum(attr: type[EnumAttribute[Any]]) -> None:
    values = [str(v) for v in attr.enum_type]
    example = f"#{attr.name.replace('.', '<', 1)} {values[0]}>"
    what = inspect.cleandoc(attr.enum_type.__doc__ or "")
    if what.startswith("An enumeration") or what.startswith("Create a collection"):
        what = ""
    attr.__doc__ = (
        (what + "\n\n" if what else "")
        + f"The `{attr.name}` attribute, one of: {', '.join(values)}. Written `{example}` in "
        "the generic form; the ops' custom syntax writes the bare value after its keyword."
    )


for _attr in ENUM_ATTRIBUTES:
    _document_enum(_attr)


def enum_attr(attr_type: type, enum_type: type[StrEnum], value: object) -> Attribute | None:
    if value is None:
        return None
    return attr_type(enum_type(value))


# ===----------------------------------------------------------------------=== #
# Attributes and types
# ===----------------------------------------------------------------------=== #


def swizzle_period(swizzle: int) -> int:
    """Bytes after which a swizzle pattern repeats (8 rows of the span: TR11); 0 for none."""
    return 0 if swizzle == 16 else hardware.swizzle_period(swizzle)


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """The compilation target, e.g. `#copy.target<"sm_90a">` (see `facts.target`)."""

    name = "copy.target"

    arch: StringAttr = param_def()

    def __init__(self, arch: str | StringAttr):
        super().__init__(StringAttr(arch) if isinstance(arch, str) else arch)

    @property
    def target(self) -> Target:
        return TARGETS[self.arch.data]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_str_literal('target name, e.g. "sm_90a"')),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f'<"{self.arch.data}">')

    def verify(self) -> None:
        if self.arch.data not in TARGETS:
            raise Error(
                f"unknown target '{self.arch.data}'",
                note=f"expected one of {', '.join(TARGETS)}",
            )


@irdl_attr_definition
class TmemSpaceAttr(ParametrizedAttribute):
    """Tensor memory (tcgen05, sm_100a family): `#copy.tmem`."""

    name = "copy.tmem"


@irdl_attr_definition
class LeaderTrackedAttr(ParametrizedAttribute):
    """
    How a leader-tracked 2-CTA copy splits its slice: `#copy.leader_tracked<replicated>`
    (each CTA gets the whole slice, the leader CTA's barrier tracks both) or
    `#copy.leader_tracked<partitioned 0>` (the slice is split along dim 0; each CTA's SMEM
    ref holds its part).
    """

    name = "copy.leader_tracked"

    axis: IntAttr | NoneAttr = param_def()

    def __init__(self, axis: int | None = None):
        super().__init__(NoneAttr() if axis is None else IntAttr(axis))

    @property
    def partition_axis(self) -> int | None:
        return None if isinstance(self.axis, NoneAttr) else self.axis.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            kind = parser.parse_optional_keyword("replicated")
            if kind is not None:
                return (NoneAttr(),)
            parser.parse_keyword("partitioned", " (expected replicated or partitioned N)")
            return (IntAttr(parser.parse_integer(allow_boolean=False, allow_negative=False)),)

    def print_parameters(self, printer: Printer) -> None:
        axis = self.partition_axis
        printer.print_string("<replicated>" if axis is None else f"<partitioned {axis}>")


MAX_BARRIERS = 32
"""Barriers in one `!copy.barrier` group: the group's phase bits are one i32 (I1)."""


@irdl_attr_definition
class BarrierType(ParametrizedAttribute, TypeAttribute):
    """A group of `count` mbarriers in shared memory: `!copy.barrier<4>`."""

    name = "copy.barrier"

    count: IntAttr = param_def()

    def __init__(self, count: int):
        super().__init__(IntAttr(count))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (IntAttr(parser.parse_integer(allow_boolean=False)),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.count.data}>")

    def verify(self) -> None:
        # rule: I1
        if not 1 <= self.count.data <= MAX_BARRIERS:
            raise Error(
                f"Only up to {MAX_BARRIERS} barriers per group supported",
                note=f"got {self.count.data}; the phase bits of a group are one i32: use at most "
                f"{MAX_BARRIERS}, or split larger rings into several groups",
            )


@irdl_attr_definition
class TensorMapType(ParametrizedAttribute, TypeAttribute):
    """A tensor map in global memory (`copy.tensormap_global`): the box each copy through it
    moves (outermost dim first, one entry per GMEM dim), its element type, its swizzle in
    bytes (16: none) and the fill of out-of-bounds loads:
    `!copy.tensormap<64x64xf32>`, `!copy.tensormap<8x64xbf16, swizzle 128, oob nan>`."""

    name = "copy.tensormap"

    box: ArrayAttr[IntAttr] = param_def()
    element_type: Attribute = param_def()
    swizzle: IntAttr = param_def()
    oob: StringAttr = param_def()

    def __init__(
        self, box: Sequence[int], element_type: Attribute, swizzle: int = 16, oob: str = "zeros"
    ):
        super().__init__(
            ArrayAttr([IntAttr(b) for b in box]), element_type, IntAttr(swizzle), StringAttr(oob)
        )

    @property
    def box_shape(self) -> tuple[int, ...]:
        return tuple(b.data for b in self.box.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shape, element_type = parser.parse_ranked_shape()
            swizzle, oob = 16, "zeros"
            while parser.parse_optional_punctuation(",") is not None:
                if parser.parse_optional_keyword("swizzle") is not None:
                    swizzle = parser.parse_integer(allow_boolean=False)
                else:
                    parser.parse_keyword("oob")
                    oob = parser.parse_identifier()
        return (
            ArrayAttr([IntAttr(d) for d in shape]),
            element_type,
            IntAttr(swizzle),
            StringAttr(oob),
        )

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + "".join(f"{b}x" for b in self.box_shape))
        printer.print_attribute(self.element_type)
        if self.swizzle.data != 16:
            printer.print_string(f", swizzle {self.swizzle.data}")
        if self.oob.data != "zeros":
            printer.print_string(f", oob {self.oob.data}")
        printer.print_string(">")

    def verify(self) -> None:
        # rule: TU2
        if self.swizzle.data not in SWIZZLES or self.oob.data not in ("zeros", "nan"):
            raise Error(
                f"Expected a tensor map with a swizzle of {', '.join(map(str, SWIZZLES))} "
                f"bytes and oob zeros or nan, got swizzle {self.swizzle.data} and oob "
                f"{self.oob.data}",
                note="write the map type as !copy.tensormap<64x64xf32, swizzle 128, oob nan> "
                "(swizzle 16 and oob zeros are the defaults)",
            )
