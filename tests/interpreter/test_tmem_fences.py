"""P14 under the interpreter: TMEM handed between warp-specialized roles with and without the
tcgen05 fences (interpreter/tmem_order.py), on the kernels of
lit_tests/dialects/copy/protocol-tmem.mlir and invalid-protocol-tmem.mlir themselves.

The proven kernel (an epilogue role stores a bias into the accumulator, fences and arrives;
the MMA warp waits, fences, accumulates one tcgen05.mma of K 16 onto it and commits; the
epilogue waits, fences and loads) runs race-free under every schedule and leaves
1 + A[:, :16] B[:, :16]^T bit-exact (small integers: f32 sums exact). Each negative chunk,
which the protocol analysis rejects with P14 at an op, breaks P14 at the same op at run time
under every schedule."""

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
PROVEN = (ROOT / "lit_tests/dialects/copy/protocol-tmem.mlir").read_text().split("// -----")[0]
BROKEN = (ROOT / "lit_tests/dialects/copy/invalid-protocol-tmem.mlir").read_text().split("// -----")
BROKEN = BROKEN[:4]
"""The P14 chunks (the CTA pair's are the multicast commit's, not modelled here)."""
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


def test_every_broken_chunk_is_run():
    assert len(BROKEN) == 4
