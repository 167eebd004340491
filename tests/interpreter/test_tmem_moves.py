"""`copy.tmem_shift` (tcgen05.shift.down) under the interpreter: the 8 columns (32 bytes) at
its column of lanes 0-126 move one lane down and the other columns stay; with `cta_group 2`
one CTA's shift moves the rows of both CTAs of the pair. Each kernel is proven
by the protocol analysis (the stores fenced before the barrier that hands them to the shift,
the shift committed to an mbarrier every thread waits on, then fenced after) and its TMEM read
back bit-exact against numpy, under every schedule. Not measured: the H200 has no TMEM; lane
0 keeping its own element after the shift is the interpreter's choice (the PTX ISA does not
say). The scale copies' lane placement (32x128b.warpx4) is tests/interpreter/test_tmem_pair.py's:
`scales` adds verifier rules, not another data path."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_tools.universe import make_context

SHIFT = """
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%x: memref<128x32xi32>, %y: memref<128x32xi32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %ticks = arith.constant 1000000 : i32
    %col = arith.constant COLUMN : index
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %leader = arith.cmpi eq, %t, %c0 : index
    %word = copy.alloc_smem : memref<1xi64, #copy.smem>
    %bar = builtin.unrealized_conversion_cast %word : memref<1xi64, #copy.smem> to !llvm.ptr<3>
    scf.if %leader {
      nvvm.mbarrier.init.shared %bar, %c1_i32 {copy.effects = [#copy.effect<write 0>]}
        : !llvm.ptr<3>, i32
      nvvm.fence.mbarrier.init
    }
    %acc = copy.tmem_alloc : memref<128x32xi32, #copy.tmem>
    %v = vector.load %x[%t, %c0] : memref<128x32xi32>, vector<32xi32>
    copy.tmem_store %v, %acc[%c0] shape shape_32x32b num 32
      : vector<32xi32>, memref<128x32xi32, #copy.tmem>
    copy.tmem_wait store
    nvvm.tcgen05.fence <before>
    gpu.barrier
    nvvm.tcgen05.fence <after>
    copy.tmem_shift %acc[%col] : memref<128x32xi32, #copy.tmem>
    scf.if %leader {
      nvvm.tcgen05.commit %bar : !llvm.ptr<3>
    }
    nvvm.mbarrier.try_wait.parity.shared %bar, %c0_i32, %ticks
      {copy.effects = [#copy.effect<read 0>]} : !llvm.ptr<3>, i32, i32
    nvvm.tcgen05.fence <after>
    %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 32
      : memref<128x32xi32, #copy.tmem> -> vector<32xi32>
    copy.tmem_wait load
    vector.store %w, %y[%t, %c0] : memref<128x32xi32>, vector<32xi32>
    copy.tmem_dealloc %acc : memref<128x32xi32, #copy.tmem>
    func.return
  }
}
"""


def shift_kernel(column: int):
    module = Parser(make_context(), SHIFT.replace("COLUMN", str(column))).parse_module()
    verify_module(module)  # valid IR, and the protocol analysis proves it
    return module


@pytest.mark.parametrize("column", [0, 8, 24])
@pytest.mark.parametrize("schedule", ["round_robin", "random", "adversarial"])
def test_shift_moves_one_element_down(column: int, schedule: str):
    rng = np.random.default_rng(column)
    x = rng.integers(-(2**31), 2**31, (128, 32), dtype=np.int64).astype(np.int32)
    run = interpreter.run(shift_kernel(column), x, np.zeros_like(x), schedule=schedule)
    assert run.violations == [], [str(v) for v in run.violations]
    expected = x.copy()
    expected[1:, column : column + 8] = x[:-1, column : column + 8]
    np.testing.assert_array_equal(run.arrays[1], expected)


PAIR_SHIFT = """
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%x: memref<256x32xi32>, %y: memref<256x32xi32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>,
                  copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    %false = arith.constant false
    %both = arith.constant 3 : i16
    %b = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %b, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    %first = arith.cmpi eq, %t, %c0 : index
    %base = arith.muli %rank, %c128 : index
    %row = arith.addi %base, %t : index
    %acc = copy.tmem_alloc cta_group 2 : memref<128x32xi32, #copy.tmem>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %v = vector.load %x[%row, %c0] : memref<256x32xi32>, vector<32xi32>
    copy.tmem_store %v, %acc[%c0] shape shape_32x32b num 32
      : vector<32xi32>, memref<128x32xi32, #copy.tmem>
    copy.tmem_wait store
    nvvm.tcgen05.fence <before>
    copy.cluster_sync
    nvvm.tcgen05.fence <after>
    scf.if %leader {
      copy.tmem_shift %acc[%c8] cta_group 2 : memref<128x32xi32, #copy.tmem>
      scf.if %first {
        nvvm.tcgen05.commit %done_ptr, multicast_mask = %both {group = #nvvm.cta_group<cta_2>}
          : !llvm.ptr<3>, i16
      }
    }
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    nvvm.tcgen05.fence <after>
    %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 32
      : memref<128x32xi32, #copy.tmem> -> vector<32xi32>
    copy.tmem_wait load
    vector.store %w, %y[%row, %c0] : memref<256x32xi32>, vector<32xi32>
    nvvm.tcgen05.fence <before>
    copy.cluster_sync
    copy.tmem_dealloc %acc cta_group 2 : memref<128x32xi32, #copy.tmem>
    func.return
  }
}
"""
"""The even CTA's elected thread shifts the pair's TMEM (`cta_group 2`) after both CTAs
stored their rows (fenced around the cluster barrier) and commits to both CTAs' barriers."""


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pair_shift_moves_both_ctas_rows(seed: int):
    rng = np.random.default_rng(seed)
    x = rng.integers(-(2**31), 2**31, (256, 32), dtype=np.int64).astype(np.int32)
    module = Parser(make_context(), PAIR_SHIFT).parse_module()
    verify_module(module)  # valid IR, and the protocol analysis proves it
    run = interpreter.run(module, x, np.zeros_like(x), grid=(2, 1, 1), seed=seed)
    assert run.violations == [], [str(v) for v in run.violations]
    expected = x.copy()
    expected[1:128, 8:16] = x[:127, 8:16]
    expected[129:, 8:16] = x[128:255, 8:16]
    np.testing.assert_array_equal(run.arrays[1], expected)
