"""Where each element of a row-major SMEM buffer lives: the one definition of the layout.

The verifier (buffer sizes, slot alignment), the TMA lowering (slot addresses) and the
thread-access lowering (`memref.load`/`memref.store` addresses) all take the layout from here.

A buffer of shape (d0, ..., dn) is row-major; its innermost dim is a row. Unswizzled
(swizzle 16), rows are packed. Under a swizzle of S = 32, 64 or 128 bytes:

- each row occupies its bytes rounded up to a multiple of S: a row narrower than the span
  takes S bytes (where TMA places it: a 16-byte row under 128B swizzle lies at the start of
  its own 128 bytes), a wider one the next multiple of S (no TMA box can write rows wider
  than the span, rule C5; the rounding keeps the swizzle inside the buffer);
- the byte at linear offset `o` (rows placed as above) is stored at `swizzled(o, S)`: the
  16-byte unit number within each S-byte block (address bits 4.., log2(S/16) of them) is
  XOR-ed with bits 7.. of the offset (the row within the 8-row period, for rows of one
  span). That is CUTLASS's `Swizzle<log2(S/16), 4, 3>` on byte offsets. It repeats every
  8 * S bytes (the period), and it moves bytes only within their S-byte block.

TMA applies the XOR to absolute SMEM address bits, so a swizzled buffer (and every TMA slot
in it) starts at a multiple of the period (rules TR10, TR11); then buffer offsets and
absolute addresses give the same pattern.

The 128-byte swizzles of sm_100 with a larger atom (`CU_TENSOR_MAP_SWIZZLE_128B_ATOM_*`,
cuda.h 12.8+; `Swizzle`) lay rows out as the 128-byte swizzle does and permute bigger units
within each 128-byte block:

- atom 32 (`128B_ATOM_32B`): the 32-byte unit number (bits 5..6) is XOR-ed with bits 7..8,
  the 128-byte row within a 4-row period: CUTLASS's `Swizzle<2,5,2>`, the UMMA layout
  `SWIZZLE_128B_BASE32B` (cute/arch/mma_sm100_desc.hpp, `Layout_MN_SW128_32B_Atom`);
- atom 32 with flip (`128B_ATOM_32B_FLIP_8B`): that, and on every odd 128-byte row the two
  8-byte halves of each 16-byte unit swap (bit 3 XOR-ed with bit 7: cuda.h's "swap lower 8B
  with upper 8B within each 16B for every alternate row");
- atom 64 (`128B_ATOM_64B`): the 64-byte unit number (bit 6) is XOR-ed with bit 7, the row
  within a 2-row period (cuda.h: "swizzle 64B chunks within 128B span"; the bit taken is
  this layout's reading of it, by the pattern of the two above: no source spells it out and
  no GPU here can run it, docs/design.md).

They keep the 128-byte swizzle's period and alignment (1024 bytes), a multiple of theirs.

Packed 4- and 6-bit elements that a `16U4_ALIGN16B` or `16U6_ALIGN16B` tensor map writes
(`Swizzle.align16`; cuda.h: "16 x U4 packed values ... aligned as 16 bytes", with 8 bytes of
gap after each 8 of data, and 16 x U6 in 12 bytes and a gap of 4) take a byte each in the
layout: each 16 elements a 16-byte unit, their data packed at its start (CUTLASS allocates
such SMEM as `uint8_t`, one a value: `SmemAllocTypeA` in its sm_100/sm_120 f8f6f4
collectives). The swizzle then moves whole units, as for any 8-bit type.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Protocol, Self, TypeVar

UNSWIZZLED = 16
"""The swizzle value that means none (Mosaic GPU's convention)."""

UNIT_BYTES = 16
"""A swizzle moves 16-byte units; it never splits one."""


class Offset(Protocol):
    """What the layout computes with: an int, or a value whose operators emit code."""

    def __add__(self, other: Self | int, /) -> Self: ...
    def __mul__(self, other: int, /) -> Self: ...
    def __xor__(self, other: Self, /) -> Self: ...
    def __and__(self, other: int, /) -> Self: ...
    def __rshift__(self, other: int, /) -> Self: ...


T = TypeVar("T", bound=Offset | int)


ATOMS = (UNIT_BYTES, 32, 64)
"""The units a swizzle permutes: 16 bytes (every span), or 32 or 64 (128-byte span only)."""


class Swizzle(int):
    """A swizzle: its span in bytes (the int: 16 for none, 32, 64, 128), the unit it permutes
    (`atom`: 16, or 32 or 64 bytes under a 128-byte span) and, for atom 32, whether odd rows
    also swap the 8-byte halves of each 16-byte unit (`flip`). Everything that depends only on
    the span (row pitch, sizes, the box limit, the alignment) reads it as the int; what depends
    on the permutation (`swizzled`, the tensor map's mode, the matrix descriptor's layout type)
    reads `atom` and `flip`, which a plain int has as `atom_of` and `flip_of` say."""

    atom: int
    flip: bool
    align16: bool
    """Packed sub-byte elements laid out 16 to a 16-byte unit (a byte each: `layout_bits`)."""

    def __new__(
        cls, span: int, atom: int = UNIT_BYTES, flip: bool = False, align16: bool = False
    ) -> Self:
        self = super().__new__(cls, span)
        self.atom, self.flip, self.align16 = atom, flip, align16
        return self

    def __repr__(self) -> str:
        return f"Swizzle({int(self)}, atom={self.atom}, flip={self.flip}, align16={self.align16})"

    def __str__(self) -> str:  # the span, as a plain int prints (messages, IR text)
        return str(int(self))

    def __reduce__(self):  # pickled as itself (the int's own would drop the rest)
        return (Swizzle, (int(self), self.atom, self.flip, self.align16))


def atom_of(swizzle: int) -> int:
    """The unit a swizzle permutes: 16 bytes unless it is a `Swizzle` with a larger atom."""
    return getattr(swizzle, "atom", UNIT_BYTES)


def flip_of(swizzle: int) -> bool:
    return getattr(swizzle, "flip", False)


def align16_of(swizzle: int) -> bool:
    return getattr(swizzle, "align16", False)


def layout_bits(bits: int, swizzle: int) -> int:
    """The bits an element takes in the layout: its own, or 8 for packed elements 16 to a
    16-byte unit (`Swizzle.align16`)."""
    return 8 if align16_of(swizzle) else bits


def kept_bytes(swizzle: int) -> int:
    """The aligned run of bytes a swizzle keeps together: 16 (it moves whole 16-byte units),
    8 under the flip (odd rows swap the halves of each unit)."""
    return UNIT_BYTES // 2 if flip_of(swizzle) else UNIT_BYTES


def mode_name(swizzle: int) -> str:
    """The `CU_TENSOR_MAP_SWIZZLE_*` name (without its prefix) of a swizzle."""
    if swizzle == UNSWIZZLED:
        return "NONE"
    atom = atom_of(swizzle)
    if atom == UNIT_BYTES:
        return f"{int(swizzle)}B"
    return f"{int(swizzle)}B_ATOM_{atom}B" + ("_FLIP_8B" if flip_of(swizzle) else "")


def row_bytes(shape: Sequence[int], bits: int) -> int:
    """The data bytes of one innermost row (sub-byte elements packed)."""
    return (shape[-1] * bits + 7) // 8


def row_pitch(data_bytes: int, swizzle: int) -> int:
    """The bytes one row occupies: its data, rounded up to a multiple of the swizzle span."""
    if swizzle == UNSWIZZLED:
        return data_bytes
    return -(-data_bytes // swizzle) * swizzle


def dim_strides(shape: Sequence[int], bits: int, swizzle: int) -> tuple[int, ...]:
    """The byte distance between neighbours along each dim but the innermost, before the
    swizzle (which leaves offsets that are multiples of the period in place)."""
    if not shape:
        return ()
    pitch = row_pitch(row_bytes(shape, layout_bits(bits, swizzle)), swizzle)
    return tuple(prod(shape[i + 1 : -1]) * pitch for i in range(len(shape) - 1))


def size_bytes(shape: Sequence[int], bits: int, swizzle: int) -> int:
    """The bytes the buffer occupies."""
    bits = layout_bits(bits, swizzle)
    if not shape:
        return (bits + 7) // 8
    return prod(shape[:-1]) * row_pitch(row_bytes(shape, bits), swizzle)


def swizzled(offset: T, swizzle: int) -> T:
    """The byte offset a swizzle of `swizzle` bytes stores linear byte offset `offset` at."""
    if swizzle == UNSWIZZLED:
        return offset
    atom = atom_of(swizzle)
    if atom == UNIT_BYTES:
        mask = (swizzle // UNIT_BYTES - 1) << 4
        return offset ^ ((offset >> 3) & mask)
    # Under a 128-byte span: the atom number within the 128 bytes (bits log2(atom)..6) XOR
    # the same number of row bits from bit 7 (atom 32: Swizzle<2,5,2>; atom 64: <1,6,1>).
    shift = atom.bit_length() - 1
    moved = offset ^ ((offset >> (7 - shift)) & ((128 // atom - 1) << shift))
    if flip_of(swizzle):
        moved = moved ^ ((offset >> 4) & 8)  # odd rows: swap the 8-byte halves
    return moved


def element_offset(indices: Sequence[T], shape: Sequence[int], bits: int, swizzle: int) -> T | int:
    """The byte offset of element `indices` in the buffer (elements of whole bytes)."""
    assert bits % 8 == 0, "sub-byte elements have no byte offset of their own"
    strides = (*dim_strides(shape, bits, swizzle), bits // 8)
    linear: T | int = 0
    for index, stride in zip(indices, strides, strict=True):
        linear = index * stride + linear  # type: ignore[operator]
    return swizzled(linear, swizzle)
