"""copy.assume and the protocol analysis (issue N, item 1): a loop bound assumed >= 1 is not
tried as 0 iterations, so a kernel whose prologue waits for the loop's first load (FA3's
K[0]) is proven instead of getting a false P6; the driver's options keep to the facts; the
interpreter reports a broken fact (AS3)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import interpreter
from analysis.protocol import check_protocol, render
from analysis.protocol.assumptions import Assumptions, Fact
from copy_dialect import ops as copy
from copy_tools.universe import make_context
from tests.corpus import KERNELS

# A producer warp loads block i of %x for i in [0, n); the consumers wait for block 0 before
# their loop over blocks 1 .. n - 1 (as FA3's consumers wait for K[0]): with n = 0 nothing
# ever completes phase 0 of %full.
BLOCKS = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @blocks(%x: memref<?x64xf32>, %y: memref<128x64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %false = arith.constant false
    %rows = memref.dim %x, %c0 : memref<?x64xf32>
    %n = arith.divui %rows, %c128 : index
    ASSUME
    %buf = copy.alloc_smem : memref<128x64xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<1>
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      scf.for %i = %c0 to %n step %c1 {
        %lap = arith.remui %i, %c2 : index
        %phase = arith.cmpi ne, %lap, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%c0], %acquire : !copy.barrier<1>
        %row = arith.muli %i, %c128 : index
        copy.async_copy %x[%row, %c0] to %buf barrier %full[%c0]
          : memref<?x64xf32> to memref<128x64xf32, #copy.smem>, !copy.barrier<1>
      }
    }, {
    ^bb0(%t: index):
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      %first = memref.load %buf[%t, %c0] : memref<128x64xf32, #copy.smem>
      copy.barrier_arrive %empty[%c0] issuer warps : !copy.barrier<1>
      %sum = scf.for %i = %c1 to %n step %c1 iter_args(%acc = %first) -> (f32) {
        %lap = arith.remui %i, %c2 : index
        %phase = arith.cmpi ne, %lap, %c0 : index
        copy.barrier_wait %full[%c0], %phase : !copy.barrier<1>
        %v = memref.load %buf[%t, %c0] : memref<128x64xf32, #copy.smem>
        copy.barrier_arrive %empty[%c0] issuer warps : !copy.barrier<1>
        %next = arith.addf %acc, %v : f32
        scf.yield %next : f32
      }
      memref.store %sum, %y[%t, %c0] : memref<128x64xf32>
    }
    func.return
  }
}
"""


def blocks(fact: str | None) -> ModuleOp:
    assume = f"copy.assume %n {fact} : index" if fact is not None else ""
    return Parser(make_context(), BLOCKS.replace("ASSUME", assume)).parse_module()


def findings(module: ModuleOp) -> list[str]:
    """Each finding rendered, after its rule ids."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [f"{f.rules} {render(f)}" for f in check_protocol(module)]


def test_without_the_assumption_a_loop_of_0_iterations_is_a_false_p6():
    (finding,) = findings(blocks(None))
    assert "P6" in finding
    assert "this wait never returns: phase 0 of barrier 0 of %full" in finding
    assert "found for %n = 0" in finding


@pytest.mark.parametrize("fact", ["ge 1", "in [1, 64]", "ge 1 multiple_of 4", "ge 100"])
def test_with_the_assumption_the_kernel_is_proven(fact: str):
    # `ge 100` leaves out every count the driver tries (0 .. its trip counts): it walks 100
    # iterations instead, and the steady state is checked on that run.
    assert findings(blocks(fact)) == []


def test_a_fact_that_allows_0_does_not_hide_the_hang():
    (finding,) = findings(blocks("in [0, 8]"))
    assert "found for %n = 0" in finding


def test_the_fa3_corpus_kernel_is_proven_with_its_assumption_and_not_without():
    kernel = next(k for k in KERNELS if k.name == "fa3_kv_ring")
    text = kernel.text()
    assert "copy.assume %n_blocks ge 1 : index" in text
    ctx = make_context()
    assert findings(Parser(ctx, text).parse_module()) == []
    without = text.replace("copy.assume %n_blocks ge 1 : index", "")
    (finding,) = findings(Parser(ctx, without).parse_module())
    assert "P6" in finding
    assert "%k_full" in finding
    assert "%n_blocks = 0" in finding


@pytest.mark.parametrize(
    ("fact", "bounds"),
    [
        ("ge 1", list(range(1, 21))),
        # 20 iterations left out: the first longer count the fact allows stands in for them
        ("multiple_of 8", [0, 8, 16, 24]),
        ("ge 100", [100]),
        ("in [2, 5]", [2, 3, 4, 5]),
        ("in [0, 64] multiple_of 3", [0, 3, 6, 9, 12, 15, 18, 21]),
    ],
)
def test_the_bounds_tried_keep_to_the_fact(fact: str, bounds: list[int]):
    """The bounds the driver tries for `for i = 0 to %n step 1`, 20 counts without a fact."""
    fn = next(op for op in blocks(fact).walk() if isinstance(op, func.FuncOp))
    n = next(op for op in fn.walk() if isinstance(op, copy.AssumeOp)).value
    assert Assumptions.of(fn).trips(n, 0, 1, 20) == bounds


def test_a_loop_from_1_in_steps_of_2_never_reaches_an_even_bound():
    # Then every bound is tried, as without the fact.
    assert Fact(None, None, 2).first_after(21, 2) is None
    assert Fact(None, 5, 1).first_after(20, 1) is None


def test_the_interpreter_reports_a_broken_assumption():
    module = blocks("ge 1")
    x = np.arange(3 * 128 * 64, dtype=np.float32).reshape(3 * 128, 64)
    run = interpreter.run(module, x, np.zeros((128, 64), np.float32))
    assert run.violations == []
    assert np.array_equal(run.arrays[1][:, 0], x[:, 0].reshape(3, 128).sum(axis=0))
    empty = np.zeros((0, 64), np.float32)
    run = interpreter.run(module, empty, np.zeros((128, 64), np.float32))
    (violation,) = run.violations
    assert violation.rule == "AS3"
    assert "states %n ge 1, but %n is 0 in thread 0" in str(violation)


@pytest.mark.parametrize("fact", ["ge 1", "ge 100", "ge 1 multiple_of 8"])
def test_a_mistake_is_still_found_under_the_fact(fact: str):
    # The producer acquires the slot with the consumers' parity (no xori with true).
    text = str(blocks(fact)).replace(
        "copy.barrier_wait %empty[%c0], %acquire", "copy.barrier_wait %empty[%c0], %phase"
    )
    found = findings(Parser(make_context(), text).parse_module())
    assert found, fact
    assert all("%n = 0" not in f for f in found)
