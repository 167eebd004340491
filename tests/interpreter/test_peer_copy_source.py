"""A peer copy (`copy.peer_copy`, cp.async.bulk.shared::cluster.shared::cta) reads its source
in the sender's SMEM until the receiver's barrier phase completes, which the sender learns
only from the receiver. The exchange of lit_tests/dialects/copy/protocol-dsmem.mlir (each CTA
of a pair sends its tile to the other, which arrives back on the sender's %done after its
wait) is proven and runs bit-exact and race-free under the interpreter; the same exchange
refilling its source with its next rows once its own receive has landed, before the peer's
%done, is P2 for both the analysis and the interpreter, at the refill; returning then, with
no handshake, is P7 for both (the interpreter names the copy in flight at the return, the
analysis the return); each fix runs clean."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_dialect.errors import CopyDiagnosticError
from copy_tools.universe import make_context
from tests.tools.test_fix_notes import fixed_ir

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "lit_tests" / "dialects" / "copy" / "protocol-dsmem.mlir"
SCHEDULES = ("round_robin", "random", "adversarial")
CHUNKS = LIT.read_text().split("// -----")
EXCHANGE = next(c for c in CHUNKS if "@exchange_by_bulk_copy" in c)
REFILLED = next(c for c in CHUNKS if "@p2_source_refilled_before_the_peer_has_it" in c)
RETURNED = next(c for c in CHUNKS if "@p7_return_while_the_peer_copy_reads" in c)


def kernel(chunk: str, fix: bool = False):
    text = chunk.replace("copy.target = #copy.target<\"sm_90a\">}", "copy.target = "
                         "#copy.target<\"sm_90a\">, gpu.kernel}")  # fmt: skip
    if fix:
        text = fixed_ir(text)
    return Parser(make_context(), text).parse_module()


def inputs() -> list[np.ndarray]:
    x = np.random.default_rng(5).integers(-8, 9, (256, 256)).astype(np.float32)
    return [x, np.zeros_like(x)]


def expected(x: np.ndarray, rows: int) -> np.ndarray:
    """CTA b stores what it received (the peer's columns 64 (b ^ 1) ...) at rows 0-63 of its
    columns 64 b ..., and, refilled, its own next rows 64-127 there."""
    y = np.zeros_like(x)
    for b in (0, 1):
        mine, theirs = slice(64 * b, 64 * b + 64), slice(64 * (b ^ 1), 64 * (b ^ 1) + 64)
        y[0:64, mine] = x[0:64, theirs]
        if rows > 64:
            y[64:128, mine] = x[64:128, mine]
    return y


def runs_exact(chunk: str, rows: int, fix: bool = False, schedule: str = "random") -> None:
    """`chunk` is proven, and runs race-free with the output `expected(x, rows)`."""
    verify_module(kernel(chunk, fix))
    x, y = inputs()
    run = interpreter.run(kernel(chunk, fix), x, y, grid=(2, 1, 1), schedule=schedule)
    assert run.violations == [], [str(v) for v in run.violations]
    np.testing.assert_array_equal(run.arrays[1], expected(x, rows))


def caught_by_both(chunk: str, rule: str, at: str) -> tuple[CopyDiagnosticError, list]:
    """The analysis rejects `chunk` with `rule` alone, and under every schedule the
    interpreter breaks `rule`, first at the op named `at`: the error and those first hits."""
    with pytest.raises(CopyDiagnosticError) as found:
        verify_module(kernel(chunk))
    assert found.value.rules == (rule,)
    firsts = []
    for schedule in SCHEDULES:
        run = interpreter.run(kernel(chunk), *inputs(), grid=(2, 1, 1), schedule=schedule)
        hits = [v for v in run.violations if v.rule == rule]
        assert hits, (schedule, [str(v) for v in run.violations])
        assert hits[0].op.name == at
        firsts.append(hits[0])
    return found.value, firsts


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_the_exchange_is_proven_and_runs_exact(schedule: str):
    runs_exact(EXCHANGE, 64, schedule=schedule)


def test_a_source_refilled_before_the_peer_has_it_is_caught_by_both():
    error, firsts = caught_by_both(REFILLED, "P2", "copy.async_copy")
    assert error.message.split("'")[1] == "copy.async_copy"
    assert all(hit.other.name == "copy.peer_copy" for hit in firsts)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_the_fixed_refill_runs_exact(schedule: str):
    runs_exact(REFILLED, 128, fix=True, schedule=schedule)


def test_a_return_while_the_copy_reads_is_caught_by_both():
    caught_by_both(RETURNED, "P7", "copy.peer_copy")
    runs_exact(RETURNED, 64, fix=True)
