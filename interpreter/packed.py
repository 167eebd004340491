"""Packed 2-, 4- and 6-bit elements (FP4 `f4E2M1FN`, FP6 `f6E2M3FN`/`f6E3M2FN`, a sparse MMA's
i2 metadata) in the interpreter: arrays of them are their bytes, as on the GPU, and a copy of
them (a TMA copy through a 16U4 or 16U6 map: `copy_dialect.blackwell_maps`; a bulk copy of
metadata) moves those bytes.

A kernel argument `memref<M x K x f4E2M1FN>` takes a `uint8` array of shape `[M, K / 2]`, an
FP6 one `[M, 3 K / 4]`, an i2 one `[M, K / 4]` (`pack`/`unpack` convert the codes: value `i`
of a row in bits `[b i, b (i + 1))` of the row's little-endian bit string; the copy moves
bytes and does not depend on that order). An SMEM buffer of them is its bytes too: packed as
in GMEM (`i8` refs, the innermost dim in bytes: `byte_type`), or, under `#copy.smem<align16>`,
each 16 values in a 16-byte unit with their data at its start (8 bytes of FP4, 12 of FP6:
`Align16Ref`). A copy of them runs as the copy of bytes (`byte_form`). Not modelled: a box
that starts inside a byte (the driver's documentation does not say what TMA does there), a
multicast of an align16 buffer, and thread accesses of packed elements
(`check_thread_access`), which the lowering refuses too."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    Float4E2M1FNType,
    Float6E2M3FNType,
    Float6E3M2FNType,
    MemRefType,
    i8,
)
from xdsl.ir import Attribute, Operation

from copy_dialect import layout
from copy_dialect.memory import swizzle_of
from copy_dialect.tmem import SPARSE_METADATA
from interpreter.memory import GmemRef, Smem, SmemRef
from interpreter.values import InterpretError

BITS: dict[type[Attribute], int] = {Float4E2M1FNType: 4, Float6E2M3FNType: 6, Float6E3M2FNType: 6}
"""The packed float types and their bits."""


def bits_of(t: Attribute) -> int | None:
    """The bits of a packed element type (the floats of `BITS`, and a sparse MMA's i2
    metadata), None for another type."""
    if t == SPARSE_METADATA:
        return 2
    return BITS.get(type(t))


def is_packed(t: Attribute) -> bool:
    return bits_of(t) is not None


def byte_type(t: MemRefType) -> MemRefType:
    """`t` as its bytes: i8, the innermost dim in bytes (a dynamic one stays dynamic)."""
    shape = list(t.get_shape())
    if shape and shape[-1] >= 0:
        shape[-1] = shape[-1] * bits_of(t.element_type) // 8
    return MemRefType(i8, shape, t.layout, t.memory_space)


def pack(codes: np.ndarray, bits: int) -> np.ndarray:
    """2-, 4- or 6-bit codes (a row's count a multiple of 8 / gcd(8, bits)) as their bytes."""
    codes = np.asarray(codes, dtype=np.uint8)
    planes = (codes[..., None] >> np.arange(bits, dtype=np.uint8)) & 1
    stream = planes.reshape(*codes.shape[:-1], codes.shape[-1] * bits)
    return np.packbits(stream, axis=-1, bitorder="little")


def unpack(packed: np.ndarray, bits: int) -> np.ndarray:
    """The 2-, 4- or 6-bit codes of a packed array's bytes (`pack`'s inverse)."""
    stream = np.unpackbits(np.asarray(packed, dtype=np.uint8), axis=-1, bitorder="little")
    planes = stream.reshape(*stream.shape[:-1], stream.shape[-1] // bits, bits)
    return (planes << np.arange(bits, dtype=np.uint8)).sum(axis=-1, dtype=np.uint8)


def pack_fp4(codes: np.ndarray) -> np.ndarray:
    """FP4 codes as bytes: element `2i` in the low nibble of byte `i`."""
    return pack(codes, 4)


def unpack_fp4(packed: np.ndarray) -> np.ndarray:
    return unpack(packed, 4)


def bind_packed(t: MemRefType, array: Any, index: int) -> GmemRef:
    """A kernel argument of packed elements: its bytes (`byte_type`)."""
    data = np.asarray(array)
    if data.dtype != np.uint8:
        raise ValueError(
            f"argument {index}: expected the bytes of {t.element_type} elements (uint8, "
            f"packed: interpreter.packed.pack), got {data.dtype}"
        )
    want = byte_type(t).get_shape()
    if len(want) != data.ndim or any(
        s >= 0 and s != n for s, n in zip(want, data.shape, strict=False)
    ):
        raise ValueError(
            f"argument {index}: expected the bytes of {t} (shape {list(want)}), got {data.shape}"
        )
    return GmemRef(data, byte_type(t), f"argument {index}")


@dataclass(eq=False)
class Align16Ref(SmemRef):
    """An align16 SMEM buffer (`#copy.smem<align16>`): its type is its footprint in bytes (a
    byte a value), and a copy's box of data bytes lies at the start of each 16-byte unit
    (`data` bytes of it: 8 for FP4, 12 for FP6)."""

    data: int = 8

    def slot_offsets(
        self, slot: tuple[int, ...], box: tuple[int, ...], extra: int = 0
    ) -> np.ndarray:
        """The offsets of a box of data bytes (the innermost dim `data` bytes a unit)."""
        units = box[-1] // self.data
        full = super().slot_offsets(slot, (*box[:-1], units * layout.UNIT_BYTES), extra)
        return full.reshape(-1, layout.UNIT_BYTES)[:, : self.data].reshape(-1)


def allocate(smem: Smem, t: MemRefType) -> SmemRef:
    """An SMEM buffer of packed elements: its bytes, packed or align16."""
    if not layout.align16_of(swizzle_of(t)):
        return smem.allocate(byte_type(t))
    ref = smem.allocate(t)  # sized and aligned by the layout: a byte a value
    footprint = MemRefType(i8, t.get_shape(), t.layout, t.memory_space)
    data = bits_of(t.element_type) * 16 // 8
    return Align16Ref(smem, ref.base, footprint, data)


def check_thread_access(op: Operation, t: Attribute) -> None:
    if is_packed(t):
        raise InterpretError(
            op, f"a thread access of {t} elements (packed) is not modelled by the interpreter"
        )


def byte_form(op: Operation, g: Any, origin: list[int]) -> tuple[Any, list[int]]:
    """A copy of packed elements as the copy of their bytes: the geometry and the box origin
    with the innermost dim in bytes (the refs are bytes already)."""
    bits = bits_of(g.element_type)
    if origin[-1] * bits % 8:
        raise InterpretError(
            op,
            f"a copy of {g.element_type} elements whose box starts at element {origin[-1]} of "
            "the innermost dim splits a byte: not modelled by the interpreter",
        )
    if layout.align16_of(g.swizzle_bytes) and getattr(g, "multicast", None) is not None:
        raise InterpretError(op, "a multicast of an align16 buffer is not modelled")
    box = (*g.box_shape[:-1], g.box_shape[-1] * bits // 8)
    bytes_g = replace(
        g, gmem_type=byte_type(g.gmem_type), smem_type=byte_type(g.smem_type), box_shape=box
    )
    return bytes_g, [*origin[:-1], origin[-1] * bits // 8]
