"""The driver tries a chosen trip count at its longest first, and then only the counts the
longest run's steady state does not stand for (analysis/protocol/analysis.py, `Deferred`):
run n is run T's until the loop's last iterations, and from the lap's start on run n
behaves as run n - P. That holds only where the rest of what the protocol reads of n
repeats with the lap too (periods.py, `count_shape`): a prologue's `k < n` from n = k + 1
on, an epilogue's slot `(n - 1) mod S` every S; a value a loop of the choice yields after its
last iteration, or a comparison of n with an unknown, leaves every count to be tried.

The pruning must change no verdict: on the corpus and its one-op mutants, the findings
(severity, rule and op) are the same with the pruning as with every count tried."""

from __future__ import annotations

import warnings

import pytest
from xdsl.dialects import scf
from xdsl.parser import Parser

import analysis.protocol.analysis as driver
import analysis.protocol.choices as choices
from analysis.protocol import check_protocol
from analysis.protocol.analysis import protocol_ops
from analysis.protocol.counts import count_shape
from analysis.protocol.periods import Opaque, Shape
from copy_tools.universe import make_context
from tests.analysis import corpus_mutations as cm
from tests.corpus import KERNELS

HEAD = """
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @k(%a: memref<?x64xf32>, %n: index, %m: index)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %t = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %ring = copy.alloc_smem : memref<4x64x64xf32, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>
{prologue}
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %c0) -> (index) {{
      %s = arith.remui %i, %c4 : index
      %lap = arith.divui %i, %c4 : index
      %pm = arith.remui %lap, %c2 : index
      %p = arith.cmpi ne, %pm, %c0 : index
      %row = arith.muli %i, %c64 : index
      copy.async_copy %a[%row, %c0] to %ring[%s] barrier %bars[%s]
        : memref<?x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
      copy.barrier_wait %bars[%s], %p : !copy.barrier<4>
      %v = memref.load %ring[%s, %c0, %t] : memref<4x64x64xf32, #copy.smem>
      "gpu.barrier"() : () -> ()
      %y = arith.addi %x, %c1 : index
      scf.yield %y : index
    }}
{epilogue}
    func.return
  }}
}}
"""

PROLOGUE = """
    scf.for %k = %c0 to %c4 step %c1 {
      %exists = arith.cmpi ult, %k, %n : index
      scf.if %exists {
        "gpu.barrier"() : () -> ()
        copy.fence_async_shared
      }
    }"""
"""A prologue over the ring's 4 slots, each under `k < n`: the same for every n >= 4."""

LAST_SLOT = """
    %last = arith.subi %n, %c1 : index
    %sl = arith.remui %last, %c4 : index
    %lapl = arith.divui %last, %c4 : index
    %lpl = arith.remui %lapl, %c2 : index
    %pl = arith.cmpi ne, %lpl, %c0 : index
    scf.if %pl {
      copy.fence_async_shared
    }"""
"""An epilogue reading the last iteration's parity, (n - 1) / 4 mod 2: a period of 8."""

CARRIED = """
    %done = arith.cmpi ult, %r, %c4 : index
    scf.if %done {
      copy.fence_async_shared
    }"""
"""An epilogue reading what the loop yields after its last iteration: not followed."""

UNKNOWN = """
    %more = arith.cmpi ult, %n, %m : index
    scf.if %more {
      copy.fence_async_shared
    }"""
"""n compared with another unknown: not a function of n alone."""


def shape_of(prologue: str = "", epilogue: str = "") -> Shape | Opaque:
    module = Parser(
        make_context(), HEAD.format(prologue=prologue, epilogue=epilogue)
    ).parse_module()
    fn = next(op for op in module.walk() if op.name == "func.func")
    n = fn.body.blocks[0].args[1]
    loops = [op for op in fn.walk() if isinstance(op, scf.ForOp) and op.ub is n]
    return count_shape(fn, {n}, loops, protocol_ops(fn))


def test_a_loop_alone_depends_on_its_count_only_through_its_bound():
    assert shape_of() == Shape()


def test_a_prologue_under_k_lt_n_is_fixed_from_n_past_its_last_k():
    got = shape_of(prologue=PROLOGUE)
    assert got is not None
    assert (got.period, got.start) == (1, 4)


def test_an_epilogue_reading_the_last_parity_repeats_with_its_period():
    got = shape_of(epilogue=LAST_SLOT)
    assert got is not None
    assert got.period == 8


@pytest.mark.parametrize("epilogue", [CARRIED, UNKNOWN], ids=["carried", "unknown"])
def test_a_read_the_forms_cannot_follow_leaves_every_count_tried(epilogue: str):
    assert isinstance(shape_of(epilogue=epilogue), Opaque)


BEYOND = """
    %limit = arith.constant LIMIT : index
    %big = arith.cmpi ugt, %n, %limit : index
    scf.if %big {
      copy.async_copy %a[%c0, %c0] to %ring[%c0] barrier %bars[%c0]
        : memref<?x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
    }
"""
"""After the loop, a load nothing waits for, only for counts above LIMIT."""


@pytest.mark.parametrize("threshold", [100, 2])
def test_a_count_read_beyond_the_counts_tried_is_not_proven(threshold: int):
    """A read of n that changes only beyond the counts the driver walks (n > 100, the
    walks end at 18) was proven for every count: the runs of the longest covered the counts
    below it, and nothing checked that the counts above it read n as those tried do. Now the
    counts above are covered only where every walk of the longest settled with a lap from
    which what the protocol reads of n repeats (`Deferred.cover`), else a P10 warning; the
    same mistake within the counts walked is the P7 it is."""
    text = HEAD.format(prologue="", epilogue=BEYOND.replace("LIMIT", str(threshold)))
    found = check_protocol(Parser(make_context(), text).parse_module())
    assert [(f.severity, f.rules) for f in found] == (
        [("warning", ("P10",))] if threshold == 100 else [("error", ("P7",))]
    )
    if threshold == 100:
        assert "beyond the counts tried (up to %n = 18): its count is read differently " \
            "from 101 on" in str(found[0])


def test_a_loop_to_n_minus_1_counts_the_same_n():
    """FA3's consumer loop mutated to run to n - 1 (a 'loop bound - 1' mutant): a loop to
    n + d counts n (`choices.bounds_of`), so its bound is not a read of n the proof cannot
    repeat, and the mutant stays proven (the interpreter runs it clean)."""
    kernel = cm.kernel_named("fa3_kv_ring")
    module = cm.parse(kernel)
    mutation = cm.mutation_named("loop bound - 1")
    mutation.apply(mutation.targets(module)[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_protocol(module) == []


# --- the pruning changes no verdict --------------------------------------------------------


def verdict(module) -> list[tuple[str, tuple[str, ...], int]]:
    """The findings as (severity, rules, the op's place in the module)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = check_protocol(module)
    place = {op: i for i, op in enumerate(module.walk())}
    return sorted((f.severity, tuple(f.rules), place[f.op]) for f in found)


def every_count(monkeypatch) -> None:
    """The driver without the pruning: every count of every choice tried (each still walked
    as far as its reads need, `analysis.make_room`, and its counts above checked)."""
    monkeypatch.setattr(choices.Deferred, "kept", lambda self: self.options)


PRUNED = ("gemm_dynamic_k", "fa3_kv_ring", "gemm_persistent", "gemm_persistent_while",
          "gemm_fp8_scaled")  # fmt: skip
"""The corpus kernels whose choices the pruning cuts (a bound read as a count, a
grid-stride or work-counter loop). Split-K's count, 16 / gridDim.z, takes 8 values, each
walked (`assumptions.derived`): there is nothing left to cut."""


def counts_tried(module) -> int:
    runs = []
    original = driver.run_kernel

    def counting(*args, **kwargs):
        runs.append(args[1])
        return original(*args, **kwargs)

    driver.run_kernel = counting
    try:
        verdict(module)
    finally:
        driver.run_kernel = original
    return len(runs)


@pytest.mark.parametrize("name", PRUNED)
def test_the_pruning_cuts_the_runs_of_the_corpus_kernels(name: str, monkeypatch):
    kernel = cm.kernel_named(name)
    pruned = counts_tried(cm.parse(kernel))
    every_count(monkeypatch)
    assert pruned < counts_tried(cm.parse(kernel))


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_the_pruning_changes_no_verdict_on_the_corpus(kernel, monkeypatch):
    pruned = verdict(cm.parse(kernel))
    every_count(monkeypatch)
    assert pruned == verdict(cm.parse(kernel))


def mutants() -> list[tuple[str, str, int]]:
    """The one-op mutants of the kernels the pruning cuts."""
    return [case for case in cm.cases() if case[0] in PRUNED]


@pytest.mark.parametrize("case", mutants(), ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_the_pruning_changes_no_verdict_on_the_mutants(case, monkeypatch):
    kernel_name, mutation, index = case

    def mutant():
        module = cm.parse(cm.kernel_named(kernel_name))
        m = cm.mutation_named(mutation)
        m.apply(m.targets(module)[index])
        return module

    cut: list[bool] = []
    kept = choices.Deferred.kept

    def noting(self):
        options = kept(self)
        cut.append(options != self.options)
        return options

    monkeypatch.setattr(choices.Deferred, "kept", noting)
    pruned = verdict(mutant())
    if not any(cut):
        # Every choice ran every option (a run of the longest that found an error, most
        # mutants): the driver without the pruning makes the same runs in the same order.
        return
    every_count(monkeypatch)
    every = verdict(mutant())
    if cut_off(every) or cut_off(pruned):
        # More than MAX_RUNS combinations: each stops at the cut, where what it has found
        # depends on the runs before it; both say the kernel is not proven.
        assert cut_off(every)
        assert cut_off(pruned)
        return
    assert pruned == every


def cut_off(found: list[tuple[str, tuple[str, ...], int]]) -> bool:
    """Whether the driver gave up after MAX_RUNS runs (its P10 warning at the function)."""
    return ("warning", ("P10",), 1) in found


LEFT = """      %limit = arith.constant LIMIT : index
      %big = arith.cmpi ugt, %done, %limit : index
      scf.if %big {
        copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0]
          : memref<?x512xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>,
            !copy.barrier<4>
      }
      copy.wait_group bulk 0 read_only
    }
    func.return"""
"""After the consumer's grid-stride tile loop, a load nothing waits for when the ring
position it leaves (8 k-blocks a tile) is above LIMIT."""


@pytest.mark.parametrize("limit", [400, 2])
def test_a_grid_stride_count_read_through_what_its_loop_leaves(limit: int):
    """A grid-stride loop's count is chosen without an SSA value, but the loop's results are
    functions of it (`CountForms.left`: the ring position 8 G): read beyond the 8 tiles
    walked (G > 50), the counts above those tried are not covered, a P10 warning (it was
    proven); within them (G > 0), the P7 it is."""
    kernel = cm.kernel_named("gemm_persistent")
    tail = "      copy.wait_group bulk 0 read_only\n    }\n    func.return"
    assert tail in kernel.text()
    text = kernel.text().replace(tail, LEFT.replace("LIMIT", str(limit)))
    found = check_protocol(Parser(make_context(), text).parse_module())
    assert [(f.severity, f.rules) for f in found] == (
        [("warning", ("P10",))] if limit == 400 else [("error", ("P7",))]
    )
    if limit == 400:
        assert "its count is read differently from 51 on" in str(found[0])


# --- the tail covers the lag of a chain of rings --------------------------------------------

CHAIN = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @chain(%x: memref<?x64xf32>, %y: memref<?x64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 288, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %true = arith.constant true
    %rows = memref.dim %x, %c0 : memref<?x64xf32>
    %n = arith.divui %rows, %c64 : index
    %in = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
    %mid = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
    %full1 = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %empty1 = copy.barrier_init arrivals 4 : !copy.barrier<2>
    %full2 = copy.barrier_init arrivals 4 : !copy.barrier<2>
    %empty2 = copy.barrier_init arrivals 4 : !copy.barrier<2>
    copy.warp_specialize warps [1, 4, 4] {
    ^bb0(%t: index):
      scf.for %i = %c0 to %n step %c1 {
        %s = arith.remui %i, %c2 : index
        %lap = arith.divui %i, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %ph = arith.cmpi ne, %lp, %c0 : index
        %acq = arith.xori %ph, %true : i1
        copy.barrier_wait %empty1[%s], %acq : !copy.barrier<2>
        %row = arith.muli %i, %c64 : index
        copy.async_copy %x[%row, %c0] to %in[%s] barrier %full1[%s]
          : memref<?x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
      }
    }, {
    ^bb0(%t: index):
      %r = arith.remui %t, %c64 : index
      scf.for %i = %c0 to %n step %c1 {
        %s = arith.remui %i, %c2 : index
        %lap = arith.divui %i, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %ph = arith.cmpi ne, %lp, %c0 : index
        %acq = arith.xori %ph, %true : i1
        copy.barrier_wait %full1[%s], %ph : !copy.barrier<2>
        %v = memref.load %in[%s, %r, %c0] : memref<2x64x64xf32, #copy.smem>
        copy.barrier_arrive %empty1[%s] issuer warps : !copy.barrier<2>
        copy.barrier_wait %empty2[%s], %acq : !copy.barrier<2>
        memref.store %v, %mid[%s, %r, %c0] : memref<2x64x64xf32, #copy.smem>
        copy.barrier_arrive %full2[%s] issuer warps : !copy.barrier<2>
      }
    }, {
    ^bb0(%t: index):
      %r = arith.remui %t, %c64 : index
      scf.for %i = %c0 to %n step %c1 {
        %s = arith.remui %i, %c2 : index
        %lap = arith.divui %i, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %ph = arith.cmpi ne, %lp, %c0 : index
        copy.barrier_wait %full2[%s], %ph : !copy.barrier<2>
        %v = memref.load %mid[%s, %r, %c0] : memref<2x64x64xf32, #copy.smem>
        copy.barrier_arrive %empty2[%s] issuer warps : !copy.barrier<2>
        %row = arith.muli %i, %c64 : index
        memref.store %v, %y[%row, %r] : memref<?x64xf32>
      }
    }
    func.return
  }
}
"""
"""A producer warp, a middle warpgroup and a consumer warpgroup linked by two 2-slot rings:
the consumer may lag the producer by both rings."""


def test_the_tail_covers_how_far_the_first_to_end_led_a_loop(monkeypatch):
    """In the longest run, the consumer's loop still has more iterations to go when the
    producer's ends than its own ring (2) says; the reduction's tail takes that lag, and the
    kernel is proven as with every count tried. (Run with the producer first: with the
    consumers first, the driver's quick order, it leads by no more than its ring.)"""
    monkeypatch.setattr(driver, "quick_order", lambda roles: tuple(range(roles)))
    lags: list[tuple[int, int]] = []
    original = choices.lag

    def recording(walk, loop, loops):
        found = original(walk, loop, loops)
        lags.append((found, walk.kernel.loops[loop].depth))
        return found

    monkeypatch.setattr(choices, "lag", recording)
    module = Parser(make_context(), CHAIN).parse_module()
    pruned = verdict(module)
    assert pruned == []
    assert any(lag > depth for lag, depth in lags), lags
    every_count(monkeypatch)
    assert verdict(Parser(make_context(), CHAIN).parse_module()) == pruned
