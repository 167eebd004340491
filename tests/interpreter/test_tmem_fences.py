"""P14 under the interpreter: TMEM handed between warp-specialized roles with and without the
tcgen05 fences (interpreter/tmem_order.py), on the kernels of
lit_tests/dialects/copy/protocol-tmem.mlir and invalid-protocol-tmem.mlir themselves.

The proven kernel (an epilogue role stores a bias into the accumulator, fences and arrives;
the MMA warp waits, fences, accumulates one tcgen05.mma of K 16 onto it and commits; the
epilogue waits, fences and loads) runs race-free under every schedule and leaves
1 + A[:, :16] B[:, :16]^T bit-exact (small integers: f32 sums exact). Each negative chunk,
which the protocol analysis rejects with P14 at an op, breaks P14 at the same op at run time
under every schedule. The CTA pair of the same files: the leader's tcgen05.commit multicast
to both CTAs' barriers (mask 3) runs bit-exact; a mask missing the peer hangs it, and one
beyond the pair is refused, under the proof and the interpreter alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_dialect.errors import CopyDiagnosticError
from copy_tools.universe import make_context

ROOT = Path(__file__).resolve().parents[2]
PROVEN, PAIR, LATER = (
    (ROOT / "lit_tests/dialects/copy/protocol-tmem.mlir").read_text().split("// -----")
)
"""The proven kernels: the hand-off, the CTA pair's commit, and an MMA known done through a
later commit of its thread (FA4's S and P in one TMEM buffer)."""
CHUNKS = (ROOT / "lit_tests/dialects/copy/invalid-protocol-tmem.mlir").read_text().split("// -----")
BROKEN, PAIR_BROKEN = CHUNKS[:4], CHUNKS[4:]
"""The P14 chunks, and the CTA pair's commit masks (the peer missing: P6; beyond the pair:
P5)."""
SCHEDULES = ("random", "adversarial", "round_robin")
K = 16
"""One tcgen05.mma of kind f16: K 16, the first 16 columns of the 64-wide tiles."""


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def inputs(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, (128, 64)).astype(np.float16)
    b = rng.integers(-2, 3, (128, 64)).astype(np.float16)
    return [a, b, np.zeros((128, 8), np.float32)]


def expected(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row t of C: the epilogue role's thread t (warp 1 + t // 32 of the block) loads lane
    32 ((1 + t // 32) % 4) + t % 32 of TMEM, its warp's quarter; columns 0-7."""
    d = 1 + a[:, :K].astype(np.float32) @ b[:, :K].astype(np.float32).T
    lanes = [((1 + t // 32) % 4) * 32 + t % 32 for t in range(128)]
    return d[lanes, :8]


def test_proven_kernel_is_proven():
    verify_module(parse(PROVEN))


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_proven_kernel_runs_race_free_and_exact(schedule: str, seed: int):
    a, b, c = inputs(seed)
    run = interpreter.run(parse(PROVEN), a, b, c, schedule=schedule, seed=seed)
    assert run.violations == [], [str(v) for v in run.violations]
    assert np.array_equal(run.arrays[2], expected(a, b))


@pytest.mark.parametrize("index", range(len(BROKEN)))
def test_broken_kernel_caught_by_both(index: int):
    module = parse(BROKEN[index])
    with pytest.raises(CopyDiagnosticError) as found:
        verify_module(module)
    assert "P14" in found.value.rules
    flagged = found.value.message.split("'")[1]
    for schedule in SCHEDULES:
        run = interpreter.run(module, *inputs(0), schedule=schedule, seed=index)
        p14 = [v for v in run.violations if v.rule == "P14"]
        assert p14, (schedule, [str(v) for v in run.violations])
        assert p14[0].op.name == flagged, (p14[0].op.name, flagged)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_an_mma_known_done_through_a_later_commit_runs_race_free(schedule: str):
    """The MMA warp commits its S MMA to two barriers of one group (the second by a
    constant `llvm.getelementptr`) and learns only the second, through the softmax's
    arrival, before its PV MMA reads P over S's columns: the analysis proves it and every
    run is clean; the commit through the constant index arrives where the softmax waits."""
    module = parse(LATER)
    verify_module(module)
    rng = np.random.default_rng(0)
    a = rng.integers(-2, 3, (128, 64)).astype(np.float16)
    b, v = (rng.integers(-2, 3, (64, 64)).astype(np.float16) for _ in range(2))
    run = interpreter.run(module, a, b, v, np.zeros((128, 8), np.float32), schedule=schedule)
    assert run.violations == [], [str(x) for x in run.violations]


def test_every_broken_chunk_is_run():
    assert len(BROKEN) == 4
    assert len(PAIR_BROKEN) == 2


def pair_inputs(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, (256, 64)).astype(np.float16)
    b = rng.integers(-2, 3, (256, 64)).astype(np.float16)
    return [a, b, np.zeros((256, 8), np.float32)]


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("seed", [0, 1])
def test_pair_commit_multicast_runs_exact(schedule: str, seed: int):
    """The CTA pair: the leader's M 256 MMA reads A's rows from both CTAs and 64 rows of B
    from each (CTA i's slot holds B's rows 128 i ..: its first 64 are read), writes D's rows
    128 i .. to CTA i's TMEM, and its commit (mask 3) lets both epilogues read them."""
    a, b, c = pair_inputs(seed)
    run = interpreter.run(parse(PAIR), a, b, c, grid=(2, 1, 1), schedule=schedule, seed=seed)
    assert run.violations == [], [str(v) for v in run.violations]
    b_read = np.concatenate([b[0:64], b[128:192]])
    d = a[:, :K].astype(np.float32) @ b_read[:, :K].astype(np.float32).T
    lanes = [((1 + t // 32) % 4) * 32 + t % 32 for t in range(128)]
    assert np.array_equal(run.arrays[2], np.concatenate([d[:128][lanes, :8], d[128:][lanes, :8]]))


@pytest.mark.parametrize(("index", "rule"), [(0, "P6"), (1, "P5")])
def test_pair_commit_mask_caught_by_both(index: int, rule: str):
    """The mask missing the peer (its epilogue waits forever: the analysis's P6 at the
    cluster barrier, the interpreter's hang) and a mask beyond the pair (P5)."""
    module = parse(PAIR_BROKEN[index])
    with pytest.raises(CopyDiagnosticError) as found:
        verify_module(module)
    assert rule in found.value.rules
    run = interpreter.run(module, *pair_inputs(0), grid=(2, 1, 1), seed=index)
    assert rule in {v.rule for v in run.violations}, [str(v) for v in run.violations]


EARLY = "nvvm.tcgen05.commit %done_ptr, multicast_mask = %mask {group = #nvvm.cta_group<cta_2>}"
MMA = "nvvm.tcgen05.mma %d, %da, %db, %idesc, %false"
OVERWRITE = """      %not_leader = arith.cmpi ne, %rank, %c0 : index
      scf.if %not_leader {
        %z = arith.constant 0.0 : f16
        memref.store %z, %smem_a[%c0, %t, %c0] : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
      }
"""


def early_commit_pair() -> str:
    """The pair with a commit to %done before the MMA too (it tracks nothing: its phase comes
    at once), after which the peer's epilogue overwrites its A slot, which the leader's MMA
    reads (the pair MMA reads both CTAs' SMEM) with nothing ordering the two."""
    text = PAIR
    first = text.index(MMA)
    line = text.rindex("\n", 0, first) + 1
    commit = text[text.index(EARLY) : text.index("\n", text.index(EARLY))]
    text = text[:line] + " " * 10 + commit + "\n" + text[line:]
    start = text.index("      nvvm.tcgen05.fence <after>\n      %v = copy.tmem_load")
    end = text.index("      nvvm.tcgen05.fence <before>\n    }")
    return text[:start] + OVERWRITE + text[end:]


def test_pair_mma_reads_the_peers_smem():
    module = parse(early_commit_pair())
    with pytest.raises(CopyDiagnosticError) as found:
        verify_module(module)
    # The leader's MMA reads the peer's slot after the peer's threads wrote it (P4 here,
    # where the walk meets the write first; P2 where it meets the read first).
    assert "of the CTA pair (from CTA 0) reads %smem_a[0]" in found.value.message
    assert found.value.rules == ("P4",)
    for schedule in SCHEDULES:
        run = interpreter.run(module, *pair_inputs(0), grid=(2, 1, 1), schedule=schedule)
        races = [v for v in run.violations if v.rule == "P2" and v.op.name == "memref.store"]
        assert races, [str(v) for v in run.violations]


def test_pair_peer_without_after_fence():
    """The pair whose after fence only the leader's epilogue issues: CTA 1's tcgen05.ld of
    the D rows the leader's MMA wrote into its TMEM is P14, for the proof (a pair MMA's TMEM
    write is kept in both CTAs' states) and the interpreter (agents of both CTAs compared)."""
    wait = "      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>\n"
    fence = "      nvvm.tcgen05.fence <after>\n"
    assert wait + fence in PAIR
    guarded = "      scf.if %is_leader {\n  " + fence + "      }\n"
    module = parse(PAIR.replace(wait + fence, wait + guarded, 1))
    with pytest.raises(CopyDiagnosticError) as found:
        verify_module(module)
    assert found.value.rules == ("P14",)
    assert "of CTA 1 accesses TMEM that role 0 of CTA 0's nvvm.tcgen05.mma" in found.value.message
    for schedule in SCHEDULES:
        run = interpreter.run(module, *pair_inputs(0), grid=(2, 1, 1), schedule=schedule)
        p14 = [v for v in run.violations if v.rule == "P14"]
        assert p14, [str(v) for v in run.violations]
        assert p14[0].op.name == "copy.tmem_load"
        assert "(1, 0, 0)" in str(p14[0])
