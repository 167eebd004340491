"""A barrier wait's parity is read relative to its barrier's phase (analysis/protocol/
periods.py, `Forms.parity`): the parity `(i / S) mod 2` of a ring of S repeats, relative to
the phase, every S iterations (its value every 2 S), so the steady-state proof's lap is one
ring, not two (a chosen count whose reads need two, an epilogue's parity of n, walks its
loops for two: `depths.room`). Only the low bit of a
quotient of the iteration, to a constant xor, is read so; any other parity keeps its value's
period, and a parity whose lap does not advance its barrier alike is still caught."""

from __future__ import annotations

import pytest
from xdsl.dialects import func, scf
from xdsl.parser import Parser

from analysis.protocol import check_protocol
from analysis.protocol.analysis import protocol_ops
from analysis.protocol.periods import loop_shape
from copy_tools.universe import make_context

KERNEL = """
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @k(%a: memref<?x64xf32>, %n: index)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %true = arith.constant true
    %t = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %ring = copy.alloc_smem : memref<4x64x64xf32, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>
    scf.for %i = %c0 to %n step %c1 {{
      %s = arith.remui %i, %c4 : index
      %lap = arith.divui %i, %c4 : index
{parity}
      %row = arith.muli %i, %c64 : index
      copy.async_copy %a[%row, %c0] to %ring[%s] barrier %bars[%s]
        : memref<?x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
      copy.barrier_wait %bars[%s], %p : !copy.barrier<4>
      %v = memref.load %ring[%s, %c0, %t] : memref<4x64x64xf32, #copy.smem>
      "gpu.barrier"() : () -> ()
    }}
    func.return
  }}
}}
"""

RELATIVE = {
    "remui, cmpi ne 0": """      %pm = arith.remui %lap, %c2 : index
      %p = arith.cmpi ne, %pm, %c0 : index""",
    "andi 1, cmpi eq 0, xori true": """      %pm = arith.andi %lap, %c1 : index
      %q = arith.cmpi eq, %pm, %c0 : index
      %p = arith.xori %q, %true : i1""",
    "index_cast, trunci": """      %li = arith.index_cast %lap : index to i32
      %p = arith.trunci %li : i32 to i1""",
}
"""Parities of the phase of slot i mod 4, the low bit of i / 4: relative to the phase,
they repeat every ring."""

PLAIN = """      %pm = arith.remui %lap, %c2 : index
      %p1 = arith.addi %pm, %c1 : index
      %p = arith.cmpi eq, %p1, %c2 : index"""
"""The same parity through an `addi`: not read relative to the phase (its value's period)."""

EVERY_OTHER_RING = """      %l8 = arith.divui %i, %c8 : index
      %pm = arith.remui %l8, %c2 : index
      %p = arith.cmpi ne, %pm, %c0 : index"""
"""The parity of i / 8 on a ring of 4: the second ring waits on a phase that completed."""


def kernel(parity: str):
    module = Parser(make_context(), KERNEL.format(parity=parity)).parse_module()
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    loop = next(op for op in fn.walk() if isinstance(op, scf.ForOp))
    return module, loop_shape(loop, protocol_ops(fn))


@pytest.mark.parametrize("form", sorted(RELATIVE))
def test_a_rings_parity_repeats_relative_to_the_phase_every_ring(form):
    module, shape = kernel(RELATIVE[form])
    assert shape.shape.period == 4
    assert check_protocol(module) == []


def test_a_parity_computed_otherwise_keeps_its_values_period():
    module, shape = kernel(PLAIN)
    assert shape.shape.period == 8
    assert check_protocol(module) == []


def test_a_parity_that_does_not_follow_the_ring_is_still_caught():
    module, shape = kernel(EVERY_OTHER_RING)
    assert shape.shape.period == 8
    [error] = [f for f in check_protocol(module) if f.severity == "error"]
    assert error.op.name == "memref.load"
    assert any(
        r.op.name == "copy.barrier_wait" and "returns at once" in r.text for r in error.related
    )
