"""copy.ldmatrix and copy.stmatrix in the interpreter, bit-exact against a numpy model of the
PTX ISA's fragment layouts (written here from the ISA's formulas, apart from the
interpreter's table): every b16 form (x1/x2/x4, trans or not) and the 8-bit forms
(ldmatrix m16n16 x1/x2 .trans, stmatrix m16n8 x1/x2/x4 .trans), in unswizzled and swizzled
SMEM, each warp's threads addressing rows at scattered columns."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from copy_tools.universe import make_context

WARPS = 2
THREADS = 32 * WARPS
COLUMNS = 64
"""Elements of a buffer row (128 bytes of f16, 64 of i8): every swizzle's span fits."""

DTYPES = {"f16": np.float16, "bf16": np.uint16, "i8": np.int8}


def model_rows(src: np.ndarray, column: np.ndarray, naddr: int) -> np.ndarray:
    """The 16-byte rows each warp's first `naddr` threads address: (warps, naddr, 16) bytes.
    Thread s addresses buffer row s (its warp's copy of src) at `column[s]`."""
    per = 16 // src.itemsize
    out = np.zeros((WARPS, naddr, 16), np.uint8)
    for w in range(WARPS):
        for s in range(naddr):
            row = src[w * 32 + s, column[s] : column[s] + per]
            out[w, s] = np.ascontiguousarray(row).view(np.uint8)
    return out


def model_fragment(shape: str, num: int, trans: bool, t: int, reg: int, k: int) -> tuple:
    """(row, byte) that byte k of register reg of lane t holds, from the ISA's formulas."""
    group, tid = t // 4, t % 4  # groupID, threadID_in_group
    if shape == "m8n8" and not trans:
        # each thread holds elements 2*tid, 2*tid+1 of row groupID of each matrix
        return 8 * reg + group, 4 * tid + k
    if shape == "m8n8":
        # transposed: element groupID of rows 2*tid, 2*tid+1
        return 8 * reg + 2 * tid + k // 2, 2 * group + k % 2
    if shape == "m16n16":
        # 4 consecutive rows (columns of the transposed matrix) 4*tid.. across columns
        # groupID and groupID+8; register 2m holds rows 4*tid, +1, register 2m+1 rows +2, +3
        m, q = divmod(reg, 2)
        return 16 * m + 4 * tid + 2 * q + k % 2, group + 8 * (k // 2)
    # m16n8 .trans: rows (columns of the 16x8 matrix) 2*tid, 2*tid+1 at columns
    # groupID (bytes 0, 1) and groupID + 8 (bytes 2, 3)
    return 8 * reg + 2 * tid + k % 2, group + 8 * (k // 2)


FORMS = [
    *[("ldmatrix", "m8n8", n, tr) for n in (1, 2, 4) for tr in (False, True)],
    *[("stmatrix", "m8n8", n, tr) for n in (1, 2, 4) for tr in (False, True)],
    *[("ldmatrix", "m16n16", n, True) for n in (1, 2)],
    *[("stmatrix", "m16n8", n, True) for n in (1, 2, 4)],
]
ROWS = {"m8n8": 8, "m16n16": 16, "m16n8": 8}
REGS = {"m8n8": 1, "m16n16": 2, "m16n8": 1}


def kernel(op: str, shape: str, num: int, trans: bool, dtype: str, swizzle: int) -> str:
    regs = num * REGS[shape]
    per = 16 // np.dtype(DTYPES[dtype]).itemsize
    n = regs * 4 // np.dtype(DTYPES[dtype]).itemsize
    target = "sm_90a" if shape == "m8n8" else "sm_100a"
    smem = f"memref<{THREADS}x{COLUMNS}x{dtype}, #copy.smem<swizzle = {swizzle}>>"
    gmem = f"memref<{THREADS}x{COLUMNS}x{dtype}>"
    attributes = f"gpu.kernel, gpu.known_block_size = array<i32: {THREADS}, 1, 1>"
    form = ("" if shape == "m8n8" else f" shape {shape}") + f" num {num}"
    form += " trans" if trans else ""
    if op == "ldmatrix":
        body = f"""
    %r = copy.ldmatrix %buf[%tid, %c]{form} : {smem} -> vector<{n}x{dtype}>
    vector.store %r, %regs[%tid, %c0] : memref<{THREADS}x{n}x{dtype}>, vector<{n}x{dtype}>"""
    else:
        body = f"""
    %v = vector.load %regs[%tid, %c0] : memref<{THREADS}x{n}x{dtype}>, vector<{n}x{dtype}>
    copy.stmatrix %v, %buf[%tid, %c]{form} : vector<{n}x{dtype}>, {smem}
    gpu.barrier
    scf.for %j = %c0 to %cols step %c1 {{
      %y = memref.load %buf[%tid, %j] : {smem}
      memref.store %y, %src[%tid, %j] : memref<{THREADS}x{COLUMNS}x{dtype}>
    }}"""
    return f"""
builtin.module attributes {{copy.target = #copy.target<"{target}">}} {{
  func.func @k(%src: {gmem}, %regs: memref<{THREADS}x{n}x{dtype}>) attributes {{{attributes}}} {{
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c32 = arith.constant 32 : index
    %per = arith.constant {per} : index
    %units = arith.constant {COLUMNS // per} : index
    %cols = arith.constant {COLUMNS} : index
    %buf = copy.alloc_smem : {smem}
    scf.for %j = %c0 to %cols step %c1 {{
      %x = memref.load %src[%tid, %j] : memref<{THREADS}x{COLUMNS}x{dtype}>
      memref.store %x, %buf[%tid, %j] : {smem}
    }}
    gpu.barrier
    %lane = arith.remui %tid, %c32 : index
    %q = arith.muli %lane, %c3 : index
    %u = arith.remui %q, %units : index
    %c = arith.muli %u, %per : index{body}
    func.return
  }}
}}
"""


def data(dtype: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=(*shape[:-1], shape[-1] * np.dtype(DTYPES[dtype]).itemsize))
    values = raw.astype(np.uint8).view(DTYPES[dtype])
    if dtype == "bf16":  # bits of finite values: registers hold bf16 as f32, NaNs canonical
        values = values & np.uint16(0xBFFF)
    return values


def dtype_of(shape: str, num: int) -> str:
    """The element type a form is tested with (bf16 for x2, to cover both 16-bit floats)."""
    return {"m8n8": "f16" if num != 2 else "bf16"}.get(shape, "i8")


def case(op: str, shape: str, num: int, trans: bool, swizzle: int):
    """The kernel of a form, its two arrays (the buffer's source, the registers) and the
    arrays the numpy model says the kernel leaves (as bytes)."""
    dtype = dtype_of(shape, num)
    item = np.dtype(DTYPES[dtype]).itemsize
    per = 16 // item
    regs = num * REGS[shape]
    n = regs * 4 // item
    src = data(dtype, (THREADS, COLUMNS), 1)
    registers = data(dtype, (THREADS, n), 2)
    lane = np.arange(32)
    column = ((lane * 3) % (COLUMNS // per)) * per
    naddr = num * ROWS[shape]
    rows = model_rows(src, column, naddr)
    reg_bytes = np.ascontiguousarray(registers).view(np.uint8).reshape(THREADS, -1).copy()
    src_bytes = np.ascontiguousarray(src).view(np.uint8).copy()
    for w in range(WARPS):
        for t in range(32):
            for b in range(4 * regs):
                r, k = model_fragment(shape, num, trans, t, b // 4, b % 4)
                if op == "ldmatrix":
                    reg_bytes[w * 32 + t, b] = rows[w, r, k]
                else:
                    rows[w, r, k] = reg_bytes[w * 32 + t, b]
    if op == "stmatrix":
        for w in range(WARPS):
            for s in range(naddr):
                start = column[s] * item
                src_bytes[w * 32 + s, start : start + 16] = rows[w, s]
    text = kernel(op, shape, num, trans, dtype, swizzle)
    return text, [src, registers], [src_bytes, reg_bytes]


def as_bytes(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(np.uint8).reshape(array.shape[0], -1)


@pytest.mark.parametrize("swizzle", [16, 64, 128])
@pytest.mark.parametrize(("op", "shape", "num", "trans"), FORMS, ids=str)
def test_fragment_is_the_isa_layout(op, shape, num, trans, swizzle):
    if swizzle == 128 and dtype_of(shape, num) == "i8":
        pytest.skip("a 64-byte row of i8 has no 128-byte swizzle span")
    text, arrays, expected = case(op, shape, num, trans, swizzle)
    module = Parser(make_context(), text).parse_module()
    run = interpreter.run(module, *(a.copy() for a in arrays), grid=(1, 1))
    assert run.violations == [], [str(v) for v in run.violations]
    for got, want in zip(run.arrays, expected, strict=True):
        assert np.array_equal(as_bytes(got), want)


def test_a_warp_that_only_partly_reaches_ldmatrix_stops():
    text = kernel("ldmatrix", "m8n8", 1, False, "f16", 16).replace(
        "    %r = copy.ldmatrix",
        "    %half = arith.constant 16 : index\n"
        "    %low = arith.cmpi ult, %lane, %half : index\n"
        "    scf.if %low {\n    %r = copy.ldmatrix",
    )
    text = text.replace("    func.return", "    }\n    func.return")
    module = Parser(make_context(), text).parse_module()
    src = data("f16", (THREADS, COLUMNS), 1)
    run = interpreter.run(module, src, data("f16", (THREADS, 2), 2), grid=(1, 1))
    assert [v.rule for v in run.violations] == ["P10"]
    assert "of warp 0 only threads 0-15 reach it" in run.violations[0].message
