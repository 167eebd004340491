"""tcgen05.shift and TMEM slices in the ordering checks, under the protocol analysis and the
interpreter alike, on the kernels of lit_tests/dialects/copy/protocol-tmem-views.mlir and
invalid-protocol-tmem-views.mlir themselves.

The proven kernels (a shift between warp-specialized roles, committed and fenced; two
accumulators as slices of one allocation; an MMA into one slice whose issuer does not fence
after the hand-off of a disjoint slice; a store through one slice and a load of a disjoint one
before the store's wait) run race-free under every schedule with their results bit-exact
(small integers: f32 sums exact). Each negative chunk, which the analysis rejects with P14 or
P12 at an op, breaks the same rule at an op of the same name at run time under every
schedule: the shift is an asynchronous TMEM write that only a tcgen05.commit ends
(`interpreter/tmem_order.py`), and the interpreter keys tcgen05.st waits by columns
(`interpreter/ops_tmem.py`), as the analysis keys both by allocation and the slice's
columns. In a kernel without roles the block is one agent of the interpreter: its thread 0's
shift, read by the block's warps before a wait observed a commit after it, is P14 there
(`tmem_order.check_own`), as the proof finds it between its two classes."""

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
LIT = ROOT / "lit_tests/dialects/copy"
PROVEN = (LIT / "protocol-tmem-views.mlir").read_text().split("// -----")
SHIFT, TWO, DISJOINT, STORE_LOAD, BLOCK_SHIFT = PROVEN
BROKEN = (LIT / "invalid-protocol-tmem-views.mlir").read_text().split("// -----")
RULES = ("P14", "P14", "P14", "P14", "P12", "P12", "P14", "P14")
"""The rule of each negative chunk, in the file's order."""
EITHER = {7: "copy.tmem_shift"}
"""Chunks whose two accesses no sync orders at all: the interpreter reports the race at
whichever of them a schedule issues second."""
SCHEDULES = ("random", "adversarial", "round_robin")
K = 16
"""One tcgen05.mma of kind f16: K 16, the first 16 columns of the 64-wide tiles."""
ROLE_LANES = [((1 + t // 32) % 4) * 32 + t % 32 for t in range(128)]
"""The TMEM lane of the epilogue role's thread t (warp 1 + t // 32 of the block): its
warp's quarter."""


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def ints(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-(2**31), 2**31, (128, 32), dtype=np.int64).astype(np.int32)


def operands(seed: int, columns: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, (128, 64)).astype(np.float16)
    b = rng.integers(-2, 3, (128, 64)).astype(np.float16)
    return [a, b, np.zeros((128, columns), np.float32)]


def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """D of one MMA of N 64 (B's first 64 rows), as the epilogue role's rows see it."""
    d = a[:, :K].astype(np.float32) @ b[:64, :K].astype(np.float32).T
    return d[ROLE_LANES, :8]


def inputs(text: str, seed: int) -> list[np.ndarray]:
    if "@two_accumulators" in text:
        return operands(seed, 16)
    if "@disjoint_handoff" in text:
        return operands(seed, 8)
    x = ints(seed)
    return [x, np.zeros_like(x)]


@pytest.mark.parametrize("text", PROVEN)
def test_proven_kernels_are_proven(text: str):
    verify_module(parse(text))


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("seed", [0, 1])
def test_role_shift_runs_exact(schedule: str, seed: int):
    """The epilogue's rows land at their warps' lanes, the MMA warp's shift moves columns
    8-15 one lane down (lane 0 keeps its own: the interpreter's choice), the rows read back."""
    x, y = inputs(SHIFT, seed)
    run = interpreter.run(parse(SHIFT), x, y, schedule=schedule, seed=seed)
    assert run.violations == [], [str(v) for v in run.violations]
    tmem = np.zeros_like(x)
    tmem[ROLE_LANES] = x
    tmem[1:, 8:16] = tmem[:-1, 8:16].copy()
    np.testing.assert_array_equal(run.arrays[1], tmem[ROLE_LANES])


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_block_shift_runs_exact(schedule: str):
    """The block's thread 0 shifts what every warp stored (thread t at lane t), commits; the
    block waits, fences and loads back."""
    x, y = inputs(BLOCK_SHIFT, 3)
    run = interpreter.run(parse(BLOCK_SHIFT), x, y, schedule=schedule, seed=3)
    assert run.violations == [], [str(v) for v in run.violations]
    expected = x.copy()
    expected[1:, 8:16] = x[:-1, 8:16]
    np.testing.assert_array_equal(run.arrays[1], expected)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_two_accumulators_run_exact(schedule: str):
    a, b, c = inputs(TWO, 0)
    run = interpreter.run(parse(TWO), a, b, c, schedule=schedule, seed=0)
    assert run.violations == [], [str(v) for v in run.violations]
    d = product(a, b)
    np.testing.assert_array_equal(run.arrays[2], np.concatenate([d, d], axis=1))


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_disjoint_handoff_runs_exact(schedule: str):
    """The MMA warp's unfenced MMA into one slice and the epilogue's bias in the other: no
    finding and no race; the bias does not reach the product."""
    a, b, c = inputs(DISJOINT, 1)
    run = interpreter.run(parse(DISJOINT), a, b, c, schedule=schedule, seed=1)
    assert run.violations == [], [str(v) for v in run.violations]
    np.testing.assert_array_equal(run.arrays[2], product(a, b))


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_disjoint_store_load_runs_exact(schedule: str):
    x, y = inputs(STORE_LOAD, 2)
    run = interpreter.run(parse(STORE_LOAD), x, y, schedule=schedule, seed=2)
    assert run.violations == [], [str(v) for v in run.violations]
    np.testing.assert_array_equal(run.arrays[1], x)  # thread t's warp quarter holds lane t


@pytest.mark.parametrize("index", range(len(RULES)))
def test_broken_kernel_caught_by_both(index: int):
    text = BROKEN[index]
    rule = RULES[index]
    assert f"// rule: {rule}" in text
    module = parse(text)
    with pytest.raises(CopyDiagnosticError) as found:
        verify_module(module)
    assert rule in found.value.rules
    flagged = found.value.message.split("'")[1]
    for schedule in SCHEDULES:
        run = interpreter.run(module, *inputs(text, 0), schedule=schedule, seed=index)
        hits = [v for v in run.violations if v.rule == rule]
        assert hits, (schedule, [str(v) for v in run.violations])
        assert hits[0].op.name in (flagged, EITHER.get(index)), (hits[0].op.name, flagged)


def test_every_broken_chunk_is_run():
    assert len(BROKEN) == len(RULES)
