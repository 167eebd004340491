"""`copy.tmem_slice` under the interpreter: slices are views of their parent's columns.
Each half of a 64-column allocation is written through its own slice (tcgen05.st 32x32b from
the slice's column 0) and the whole allocation read back: the halves sit side by side,
bit-exact against numpy; a 16-bit slice of a packed ref starts at its column's pair. A load
past the end of a slice is an access outside it (the run stops, `bounds`), as J23 rejects
it in the verifier. Not measured: the H200 has no TMEM."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_tools.universe import make_context

HALVES = """
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%a: memref<128x32xi32>, %b: memref<128x32xi32>, %y: memref<128x64xi32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %acc = copy.tmem_alloc : memref<128x64xi32, #copy.tmem>
    %lo = copy.tmem_slice %acc[0] : memref<128x64xi32, #copy.tmem> -> memref<128x32xi32, #copy.tmem>
    %hi = copy.tmem_slice %acc[32]
      : memref<128x64xi32, #copy.tmem> -> memref<128x32xi32, #copy.tmem>
    %va = vector.load %a[%t, %c0] : memref<128x32xi32>, vector<32xi32>
    %vb = vector.load %b[%t, %c0] : memref<128x32xi32>, vector<32xi32>
    copy.tmem_store %va, %lo[%c0] shape shape_32x32b num 32
      : vector<32xi32>, memref<128x32xi32, #copy.tmem>
    copy.tmem_store %vb, %hi[%c0] shape shape_32x32b num 32
      : vector<32xi32>, memref<128x32xi32, #copy.tmem>
    copy.tmem_wait store
    %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 64
      : memref<128x64xi32, #copy.tmem> -> vector<64xi32>
    copy.tmem_wait load
    vector.store %w, %y[%t, %c0] : memref<128x64xi32>, vector<64xi32>
    copy.tmem_dealloc %acc : memref<128x64xi32, #copy.tmem>
    func.return
  }
}
"""

PAST_THE_SLICE = """
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%col: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %acc = copy.tmem_alloc : memref<128x64xi32, #copy.tmem>
    %lo = copy.tmem_slice %acc[0] : memref<128x64xi32, #copy.tmem> -> memref<128x32xi32, #copy.tmem>
    %w = copy.tmem_load %lo[%col] shape shape_32x32b num 4
      : memref<128x32xi32, #copy.tmem> -> vector<4xi32>
    copy.tmem_wait load
    copy.tmem_dealloc %acc : memref<128x64xi32, #copy.tmem>
    func.return
  }
}
"""


@pytest.mark.parametrize("schedule", ["round_robin", "random", "adversarial"])
def test_halves_written_through_slices_sit_side_by_side(schedule: str):
    rng = np.random.default_rng(11)
    a, b = (rng.integers(-(2**31), 2**31, (128, 32), dtype=np.int64).astype(np.int32) for _ in "ab")
    module = Parser(make_context(), HALVES).parse_module()
    verify_module(module)  # valid IR, and the protocol analysis proves it
    run = interpreter.run(module, a, b, np.zeros((128, 64), np.int32), schedule=schedule)
    assert run.violations == [], [str(v) for v in run.violations]
    np.testing.assert_array_equal(run.arrays[2], np.concatenate([a, b], axis=1))


def test_a_load_past_the_slice_stops_the_run():
    module = Parser(make_context(), PAST_THE_SLICE).parse_module()
    verify_module(module, protocol=False)  # a dynamic column: J23 cannot see it
    run = interpreter.run(module, np.int64(30))
    assert [v.rule for v in run.violations] == ["bounds"], [str(v) for v in run.violations]
    assert "of an allocation of 32" in str(run.violations[0])
