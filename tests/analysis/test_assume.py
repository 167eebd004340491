"""copy.assume and the protocol analysis (issue N, item 1): a loop bound assumed >= 1 is not
tried as 0 iterations, so a kernel whose prologue waits for the loop's first load (FA3's
K[0]) is proven instead of getting a false P6; the driver's options keep to the facts; the
interpreter reports a broken fact (AS3)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from xdsl.dialects import func, scf
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


# ---- what the IR proves: a constant divided by an unknown takes the constant's quotients ---


def quotient_of(division: str, dividend: int) -> tuple[func.FuncOp, object]:
    """`for i = 0 to n` with n = `division` of the constant by gpu.grid_dim z."""
    text = str(blocks(None)).replace(
        "%n = arith.divui %rows, %c128 : index",
        f"%dividend = arith.constant {dividend} : index\n"
        '    %splits = "gpu.grid_dim"() <{dimension = #gpu<dim z>}> : () -> index\n'
        f"    %n = {division} %dividend, %splits : index",
    )
    module = Parser(make_context(), text).parse_module()
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    n = next(op for op in fn.walk() if op.results and op.results[0].name_hint == "n")
    return fn, n.results[0]


@pytest.mark.parametrize(
    ("division", "ceil"),
    [
        ("arith.divui", False),
        ("arith.divsi", False),
        ("arith.floordivsi", False),
        ("arith.ceildivui", True),
        ("arith.ceildivsi", True),
    ],  # fmt: skip
)
@pytest.mark.parametrize("dividend", [0, 1, 2, 7, 16, 17, 96, 100, 1000])
def test_the_bounds_tried_are_the_quotients_of_a_constant(division, ceil, dividend):
    """Every quotient by a divisor of 1 .. dividend + 2 (a larger one rounds as these do),
    with 0 for a signed division (a negative divisor), and no other bound of the 40 counts
    the driver would try."""
    fn, n = quotient_of(division, dividend)
    quotients = {-(-dividend // d) if ceil else dividend // d for d in range(1, dividend + 3)}
    if "si" in division:
        quotients.add(0)
    tried = Assumptions.of(fn).trips(n, 0, 1, 40)
    # where 40 iterations are not a quotient, the first longer one stands in for them
    longer = [min(q for q in quotients if q > 40)] if max(quotients) > 40 else []
    assert tried == sorted(q for q in quotients if q <= 40) + (
        longer if 40 not in quotients else []
    )


def test_a_quotient_of_0_is_tried_where_a_divisor_above_the_constant_gives_it():
    # 16 / splits is 0 for 17 splits: the consumers' wait for block 0 never returns (P6).
    fn, _ = quotient_of("arith.divui", 16)
    found = findings(fn.parent_op())
    assert any("never" in f and "%n = 0" in f for f in found), found
    # rounded up, 16 / splits is at least 1: proven
    fn, _ = quotient_of("arith.ceildivui", 16)
    assert findings(fn.parent_op()) == []


@pytest.mark.parametrize("division", ["arith.divui", "arith.ceildivui"])
def test_a_mistake_is_still_found_among_the_quotients(division: str):
    fn, _ = quotient_of(division, 16)
    text = str(fn.parent_op()).replace(
        "copy.barrier_wait %empty[%c0], %acquire", "copy.barrier_wait %empty[%c0], %phase"
    )
    found = findings(Parser(make_context(), text).parse_module())
    assert any("P" in f for f in found), found


def test_the_split_k_corpus_kernel_tries_the_quotients_of_its_k_blocks(monkeypatch):
    """`k_tiles = 16 / gridDim.z`: the counts 0, 1, 2, 3, 4, 5, 8, 16, each walked (no
    steady state needed), not 0 .. 32."""
    import analysis.protocol.analysis as driver

    tried: set[tuple[int, ...]] = set()
    original = driver.run_kernel

    def counting(kernel, bindings, report, *args):
        tried.add(tuple(bindings.values()))
        return original(kernel, bindings, report, *args)

    monkeypatch.setattr(driver, "run_kernel", counting)
    kernel = next(k for k in KERNELS if k.name == "gemm_split_k")
    module = Parser(make_context(), kernel.text()).parse_module()
    assert findings(module) == []
    assert sorted(t for t in tried if t) == [(q,) for q in (0, 1, 2, 3, 4, 5, 8, 16)]


RUNTIME_K = (
    "%kd = memref.dim %C, %c1 : memref<?x?xf32>\n"
    "    %k_tiles = arith.divui %kd, %c128 : index\n"
    "    copy.assume %k_tiles multiple_of 8 : index\n"
    "    copy.assume %k_tiles ge 8 : index"
)
"""gemm_persistent's K-block count from C's width instead of the constant 8, stated a
multiple of the ring's two laps (2 x 4 slots) and at least 8."""


@pytest.mark.parametrize("mistake", [None, "staging wait", "full wait"])
def test_a_persistent_gemm_with_a_runtime_k_is_proven_under_a_divisibility_fact(mistake):
    """The persistent tile loop around a K loop whose count is not a constant: without a
    fact the runs with K = 0 leave it unproven (a P10 warning naming `ge 1`, which proves
    it in 261 runs: every K tried under each tile count that must run). With the K-block count
    stated a multiple of 8, the ring's two laps, every tile starts at slot 0 in phase 0 and
    the kernel is proven; a mistake under the fact is still found: the epilogue's wait for the
    previous tile's store before it rewrites the staging buffer, or a consumer's wait for a
    slot's load, removed."""
    kernel = next(k for k in KERNELS if k.name == "gemm_persistent")
    text = kernel.text().replace("%k_tiles = arith.constant 8 : index", RUNTIME_K)
    assert "copy.assume %k_tiles multiple_of 8" in text
    if mistake == "staging wait":
        staging = "copy.wait_group bulk 0 read_only\n        scf.for %c"
        assert staging in text
        text = text.replace(staging, "scf.for %c")
    elif mistake == "full wait":
        wait = "          copy.barrier_wait %full[%s], %phase : !copy.barrier<4>\n          %sa"
        assert wait in text
        text = text.replace(wait, "          %sa")
    found = findings(Parser(make_context(), text).parse_module())
    if mistake is None:
        assert found == []
    else:
        assert found, mistake
        assert all("P10" not in f for f in found), found


@pytest.mark.parametrize(
    ("facts", "period", "depth"),
    [
        ("", 4, 4),
        ("copy.assume %k_tiles multiple_of 8 : index", 1, 4),
        ("copy.assume %k_tiles multiple_of 8 : index\n    copy.assume %k_tiles ge 8 : index", 1, 1),
        ("copy.assume %k_tiles multiple_of 2 : index\n    copy.assume %k_tiles ge 2 : index", 2, 2),
    ],
)
def test_the_facts_about_a_runtime_k_shorten_the_tile_loops_lap_and_reach(facts, period, depth):
    """The tile loop of gemm_persistent with a runtime K carries the ring position
    `it0 + k_tiles`: its slots and parities (relative to their barriers' phases,
    `Forms.parity`) repeat every 4 tiles for an arbitrary K (the ring's 4 slots), every
    4 / gcd(m, 4) tiles for a K stated a multiple of m (`periods.rem` of a counter whose
    step is a multiple of m), and the ring's
    4 slots reach across ceil(4 / lo) tiles for a K stated at least lo (`depths.advance`),
    else across 4: the driver walks and compares fewer tiles, and stays sound for every K
    the facts allow."""
    from analysis.protocol.analysis import kernel_facts, protocol_ops

    kernel = next(k for k in KERNELS if k.name == "gemm_persistent")
    runtime = RUNTIME_K.split("\n    copy.assume")[0]
    text = kernel.text().replace(
        "%k_tiles = arith.constant 8 : index", f"{runtime}\n    {facts}" if facts else runtime
    )
    module = Parser(make_context(), text).parse_module()
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    facts_of = kernel_facts(fn, protocol_ops(fn))
    tiles = [loop for loop in facts_of.loops
             if isinstance(loop, scf.ForOp) and loop.lb.owner.name == "gpu.block_id"]  # fmt: skip
    assert len(tiles) == 2  # the producer's and the consumer's
    for loop in tiles:
        shape = facts_of.loops[loop]
        assert (shape.lap.period, shape.depth) == (period, depth)
    if not facts:
        return  # (the K = 0 warning: test_a_runtime_k_of_0_does_not_make_every_tile_count_...)
    found = findings(module)
    if "ge" in facts:
        assert found == []
    else:
        # K = 0 is a multiple of 8: with no k-block a tile the producer finishes every tile
        # before the consumer starts (beyond the ring's reach), so the longest run is not
        # the start of a longer one; the note names the fact that keeps the loops in step
        assert len(found) == 1, found
        assert "P10" in found[0], found
        assert "copy.assume %k_tiles ge 1 : index" in found[0], found
        fixed = text.replace(facts, f"{facts}\n    copy.assume %k_tiles ge 1 : index")
        assert findings(Parser(make_context(), fixed).parse_module()) == []


def test_too_many_runs_of_a_runtime_k_note_the_facts_that_prove_it(monkeypatch):
    """gemm_persistent with a runtime K and no fact: every K is tried under the tile counts
    that must run (269 runs), past the driver's limit lowered here to 5 runs. The P10
    warning's note names the facts that prove it, and stating them as written proves the
    kernel (`choices.nested_count`)."""
    import re

    import analysis.protocol.analysis as driver

    kernel = next(k for k in KERNELS if k.name == "gemm_persistent")
    runtime = RUNTIME_K.split("\n    copy.assume")[0]
    text = kernel.text().replace("%k_tiles = arith.constant 8 : index", runtime)
    monkeypatch.setattr(driver, "MAX_RUNS", 5)
    [warned] = check_protocol(Parser(make_context(), text).parse_module())
    assert warned.severity == "warning"
    assert warned.rules == ("P10",)
    facts = re.findall(r"copy\.assume [^)]*? : index", warned.note)
    assert facts == ["copy.assume %k_tiles multiple_of 8 : index",
                     "copy.assume %k_tiles ge 8 : index"], warned.note  # fmt: skip
    monkeypatch.undo()
    definition = "%k_tiles = arith.divui %kd, %c128 : index"
    fixed = text.replace(definition, "\n    ".join([definition, *facts]))
    assert findings(Parser(make_context(), fixed).parse_module()) == []


def test_a_runtime_k_of_0_does_not_make_every_tile_count_run_under_every_k(monkeypatch):
    """gemm_persistent with a runtime K and no fact: the runs with K = 0 (no k-block a
    tile: the producer finishes every tile before the consumer starts, its loops meet no
    ring) leave the tile counts above those tried uncovered, which the P10 warning reports
    with the fact that rules the 0 out; the runs of the other K still settle which tile
    counts must run (before, a K of 0 made every tile count run under every K: past the
    driver's 512 runs, after 18 s, with a note asking for K a multiple of 8). Stating the
    fact as the note writes it proves the kernel for every K of at least 1."""
    import analysis.protocol.analysis as driver

    runs = 0
    run_kernel = driver.run_kernel

    def counting(*args, **kwargs):
        nonlocal runs
        runs += 1
        return run_kernel(*args, **kwargs)

    monkeypatch.setattr(driver, "run_kernel", counting)
    kernel = next(k for k in KERNELS if k.name == "gemm_persistent")
    definition = "%k_tiles = arith.divui %kd, %c128 : index"
    runtime = RUNTIME_K.split("\n    copy.assume")[0]
    text = kernel.text().replace("%k_tiles = arith.constant 8 : index", runtime)
    [warned] = check_protocol(Parser(make_context(), text).parse_module())
    assert warned.severity == "warning"
    assert warned.rules == ("P10",)
    assert "in the runs with %k_tiles = 0 the loops meet no ring" in warned.note, warned.note
    assert "copy.assume %k_tiles ge 1 : index" in warned.note, warned.note
    assert runs < driver.MAX_RUNS
    fact = "copy.assume %k_tiles ge 1 : index"
    fixed = text.replace(definition, f"{definition}\n    {fact}")
    assert findings(Parser(make_context(), fixed).parse_module()) == []
