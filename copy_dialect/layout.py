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
    pitch = row_pitch(row_bytes(shape, bits), swizzle)
    return tuple(prod(shape[i + 1 : -1]) * pitch for i in range(len(shape) - 1))


def size_bytes(shape: Sequence[int], bits: int, swizzle: int) -> int:
    """The bytes the buffer occupies."""
    if not shape:
        return (bits + 7) // 8
    return prod(shape[:-1]) * row_pitch(row_bytes(shape, bits), swizzle)


def swizzled(offset: T, swizzle: int) -> T:
    """The byte offset a swizzle of `swizzle` bytes stores linear byte offset `offset` at."""
    if swizzle == UNSWIZZLED:
        return offset
    mask = (swizzle // UNIT_BYTES - 1) << 4
    return offset ^ ((offset >> 3) & mask)


def element_offset(indices: Sequence[T], shape: Sequence[int], bits: int, swizzle: int) -> T | int:
    """The byte offset of element `indices` in the buffer (elements of whole bytes)."""
    assert bits % 8 == 0, "sub-byte elements have no byte offset of their own"
    strides = (*dim_strides(shape, bits, swizzle), bits // 8)
    linear: T | int = 0
    for index, stride in zip(indices, strides, strict=True):
        linear = index * stride + linear  # type: ignore[operator]
    return swizzled(linear, swizzle)
