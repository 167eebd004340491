"""Wide thread accesses of swizzled SMEM (rule SV1) in the interpreter: 4-, 8- and 16-byte
vector.load/store that stay inside one 16-byte unit read and write the elements they name,
bit-exact against numpy, for every swizzle; the swizzled place of the unit is the layout's
(copy_dialect.layout), which the lowering addresses too (lit_tests/passes/
swizzled-vector-ptx.mlir), so the two agree on where the bytes are."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from copy_dialect import layout
from copy_tools.universe import make_context

ROWS = 64
DTYPES = {"f32": np.float32, "f16": np.float16, "i8": np.int8}


def kernel(dtype: str, cols: int, lanes: int, swizzle: int, k: int) -> str:
    smem = f"memref<{ROWS}x{cols}x{dtype}, #copy.smem<swizzle = {swizzle}>>"
    gmem = f"memref<{ROWS}x{cols}x{dtype}>"
    vec = f"vector<{lanes}x{dtype}>"
    units = cols // lanes
    out = f"memref<{ROWS}x{lanes}x{dtype}>"
    attributes = f"gpu.kernel, gpu.known_block_size = array<i32: {ROWS}, 1, 1>"
    return f"""
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @k(%src: {gmem}, %out: {out}, %back: {gmem}) attributes {{{attributes}}} {{
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant {ROWS} : index
    %cols = arith.constant {cols} : index
    %lanes = arith.constant {lanes} : index
    %units = arith.constant {units} : index
    %k = arith.constant {k} : index
    %buf = copy.alloc_smem : {smem}
    scf.for %j = %c0 to %cols step %c1 {{
      %x = memref.load %src[%tid, %j] : {gmem}
      memref.store %x, %buf[%tid, %j] : {smem}
    }}
    gpu.barrier
    %next = arith.addi %tid, %c1 : index
    %row = arith.remui %next, %rows : index
    %t = arith.addi %tid, %k : index
    %u = arith.remui %t, %units : index
    %col = arith.muli %u, %lanes : index
    %v = vector.load %buf[%row, %col] : {smem}, {vec}
    vector.store %v, %out[%tid, %c0] : memref<{ROWS}x{lanes}x{dtype}>, {vec}
    gpu.barrier
    vector.store %v, %buf[%tid, %col] : {smem}, {vec}
    gpu.barrier
    scf.for %j = %c0 to %cols step %c1 {{
      %y = memref.load %buf[%tid, %j] : {smem}
      memref.store %y, %back[%tid, %j] : {gmem}
    }}
    func.return
  }}
}}
"""


CASES = [
    (dtype, lanes, swizzle)
    for dtype, cols in (("f32", 32), ("f16", 64), ("i8", 128))
    for lanes in (4 // np.dtype(DTYPES[dtype]).itemsize, 8 // np.dtype(DTYPES[dtype]).itemsize,
                  16 // np.dtype(DTYPES[dtype]).itemsize)
    for swizzle in (32, 64, 128)
]  # fmt: skip
COLS = {"f32": 32, "f16": 64, "i8": 128}


K = 3
"""The column shift of the kernel's accesses (thread t reads unit (t + K) mod units)."""


def case(dtype: str, lanes: int, swizzle: int):
    """The kernel of a case, its arrays (source, out, back) and the arrays numpy says the
    kernel leaves: out[t] = the `lanes` elements of row t + 1 at the thread's column, back =
    the source with those written over row t at that column."""
    cols = COLS[dtype]
    rng = np.random.default_rng(5)
    src = rng.integers(0, 256, (ROWS, cols * np.dtype(DTYPES[dtype]).itemsize), np.uint8)
    src = src.view(DTYPES[dtype])
    if dtype == "f16":
        src = (src.view(np.uint16) & np.uint16(0xBFFF)).view(np.float16)  # finite only
    out = np.zeros((ROWS, lanes), DTYPES[dtype])
    tid = np.arange(ROWS)
    col = ((tid + K) % (cols // lanes)) * lanes
    expected = np.stack([src[(t + 1) % ROWS, c : c + lanes] for t, c in zip(tid, col, strict=True)])
    back = src.copy()
    for t, c in zip(tid, col, strict=True):
        back[t, c : c + lanes] = expected[t]
    text = kernel(dtype, cols, lanes, swizzle, K)
    return text, [src, out, np.zeros_like(src)], [src, expected, back]


@pytest.mark.parametrize(("dtype", "lanes", "swizzle"), CASES, ids=str)
def test_unit_accesses_are_bit_exact(dtype, lanes, swizzle):
    text, arrays, expected = case(dtype, lanes, swizzle)
    module = Parser(make_context(), text).parse_module()
    run = interpreter.run(module, *(a.copy() for a in arrays), grid=(1, 1))
    assert run.violations == [], [str(v) for v in run.violations]
    for got, want in zip(run.arrays, expected, strict=True):
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("swizzle", [32, 64, 128])
def test_a_unit_access_is_contiguous_in_the_layout(swizzle):
    """The premise of SV1: the bytes of an aligned access of up to 16 bytes are consecutive
    at the swizzled place of the first (every row and aligned column of a 64x64 f16
    buffer)."""
    shape, bits = (64, 64), 16
    for size in (4, 8, 16):
        lanes = size // 2
        for r in range(shape[0]):
            for c in range(0, shape[1], lanes):
                places = [layout.element_offset([r, c + i], shape, bits, swizzle) for i in
                          range(lanes)]  # fmt: skip
                assert places == list(range(places[0], places[0] + size, 2))
