"""What the nvvm op families share: the NVVM address spaces as `!llvm.ptr` types and
constraints, upstream's `<value>` enum syntax, the CTA group (TMA loads and tcgen05) and the
TMA load and store modes."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IntAttr
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute
from xdsl.irdl import AttrConstraint, AttrSetConstraint, BaseAttr, irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

# ===----------------------------------------------------------------------=== #
# Pointer types (NVVMMemorySpace: 0 generic, 1 global, 3 shared, 6 tensor, 7 cluster)
# ===----------------------------------------------------------------------=== #


def ptr(addr_space: int | None = None) -> LLVMPointerType:
    """`!llvm.ptr` (generic) or `!llvm.ptr<N>`."""
    return LLVMPointerType() if addr_space is None else LLVMPointerType(IntAttr(addr_space))


def addr_space(t: Attribute) -> int:
    """The address space of an `!llvm.ptr` type; 0 for the generic `!llvm.ptr`."""
    assert isinstance(t, LLVMPointerType)
    return t.addr_space.data if isinstance(t.addr_space, IntAttr) else 0


def ptr_in(*spaces: int) -> AttrConstraint[LLVMPointerType]:
    """`!llvm.ptr` in one of `spaces` (0 is the generic space: `!llvm.ptr` or `<0>`)."""
    types = [ptr(s) for s in spaces] + ([ptr()] if 0 in spaces else [])
    return AttrSetConstraint.get(*types)


GENERIC_PTR = ptr_in(0)
GLOBAL_PTR = ptr_in(1)
SHARED_PTR = ptr_in(3)
TENSOR_PTR = ptr_in(6)
ANY_PTR = BaseAttr(LLVMPointerType)

# ===----------------------------------------------------------------------=== #
# Enum attributes
# ===----------------------------------------------------------------------=== #


class AngleBracketEnum:
    """Upstream's `assemblyFormat = "`<` $value `>`"`: `#nvvm.cta_group<cta_2>`."""

    enum_type: ClassVar[type[StrEnum]]
    data: StrEnum

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data.value}>")

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> StrEnum:
        with parser.in_angle_brackets():
            return parser.parse_str_enum(cls.enum_type)


class CTAGroupKind(StrEnum):
    CTA_1 = "cta_1"
    CTA_2 = "cta_2"


@irdl_attr_definition
class CTAGroupKindAttr(AngleBracketEnum, EnumAttribute[CTAGroupKind]):
    name = "nvvm.cta_group"


def cta_group(group: str | None) -> dict[str, Attribute]:
    """The `group` property of an op built with `group` (none: the op's default)."""
    return {} if group is None else {"group": CTAGroupKindAttr(CTAGroupKind(group))}


class TMALoadMode(StrEnum):
    """Upstream's `NVVM_TMALoadMode` (the modes the lowering emits): how a TMA load or
    prefetch reads its box."""

    TILE = "tile"
    IM2COL = "im2col"
    TILE_GATHER4 = "tile_gather4"


@irdl_attr_definition
class TMALoadModeAttr(AngleBracketEnum, EnumAttribute[TMALoadMode]):
    name = "nvvm.tma_load_mode"


class TMAStoreMode(StrEnum):
    """Upstream's `NVVM_TMAStoreMode` (the modes the lowering emits): how a TMA store writes
    its box."""

    TILE = "tile"
    TILE_SCATTER4 = "tile_scatter4"


@irdl_attr_definition
class TMAStoreModeAttr(AngleBracketEnum, EnumAttribute[TMAStoreMode]):
    name = "nvvm.tma_store_mode"


GATHER4_COORDINATES = 5
"""A gather4/scatter4 takes {col, row0, row1, row2, row3}."""


def verify_gather4_coordinates(coordinates: int) -> None:
    """Upstream's check of the `tile_gather4`/`tile_scatter4` modes' coordinates."""
    if coordinates != GATHER4_COORDINATES:
        raise VerifyException("Gather4 mode expects 5 coordinates")
