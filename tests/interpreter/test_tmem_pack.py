"""`pack` / `unpack` (tcgen05.ld .pack::16b, tcgen05.st .unpack::16b) under the interpreter:
two 16-bit values in each 32-bit register, one in the low half of each of two adjacent 32-bit
TMEM columns (the lower column's in the register's low half). A store with unpack and a load
with pack round-trip f16 bit-exact for every shape, and a plain 32x32b dump of the columns
shows where each value went. Not measured: the H200 has no TMEM. The PTX ISA's wording
("two 16-bit elements from adjacent columns") is the model; which half of a column holds
the value is the interpreter's choice (docs/interpreter.md)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_dialect.attributes import TmemShape
from copy_dialect.tmem import TMEM_REGS_PER_NUM, tmem_fragment
from copy_tools.universe import make_context

COLS = 128
SENTINEL = 0xDEADBEEF
"""What TMEM holds before the unpacking store: kept where it writes nothing."""
KERNEL = """
builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%x: memref<128x{n}xf16>, %y: memref<128x{n}xf16>, %z: memref<128x{cols}xi32>,
      %s: memref<128x{cols}xi32>)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %t = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %acc = copy.tmem_alloc : memref<128x{cols}xi32, #copy.tmem>
    %fill = vector.load %s[%t, %c0] : memref<128x{cols}xi32>, vector<{cols}xi32>
    copy.tmem_store %fill, %acc[%c0] shape shape_32x32b num {cols}
      : vector<{cols}xi32>, memref<128x{cols}xi32, #copy.tmem>
    copy.tmem_wait store
    %v = vector.load %x[%t, %c0] : memref<128x{n}xf16>, vector<{n}xf16>
    copy.tmem_store %v, %acc[%c0] shape {shape} num {num} unpack{offset}
      : vector<{n}xf16>, memref<128x{cols}xi32, #copy.tmem>
    copy.tmem_wait store
    %w = copy.tmem_load %acc[%c0] shape {shape} num {num} pack{offset}
      : memref<128x{cols}xi32, #copy.tmem> -> vector<{n}xf16>
    %d = copy.tmem_load %acc[%c0] shape shape_32x32b num {cols}
      : memref<128x{cols}xi32, #copy.tmem> -> vector<{cols}xi32>
    copy.tmem_wait load
    vector.store %w, %y[%t, %c0] : memref<128x{n}xf16>, vector<{n}xf16>
    vector.store %d, %z[%t, %c0] : memref<128x{cols}xi32>, vector<{cols}xi32>
    copy.tmem_dealloc %acc : memref<128x{cols}xi32, #copy.tmem>
    func.return
  }}
}}
"""


def sentinel() -> tuple[np.ndarray, np.ndarray]:
    """The dump's output and the TMEM fill."""
    fill = np.full((128, COLS), SENTINEL, np.uint32).view(np.int32)
    return np.zeros((128, COLS), np.int32), fill


def kernel(shape: str, num: int) -> str:
    n = 2 * num * TMEM_REGS_PER_NUM[TmemShape(shape)]
    # 16x32bx2: the second half of the threads past the first's 2 * num columns.
    half = 2 * num if shape == "shape_16x32bx2" else 0
    return KERNEL.format(
        n=n, cols=COLS, shape=shape, num=num,
        offset=f" {{offset = {half} : i64}}" if half else "",
    )  # fmt: skip


@pytest.mark.parametrize("shape", [s.value for s in TmemShape])
@pytest.mark.parametrize("num", [1, 2])
def test_unpack_then_pack_round_trips_and_places_each_half(shape: str, num: int):
    regs = num * TMEM_REGS_PER_NUM[TmemShape(shape)]
    rng = np.random.default_rng(7)
    x = rng.standard_normal((128, 2 * regs)).astype(np.float16)
    module = Parser(make_context(), kernel(shape, num)).parse_module()
    verify_module(module)  # valid IR, and the protocol analysis proves it
    run = interpreter.run(module, x, np.zeros_like(x), *sentinel())
    assert run.violations == [], [str(v) for v in run.violations]
    y, z = run.arrays[1], run.arrays[2].view(np.uint32)
    assert np.array_equal(y.view(np.uint16), x.view(np.uint16))  # bit-exact
    bits = x.view(np.uint16).astype(np.uint32)
    want = np.full((128, COLS), SENTINEL, np.uint32)
    half = 2 * num if shape == "shape_16x32bx2" else 0
    for t in range(128):
        for r in range(regs):
            lane, col = tmem_fragment(TmemShape(shape), t % 32, r, half, pack=True)
            lane += (t // 32) * 32
            want[lane, col], want[lane, col + 1] = bits[t, 2 * r], bits[t, 2 * r + 1]
    # Each column written holds one 16-bit value in its low half; the interpreter writes the
    # high half 0 (the ISA's figure shows only the low half), the others keep the sentinel.
    assert np.array_equal(z, want)


def test_32x32b_pack_is_lane_t_columns_2r_and_2r_plus_1():
    """The map without tmem_fragment: thread t's register r is lane t, columns 2r, 2r + 1."""
    x = np.arange(128 * 8, dtype=np.uint16).reshape(128, 8).view(np.float16)
    module = Parser(make_context(), kernel("shape_32x32b", 4)).parse_module()
    run = interpreter.run(module, x, np.zeros_like(x), *sentinel())
    z = run.arrays[2].view(np.uint32)
    assert np.array_equal(z[:, :8], x.view(np.uint16).astype(np.uint32))
    assert (z[:, 8:] == SENTINEL).all()
