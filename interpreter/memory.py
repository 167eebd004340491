"""The memories a kernel addresses: GMEM arrays (the caller's numpy arrays), each CTA's
SMEM (bytes, laid out as the dialect's layout says: swizzled buffers store element
(i, j) where `copy_dialect.layout.element_offset` puts it, so a thread that computes the
wrong address reads the wrong data, as on the GPU), and the refs that name them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType

from copy_dialect import layout
from copy_dialect.memory import bitwidth, smem_alignment, smem_bytes, swizzle_of
from interpreter.races import AccessLog
from interpreter.values import storage_dtype

SMEM_BYTES = 232_448
"""The most SMEM a CTA can have (sm_90 and sm_100: 227 KiB)."""


@dataclass(eq=False)
class GmemRef:
    """A GMEM array: the caller's (a kernel argument), or a view of one."""

    array: np.ndarray
    """In storage dtype (bf16: uint16)."""
    type: MemRefType
    name: str
    flat: np.ndarray | None = None
    """The caller's array it lies in, flat (itself for an argument): what a tensor map's
    global address points into."""
    offset: int = 0
    """Its first element's index in `flat`."""

    def __post_init__(self) -> None:
        if self.flat is None:
            self.flat = self.array.reshape(-1)  # the caller's arrays are contiguous copies

    @property
    def element_type(self) -> Any:
        return self.type.element_type

    def address(self, indices: list[int]) -> int:
        """The index in `flat` of element `indices`."""
        item = self.array.itemsize
        return self.offset + sum(
            i * s // item for i, s in zip(indices, self.array.strides, strict=True)
        )


def strided_view(
    flat: np.ndarray, offset: int, sizes: list[int], strides: list[int]
) -> np.ndarray | None:
    """The view of `flat` from element `offset` with `sizes` and element `strides`; None
    where it would reach outside `flat`."""
    last = offset + sum((n - 1) * st for n, st in zip(sizes, strides, strict=True) if n > 0)
    if offset < 0 or (min(sizes, default=1) > 0 and (last >= flat.size or last < 0)):
        return None
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[offset:], shape=sizes, strides=[st * item for st in strides], writeable=True
    )


class Smem:
    """One CTA's shared memory: its bytes, the next free offset and the access log."""

    def __init__(self) -> None:
        self.bytes = np.zeros(SMEM_BYTES, dtype=np.uint8)
        self.top = 0
        self.log = AccessLog()

    def allocate(self, t: MemRefType) -> SmemRef:
        swizzle = swizzle_of(t)
        align = smem_alignment(swizzle)
        base = -(-self.top // align) * align
        size = smem_bytes(t.get_shape(), t.element_type, swizzle)
        if base + size > SMEM_BYTES:
            raise MemoryError(f"SMEM: {base + size} bytes, more than the {SMEM_BYTES} a CTA has")
        self.top = base + size
        return SmemRef(self, base, t)


@dataclass(eq=False)
class SmemRef:
    """An SMEM buffer of a CTA: its base offset and its memref type (shape, element type,
    swizzle)."""

    smem: Smem
    base: int
    type: MemRefType

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.type.get_shape())

    @property
    def element_type(self) -> Any:
        return self.type.element_type

    @property
    def swizzle(self) -> int:
        return swizzle_of(self.type)

    @property
    def bits(self) -> int:
        return bitwidth(self.element_type) or 8

    def offsets(self, indices: list[Any]) -> Any:
        """The SMEM byte offsets of elements `indices` (ints or arrays of them)."""
        return self.base + layout.element_offset(indices, self.shape, self.bits, self.swizzle)

    def slot_offsets(
        self, slot: tuple[int, ...], box: tuple[int, ...], extra: int = 0
    ) -> np.ndarray:
        """The byte offset of each element of a box (row-major) that lies `extra` bytes into
        the slot `slot` of the leading dims, the box dense in its own layout: where a TMA
        copy puts it (a multicast share lies `r * share bytes` into its slot). The swizzle
        applies to the whole linear offset, as the hardware's to the address bits."""
        bits, swizzle = self.bits, self.swizzle
        strides = (*layout.dim_strides(self.shape, bits, swizzle), bits // 8)
        linear = sum(s * st for s, st in zip(slot, strides, strict=False)) + extra
        box_strides = (*layout.dim_strides(box, bits, swizzle), bits // 8)
        grid = np.indices(box).reshape(len(box), -1)
        for g, st in zip(grid, box_strides, strict=True):
            linear = linear + g * st
        return self.base + np.asarray(layout.swizzled(np.asarray(linear), swizzle), dtype=np.int64)


def element_bytes(offsets: np.ndarray, size: int) -> np.ndarray:
    """Every byte of elements of `size` bytes at `offsets` (sorted by element)."""
    return (np.asarray(offsets, dtype=np.int64).reshape(-1)[:, None] + np.arange(size)).reshape(-1)


def units(offsets: np.ndarray, size: int, unit: int) -> np.ndarray:
    """The `unit`-byte units (sorted, unique) that elements of `size` bytes at `offsets`
    touch."""
    flat = np.asarray(offsets, dtype=np.int64).reshape(-1)
    if size > unit:
        flat = (flat[:, None] + np.arange(0, size, unit)).reshape(-1)
    return np.unique(flat // unit)


def read_smem(smem: Smem, offsets: np.ndarray, dtype: np.dtype) -> np.ndarray:
    raw = smem.bytes[element_bytes(offsets, dtype.itemsize)]
    return raw.view(dtype).reshape(np.shape(offsets))


def write_smem(smem: Smem, offsets: np.ndarray, values: np.ndarray, dtype: np.dtype) -> None:
    data = np.ascontiguousarray(np.asarray(values, dtype=dtype).reshape(-1)).view(np.uint8)
    smem.bytes[element_bytes(offsets, dtype.itemsize)] = data


def gmem_dtype(ref: GmemRef) -> np.dtype:
    return storage_dtype(ref.element_type)
