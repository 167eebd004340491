"""Values as the interpreter holds them: one numpy value per SSA value, either a numpy
scalar (the same in every thread: most indices, loop counters, constants) or an array with
one entry per thread of the CTA (thread ids and what is computed from them). numpy's
broadcasting mixes the two; a scalar stays a scalar until a thread-dependent value meets it.

Element types map to numpy dtypes. `bf16` has no numpy dtype: in registers it is a float32
rounded to bf16 after each operation, in memory its 16 bits (`uint16`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatTF32Type,
    IndexType,
    IntegerType,
    VectorType,
)
from xdsl.ir import Attribute

Value = Any
"""A numpy scalar (uniform) or an array of one entry per thread; or, for refs, barrier
groups and tensor maps, the interpreter's object for it (the same in every thread)."""


class InterpretError(Exception):
    """The interpreter cannot run an op as written (an op or a form it does not model, or a
    thread-dependent value where it needs one value for all): the op and why."""

    def __init__(self, op: Any, message: str, note: str | None = None):
        self.op = op
        self.note = note
        super().__init__(message)


class RuleBroken(InterpretError):
    """A run broke a rule it cannot go on past (an index out of range, a warp's op that not
    every thread of the warp reached): the run of its cluster stops, with the violation
    (`rule`: the catalogue id; `bounds` for an access outside an SMEM buffer, a GMEM array
    or a TMEM allocation, which no rule can see before the kernel runs)."""

    def __init__(self, op: Any, rule: str, message: str):
        self.rule = rule
        super().__init__(op, message)


def storage_dtype(t: Attribute) -> np.dtype:
    """The numpy dtype of an element of type `t` (of a vector's elements) in memory."""
    if isinstance(t, VectorType):
        t = t.element_type
    if isinstance(t, IntegerType):
        width = t.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            return np.dtype(f"int{width}")
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, Float32Type | FloatTF32Type):  # (tf32 is stored in 32 bits, as f32)
        return np.dtype(np.float32)
    if isinstance(t, Float16Type):
        return np.dtype(np.float16)
    if isinstance(t, Float64Type):
        return np.dtype(np.float64)
    if isinstance(t, BFloat16Type):
        return np.dtype(np.uint16)
    raise NotImplementedError(f"no numpy dtype for {t}")


def register_dtype(t: Attribute) -> np.dtype:
    """The numpy dtype a value of type `t` (a vector's elements) has in registers (bf16:
    float32)."""
    if isinstance(t, VectorType):
        t = t.element_type
    if isinstance(t, BFloat16Type):
        return np.dtype(np.float32)
    return storage_dtype(t)


def bf16_to_f32(bits: np.ndarray | np.generic) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_tf32(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to tf32 (10 significand bits, the low 13 of the f32 bits cleared),
    to nearest even, Inf and NaN as they are: what a TMA load through a TFLOAT32 tensor map
    leaves in SMEM (docs/hardware.md, "TFLOAT32 maps")."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    wide = bits.astype(np.uint64)
    rounded = ((wide + 0xFFF + ((wide >> 13) & 1)) & ~np.uint64(0x1FFF)).astype(np.uint32)
    special = (bits & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
    return np.where(special, bits, rounded).astype(np.uint32).view(np.float32)


def f32_to_bf16(x: np.ndarray | np.generic) -> np.ndarray:
    """Round-to-nearest-even, as the hardware's cvt.rn.bf16.f32 (NaN stays NaN)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    rounding = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    out = ((bits + rounding) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, np.uint16(0x7FC0), out)


def element(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, VectorType) else t


def merge(mask: np.ndarray, a: Any, b: Any) -> Any:
    """`a` in the threads of `mask`, `b` elsewhere (values of one per thread, or vectors of
    one row per thread)."""
    m = mask if np.ndim(a) < 2 and np.ndim(b) < 2 else mask[:, None]
    return np.where(m, a, b)


def to_register(t: Attribute, stored: Any) -> Any:
    """A value read from memory, as registers hold it."""
    t = element(t)
    if isinstance(t, BFloat16Type):
        return bf16_to_f32(stored)
    return stored


def to_storage(t: Attribute, value: Any) -> Any:
    """A register value, as memory stores it."""
    t = element(t)
    if isinstance(t, BFloat16Type):
        return f32_to_bf16(value)
    return np.asarray(value).astype(storage_dtype(t), copy=False)


def round_register(t: Attribute, value: Any) -> Any:
    """A value computed in a wider type, rounded to `t` as the hardware would (bf16)."""
    if isinstance(element(t), BFloat16Type):
        return bf16_to_f32(f32_to_bf16(value))
    return value


def uniform(value: Value, mask: np.ndarray, op: Any, what: str) -> Any:
    """The one value `value` has in the threads of `mask`, as a Python scalar; an
    InterpretError naming `what` when the threads disagree."""
    if not isinstance(value, np.ndarray) or value.ndim == 0:
        return value.item() if isinstance(value, np.generic | np.ndarray) else value
    active = value[mask]
    if active.size == 0:
        return value[0].item()
    first = active[0]
    if not np.all(active == first):
        raise InterpretError(
            op,
            f"expected {what} to be the same in every thread that reaches it, got "
            f"{sorted(set(active.tolist()))[:8]}",
        )
    return first.item()


def lanes(value: Value, threads: int) -> np.ndarray:
    """`value` as an array with one entry per thread."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return value
    return np.full(threads, value)
