"""sm_100a TMEM kernels under the interpreter (their first run anywhere: no GPU of this
project has TMEM): a store and a load of each shape round-trip through TMEM by the shape's
lane and column map (copy_dialect.tmem.tmem_fragment), and tcgen05.cp puts row i of SMEM in
lane i. The TMEM rules (P8, P10 for a warp's access, P11, P12, a column out of the allocation)
are test_rules.py's."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_dialect.attributes import TmemShape
from copy_dialect.tmem import TMEM_REGS_PER_NUM, tmem_fragment
from copy_tools.universe import make_context

KERNEL = """
builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%x: memref<128x{n}xf32>, %y: memref<128x{n}xf32>, %z: memref<128x{cols}xf32>)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %t = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %acc = copy.tmem_alloc : memref<128x{cols}xf32, #copy.tmem>
    %v = vector.load %x[%t, %c0] : memref<128x{n}xf32>, vector<{n}xf32>
    copy.tmem_store %v, %acc[%c0] shape {shape} num {num}{offset}
      : vector<{n}xf32>, memref<128x{cols}xf32, #copy.tmem>
{between}
    %w = copy.tmem_load %acc[%c0] shape {shape} num {num}{offset}
      : memref<128x{cols}xf32, #copy.tmem> -> vector<{n}xf32>
{after}
    vector.store %w, %y[%t, %c0] : memref<128x{n}xf32>, vector<{n}xf32>
{dump}
    copy.tmem_dealloc %acc : memref<128x{cols}xf32, #copy.tmem>
    func.return
  }}
}}
"""
DUMP_SHAPE = "shape_32x32b"


def kernel(shape: str, num: int, *, between="    copy.tmem_wait store",
           after="    copy.tmem_wait load", dump=True, cols=128) -> str:  # fmt: skip
    n = num * TMEM_REGS_PER_NUM[TmemShape(shape)]
    text = ""
    if dump:  # every lane's first `cols` columns, through the 32x32b shape
        text = (
            f"    %d = copy.tmem_load %acc[%c0] shape {DUMP_SHAPE} num {cols} : "
            f"memref<128x{cols}xf32, #copy.tmem> -> vector<{cols}xf32>\n"
            "    copy.tmem_wait load\n"
            f"    vector.store %d, %z[%t, %c0] : memref<128x{cols}xf32>, vector<{cols}xf32>"
        )
    return KERNEL.format(
        n=n, cols=cols, shape=shape, num=num, between=between, after=after, dump=text,
        offset=f" {{offset = {offset(shape, num)} : i64}}" if offset(shape, num) else "",
    )  # fmt: skip


def offset(shape: str, num: int) -> int:
    """16x32bx2's half offset: the second half of the threads past the first's columns (at
    0, both halves would write the same cells)."""
    return num if shape == "shape_16x32bx2" else 0


def parse(text: str):
    return Parser(make_context(), text).parse_module()


@pytest.mark.parametrize("shape", [s.value for s in TmemShape])
@pytest.mark.parametrize("num", [1, 2])
def test_a_store_and_a_load_round_trip_through_the_shape_map(shape, num):
    n = num * TMEM_REGS_PER_NUM[TmemShape(shape)]
    x = np.random.default_rng(1).standard_normal((128, n)).astype(np.float32)
    module = parse(kernel(shape, num))
    verify_module(module)  # the IR is valid and the protocol analysis proves it
    run = interpreter.run(module, x, np.zeros_like(x), np.zeros((128, 128), np.float32))
    assert run.violations == [], [str(v) for v in run.violations]
    y, z = run.arrays[1], run.arrays[2]
    assert np.array_equal(y, x)
    # Where the store put each register: the shape's map, from the warp's quarter.
    expected = np.zeros((128, 128), np.float32)
    for t in range(128):
        for r in range(n):
            lane, col = tmem_fragment(TmemShape(shape), t % 32, r, offset(shape, num))
            expected[(t // 32) * 32 + lane, col] = x[t, r]
    assert np.array_equal(z, expected)


def test_smem_to_tmem_puts_row_i_in_lane_i():
    text = """
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%x: memref<128x8xf32>, %y: memref<128x8xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %s = copy.alloc_smem : memref<128x8xf32, #copy.smem<swizzle = 32>>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %copied = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %copied_ptr = builtin.unrealized_conversion_cast %copied : !copy.barrier<1> to !llvm.ptr<3>
    %leader = arith.cmpi eq, %t, %c0 : index
    copy.async_copy %x[%c0, %c0] to %s barrier %bar[%c0]
      : memref<128x8xf32> to memref<128x8xf32, #copy.smem<swizzle = 32>>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    %acc = copy.tmem_alloc : memref<128x32xf32, #copy.tmem>
    copy.smem_to_tmem %s to %acc[%c0] shape shape_128x256b
      : memref<128x8xf32, #copy.smem<swizzle = 32>>, memref<128x32xf32, #copy.tmem>
    scf.if %leader {
      nvvm.tcgen05.commit %copied_ptr : !llvm.ptr<3>
    }
    copy.barrier_wait %copied[%c0], %phase : !copy.barrier<1>
    nvvm.tcgen05.fence <after>
    %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 8
      : memref<128x32xf32, #copy.tmem> -> vector<8xf32>
    copy.tmem_wait load
    vector.store %w, %y[%t, %c0] : memref<128x8xf32>, vector<8xf32>
    copy.tmem_dealloc %acc : memref<128x32xf32, #copy.tmem>
    func.return
  }
}
"""
    x = np.random.default_rng(2).standard_normal((128, 8)).astype(np.float32)
    run = interpreter.run(parse(text), x, np.zeros_like(x))
    assert run.violations == [], [str(v) for v in run.violations]
    assert np.array_equal(run.arrays[1], x)
