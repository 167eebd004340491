"""A tcgen05.ld whose start column is computed (an accumulator stage picked by an index), under
the protocol analysis and the interpreter alike, on lit_tests/dialects/copy/
protocol-tmem-columns.mlir and invalid-protocol-tmem-columns.mlir.

The proof keys the load by the columns it reaches from the column the walk computed (stage b
of two 64-column stages: columns 64 b to 64 b + 7), so the MMA still writing the other stage
is no false P14; the kernel runs race-free and bit-exact. Loading the stage whose barrier was
not waited for (`%acc[(1 - b) * 64]` after the wait on stage b's) is P14 at the load in both.
The corpus's `gemm_tcgen05_persistent` double-buffers its accumulator this way."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_dialect.errors import CopyDiagnosticError
from copy_tools.universe import make_context

LIT = Path(__file__).resolve().parents[2] / "lit_tests/dialects/copy"
PROVEN = (LIT / "protocol-tmem-columns.mlir").read_text()
BROKEN = (LIT / "invalid-protocol-tmem-columns.mlir").read_text().split("// -----")[0]
"""The file's first kernel (the MMA warp as role 0; the next lists the epilogue first)."""
SCHEDULES = ("random", "adversarial", "round_robin")
ROLE_LANES = [((1 + t // 32) % 4) * 32 + t % 32 for t in range(128)]
"""The TMEM lane of the epilogue role's thread t (warp 1 + t // 32 of the block)."""
K = 16
"""One tcgen05.mma of kind f16: K 16, the first 16 columns of the 64-wide tiles."""


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def operands(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, (128, 64)).astype(np.float16)
    b = rng.integers(-2, 3, (128, 64)).astype(np.float16)
    return [a, b, np.zeros((128, 16), np.float32)]


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_the_stage_picked_by_its_index_is_proven_and_runs_exact(schedule: str):
    module = parse(PROVEN)
    verify_module(module)  # no finding: the load of stage 0 does not meet stage 1's MMA
    a, b, c = operands(0)
    run = interpreter.run(module, a, b, c, schedule=schedule, seed=0)
    assert run.violations == [], [str(v) for v in run.violations]
    d = a[:, :K].astype(np.float32) @ b[:64, :K].astype(np.float32).T
    rows = d[ROLE_LANES, :8]
    np.testing.assert_array_equal(run.arrays[2], np.concatenate([rows, rows], axis=1))


def test_the_other_stage_is_caught_by_both():
    module = parse(BROKEN)
    with pytest.raises(CopyDiagnosticError) as found:
        verify_module(module)
    assert "P14" in found.value.rules
    assert found.value.message.split("'")[1] == "copy.tmem_load"
    for schedule in SCHEDULES:
        run = interpreter.run(parse(BROKEN), *operands(0), schedule=schedule, seed=0)
        hits = [v for v in run.violations if v.rule == "P14"]
        assert hits, (schedule, [str(v) for v in run.violations])
        assert hits[0].op.name == "copy.tmem_load"
