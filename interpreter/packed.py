"""Packed 4-bit elements (FP4, `f4E2M1FN`) in the interpreter: arrays of them are their bytes,
two elements a byte, as on the GPU, and a TMA copy of them (a `16U4_ALIGN8B` map, packed in
SMEM as in GMEM: `copy_dialect.blackwell_maps`) moves those bytes.

A kernel argument `memref<M x K x f4E2M1FN>` takes a `uint8` array of shape `[M, K / 2]`
(`pack_fp4` makes one from 4-bit codes, element `2i` in the low nibble of byte `i`; the copy
moves bytes and does not depend on that order), and an SMEM buffer of them is its bytes:
both refs are held as `i8` refs with the innermost dim halved (`byte_type`). A copy of them
runs as the copy of bytes (`byte_form`: the innermost box dim and coordinate halved). A box
that starts at an odd element splits bytes: the interpreter does not model it (the driver's
documentation does not say what TMA does there); nor thread accesses of 4-bit elements
(`check_thread_access`), which the lowering refuses too."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from xdsl.dialects.builtin import Float4E2M1FNType, MemRefType, i8
from xdsl.ir import Attribute, Operation

from interpreter.memory import GmemRef
from interpreter.values import InterpretError

PACKING = 2
"""Elements a byte."""


def is_packed(t: Attribute) -> bool:
    return isinstance(t, Float4E2M1FNType)


def byte_type(t: MemRefType) -> MemRefType:
    """`t` as bytes: i8, the innermost dim halved (a dynamic one stays dynamic)."""
    shape = list(t.get_shape())
    if shape and shape[-1] >= 0:
        shape[-1] //= PACKING
    return MemRefType(i8, shape, t.layout, t.memory_space)


def pack_fp4(codes: np.ndarray) -> np.ndarray:
    """4-bit codes (0..15, the innermost dim even) as the bytes of an FP4 array."""
    codes = np.asarray(codes, dtype=np.uint8)
    return (codes[..., 0::2] & 0xF) | ((codes[..., 1::2] & 0xF) << 4)


def unpack_fp4(packed: np.ndarray) -> np.ndarray:
    """The 4-bit codes of an FP4 array's bytes (`pack_fp4`'s inverse)."""
    packed = np.asarray(packed, dtype=np.uint8)
    codes = np.stack([packed & 0xF, packed >> 4], axis=-1)
    return codes.reshape(*packed.shape[:-1], packed.shape[-1] * PACKING)


def bind_packed(t: MemRefType, array: Any, index: int) -> GmemRef:
    """A kernel argument of packed elements: its bytes, `[..., K / 2]` for `[..., K]`."""
    data = np.asarray(array)
    if data.dtype != np.uint8:
        raise ValueError(
            f"argument {index}: expected the bytes of {t.element_type} elements (uint8, two "
            f"a byte: interpreter.packed.pack_fp4), got {data.dtype}"
        )
    want = byte_type(t).get_shape()
    if len(want) != data.ndim or any(
        s >= 0 and s != n for s, n in zip(want, data.shape, strict=False)
    ):
        raise ValueError(
            f"argument {index}: expected the bytes of {t} (shape {list(want)}), got {data.shape}"
        )
    return GmemRef(data, byte_type(t), f"argument {index}")


def check_thread_access(op: Operation, t: Attribute) -> None:
    if is_packed(t):
        raise InterpretError(
            op, f"a thread access of {t} elements (two a byte) is not modelled by the interpreter"
        )


def byte_form(op: Operation, g: Any, origin: list[int]) -> tuple[Any, list[int]]:
    """A copy of packed elements as the copy of their bytes: the geometry and the box origin
    with the innermost dim in bytes (the refs are bytes already)."""
    if origin[-1] % PACKING:
        raise InterpretError(
            op,
            f"a copy of {g.element_type} elements whose box starts at odd element "
            f"{origin[-1]} of the innermost dim splits a byte: not modelled by the interpreter",
        )
    box = (*g.box_shape[:-1], g.box_shape[-1] // PACKING)
    bytes_g = replace(
        g, gmem_type=byte_type(g.gmem_type), smem_type=byte_type(g.smem_type), box_shape=box
    )
    return bytes_g, [*origin[:-1], origin[-1] // PACKING]
