"""Tensor-core operands and arithmetic, as pure functions: where an SMEM matrix descriptor's
bits place each element of the operand tile it describes, what the elements' bytes are as
numbers, the accumulator's fragment layout and the product itself. `interpreter.ops_mma`
runs the ops on them.

**The decode** (`operand_offsets`) reads nothing but the descriptor's bits (PTX ISA,
"Matrix Descriptor Format" of wgmma, and tcgen05's "Shared Memory Descriptor"): the start
address (bits 0-13, in 16-byte units), LBO (16-29) and SBO (32-45) in 16-byte units, the
base offset (49-51) and the swizzle (62-63 for wgmma: 0 none, 1 128B, 2 64B, 3 32B; 61-63
for tcgen05: 0 none, 2 128B, 4 64B, 6 32B). Element (r, c) of an operand (r along M or N,
c along K; T = 16 bytes of elements, W = S / 16 for a swizzle of S bytes) lies, before the
swizzle, at the start address plus the offset the ISA's canonical layout gives ("Shared
Memory Matrix Layout", in CuTe notation over elements):

| major | swizzle | canonical layout | byte offset of (r, c) |
|---|---|---|---|
| K | none | ((8,m),(T,2k)):((1T,SBO),(1,LBO)) | (r%8)16 + (r/8)SBO + (c%T)e + (c/T)LBO |
| K | S | ((8,m),(T,2k)):((WT,SBO),(1,T)) | (r%8)S + (r/8)SBO + c e |
| MN | none | ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)) | (r%T)e + (r/T)SBO + (c%8)16 + (c/8)LBO |
| MN | S | ((T,W,m),(8,k)):((1,T,LBO),(WT,SBO)) | (r%WT)e + (r/WT)LBO + (c%8)S + (c/8)SBO |

(e: bytes of an element). The swizzle then acts on the address itself (CUTLASS's
`Swizzle<log2 W, 4, 3>`): bits 4.. (log2 W of them) XOR bits 7.., the same function of the
absolute SMEM address that TMA applies when it writes a swizzled box, so a descriptor
advanced along K inside an atom (its start address plus 32 bytes >> 4) reads the next 32
bytes of each row. A nonzero base offset (a pattern that does not start at its repeat's
boundary: the ISA gives the field's formula, not how the hardware applies it) and the
tcgen05 forms with 32-byte atoms or absolute LBO are not modelled (`DecodeError`).

**The arithmetic** (`mma`): every element is converted exactly to f32 (f16, bf16, e4m3,
e5m2; a tf32 operand is its f32 with the low 13 bits of the significand dropped), negated
where scale-a/b is -1; each product is rounded to f32 (exact for 16- and 8-bit types, whose
significands multiply in 22 bits or fewer, unless it overflows or underflows f32); D starts
from the accumulator (scale-d 1) or 0 and adds the products in k order, rounding to f32
after each add. The GPU does not specify its order or its internal precision, so a GPU
result may differ in the last bits: compare a GEMM with the GPU under a tolerance. Integer
operands (s8, u8) accumulate exactly and wrap to s32 (or, with satfinite, clamp).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from copy_dialect.layout import Swizzle, atom_of, swizzled

UNIT = 16
"""Bytes of a core-matrix row, and of the descriptor's offset units."""

WGMMA_SWIZZLE = {0: 16, 1: 128, 2: 64, 3: 32}
"""wgmma's 2-bit layout field (bits 62-63): the swizzle in bytes (16: none)."""

TCGEN05_SWIZZLE = {0: 16, 2: 128, 4: 64, 6: 32}
BASE32B = 1
"""tcgen05's layout type of the 128B swizzle with 32-byte atoms (`SWIZZLE_128B_BASE32B`)."""
"""tcgen05's 3-bit layout field (bits 61-63); 1 (128B with 32-byte atoms) is not modelled."""

WARPGROUP = 128


class DecodeError(Exception):
    """A descriptor the interpreter does not decode (a form it does not model)."""


@dataclass(frozen=True)
class Fields:
    """A descriptor's fields, in bytes."""

    start: int
    leading: int
    stride: int
    base_offset: int
    swizzle: int


def fields(desc: int, tcgen05: bool = False) -> Fields:
    """The fields of the 64-bit descriptor `desc` (either form)."""
    desc &= (1 << 64) - 1
    unit = 0x3FFF
    start, leading, stride = (((desc >> b) & unit) * UNIT for b in (0, 16, 32))
    base = (desc >> 49) & 0x7
    if not tcgen05:
        return Fields(start, leading, stride, base, WGMMA_SWIZZLE[desc >> 62])
    if (desc >> 46) & 0x7 != 1:
        raise DecodeError(
            f"descriptor {desc:#018x} is not tcgen05's: bits 46-48 are "
            f"{(desc >> 46) & 0x7:#05b}, not the fixed 0b001"
        )
    if (desc >> 52) & 1:
        raise DecodeError(
            "a tcgen05 descriptor with an absolute LBO (bit 52) is not modelled by the interpreter"
        )
    layout = desc >> 61
    if layout == BASE32B:  # 128B with 32-byte atoms: CuTe's Swizzle<2,5,2>
        return Fields(start, leading, stride, base, Swizzle(128, 32))
    if layout not in TCGEN05_SWIZZLE:
        raise DecodeError(f"tcgen05 layout {layout} (an invalid value) is not valid")
    return Fields(start, leading, stride, base, TCGEN05_SWIZZLE[layout])


def swizzle_address(address: np.ndarray, swizzle: int) -> np.ndarray:
    """Swizzle<log2(S/16), 4, 3> of byte addresses: bits 4.. XOR bits 7.. (the 32-byte atom's
    Swizzle<2,5,2>: `copy_dialect.layout`)."""
    if atom_of(swizzle) != UNIT:
        return swizzled(address, swizzle)
    if swizzle == UNIT:
        return address
    mask = swizzle // UNIT - 1
    return address ^ (((address >> 7) & mask) << 4)


def operand_offsets(
    desc: int, k_major: bool, rows: int, k: int, bits: int, tcgen05: bool = False
) -> np.ndarray:
    """The SMEM byte address of each element (r, c) of a `rows` x `k` operand (r along M or
    N, c along K) that descriptor `desc` describes: int64 array (rows, k)."""
    f = fields(desc, tcgen05)
    if f.base_offset and f.swizzle != UNIT:
        raise DecodeError(
            f"a descriptor with base offset {f.base_offset} is not modelled by the interpreter "
            "(every tile of copy.matrix_descriptor starts at its swizzle's repeat: 0)"
        )
    e = bits // 8
    per = UNIT // e  # T: elements in 16 bytes
    r = np.arange(rows, dtype=np.int64)[:, None]
    c = np.arange(k, dtype=np.int64)[None, :]
    s = f.swizzle
    # K rows an atom holds: 8 (a core matrix), 4 for the 32-byte atom (MN-major only: CUTLASS's
    # ((8,n),(4,k)):((1,LBO),(4,SBO)) in 16-byte units)
    group = 4 if atom_of(s) != UNIT else 8
    if k_major and group != 8:
        raise DecodeError("a K-major operand of 32-byte swizzle atoms is not valid (CUTLASS)")
    if k_major and s == UNIT:
        off = (r % 8) * UNIT + (r // 8) * f.stride + (c % per) * e + (c // per) * f.leading
    elif k_major:
        off = (r % 8) * s + (r // 8) * f.stride + c * e
    elif s == UNIT:
        off = (r % per) * e + (r // per) * f.stride + (c % 8) * UNIT + (c // 8) * f.leading
    else:
        atom = per * (s // UNIT)  # elements of MN in one atom row
        off = (r % atom) * e + (r // atom) * f.leading + (c % group) * s + (c // group) * f.stride
    return swizzle_address(f.start + off, s)


# --- elements --------------------------------------------------------------------------------


@cache
def _f8_table(exponent: int, mantissa: int, finite: bool) -> np.ndarray:
    """The f32 value of each of the 256 codes of an 8-bit float (e4m3fn: `finite`, only
    S.1111.111 is NaN; e5m2: IEEE-like, infinities and NaNs at exponent 31)."""
    bias = (1 << (exponent - 1)) - 1
    out = np.zeros(256, np.float64)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        ex = (code >> mantissa) & ((1 << exponent) - 1)
        man = code & ((1 << mantissa) - 1)
        top = (1 << exponent) - 1
        if finite and ex == top and man == (1 << mantissa) - 1:
            out[code] = np.nan
        elif not finite and ex == top:
            out[code] = sign * np.inf if man == 0 else np.nan
        elif ex == 0:
            out[code] = sign * man * 2.0 ** (1 - bias - mantissa)
        else:
            out[code] = sign * (1 + man / (1 << mantissa)) * 2.0 ** (ex - bias)
    return out.astype(np.float32)


ELEMENT_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8}


def elements(raw: np.ndarray, kind: str) -> np.ndarray:
    """Bytes (..., bytes per element) as the numbers the tensor core multiplies: float32
    for the float types, int64 for s8/u8."""
    flat = np.ascontiguousarray(raw)
    if kind == "f16":
        return flat.view(np.float16)[..., 0].astype(np.float32)
    if kind == "bf16":
        return (flat.view(np.uint16)[..., 0].astype(np.uint32) << 16).view(np.float32)
    if kind == "tf32":
        return (flat.view(np.uint32)[..., 0] & np.uint32(0xFFFFE000)).view(np.float32)
    if kind == "e4m3":
        return _f8_table(4, 3, True)[flat[..., 0]]
    if kind == "e5m2":
        return _f8_table(5, 2, False)[flat[..., 0]]
    if kind == "s8":
        return flat.view(np.int8)[..., 0].astype(np.int64)
    if kind == "u8":
        return flat[..., 0].astype(np.int64)
    raise DecodeError(f"wgmma operands of type {kind} are not modelled by the interpreter")


def read_operand(smem: np.ndarray, offsets: np.ndarray, kind: str) -> np.ndarray:
    """The elements at `offsets` (from `operand_offsets`) of SMEM bytes `smem`."""
    size = ELEMENT_BITS[kind] // 8
    raw = smem[offsets[..., None] + np.arange(size)]
    return elements(raw, kind)


# --- the accumulator ---------------------------------------------------------------------------


@cache
def accumulator_fragment(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of D (64 x n) that register i of thread t of a warpgroup holds: two int
    arrays (128, n / 2). PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk*",
    accumulator D: warp w holds rows 16w..16w+15; lane l, register i = 4b + 2h + v holds
    row 16w + 8h + l / 4, column 8b + 2 (l % 4) + v."""
    t = np.arange(WARPGROUP)[:, None]
    i = np.arange(n // 2)[None, :]
    warp, lane = t // 32, t % 32
    b, h, v = i // 4, (i // 2) % 2, i % 2
    return 16 * warp + 8 * h + lane // 4, 8 * b + 2 * (lane % 4) + v


def mma(
    a: np.ndarray,
    b: np.ndarray,
    d: np.ndarray | None,
    integer: bool = False,
    satfinite: bool = False,
) -> np.ndarray:
    """D = A B^T + D (d None: + 0) for A (M, K), B (N, K) of `elements`: float32 with the
    products rounded to f32 and added in k order, rounding after each add; or, `integer`,
    int32 from the exact sum (wrapped, or clamped with `satfinite`)."""
    m, n = a.shape[0], b.shape[0]
    if integer:
        exact = a @ b.T + (0 if d is None else d.astype(np.int64))
        if satfinite:
            return np.clip(exact, -(2**31), 2**31 - 1).astype(np.int32)
        return exact.astype(np.int64).astype(np.uint32).view(np.int32)
    acc = np.zeros((m, n), np.float32) if d is None else d.astype(np.float32, copy=True)
    for k in range(a.shape[1]):
        acc = acc + a[:, k, None] * b[None, :, k]  # f32 product, f32 sum: each rounded
    return acc
