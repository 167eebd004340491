"""tcgen05.cp's read of SMEM under the interpreter: the read is the async proxy's, logged
with the epoch of the tcgen05.commit after it (as a tcgen05.mma's), so each kernel of
lit_tests/dialects/copy/invalid-protocol-tcgen05-cp.mlir, which the protocol analysis
rejects with a rule, breaks the same rule at the same op under every schedule: the copy
before the bulk copy filling its tile lands (P1), the tile rewritten by the threads before
the commit's phase completes (P2), the threads' writes not fenced before the copy (P4). With
the chunk's fix applied the kernel runs clean."""

from __future__ import annotations

import re
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
LIT = ROOT / "lit_tests" / "dialects" / "copy" / "invalid-protocol-tcgen05-cp.mlir"
SCHEDULES = ("round_robin", "random", "adversarial")
CHUNKS = LIT.read_text().split("// -----")


def rule_of(chunk: str) -> str:
    return re.search(r"// rule: (\S+)", chunk).group(1)


def arguments(chunk: str) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    if "memref<128x64xi2>" in chunk:  # the metadata: 64 i2 values a row, as bytes
        return [rng.integers(0, 256, (128, 16), np.uint8)]
    x = rng.integers(-(2**31), 2**31, (128, 4), dtype=np.int64).astype(np.int32)
    return [x, np.zeros_like(x)]


@pytest.mark.parametrize("chunk", CHUNKS, ids=rule_of)
def test_the_interpreter_breaks_the_rule_the_analysis_reports(chunk: str):
    rule = rule_of(chunk)
    with pytest.raises(CopyDiagnosticError) as found:
        verify_module(Parser(make_context(), chunk).parse_module())
    assert rule in found.value.rules
    at = found.value.message.split("'")[1]
    for schedule in SCHEDULES:
        module = Parser(make_context(), chunk).parse_module()
        run = interpreter.run(module, *arguments(chunk), schedule=schedule, seed=0)
        hits = [v for v in run.violations if v.rule == rule]
        assert hits, (schedule, [str(v) for v in run.violations])
        assert hits[0].op.name == at


@pytest.mark.parametrize("chunk", CHUNKS, ids=rule_of)
def test_the_fixed_kernel_runs_clean(chunk: str):
    module = Parser(make_context(), fixed_ir(chunk)).parse_module()
    verify_module(module)
    for schedule in SCHEDULES:
        module = Parser(make_context(), fixed_ir(chunk)).parse_module()
        run = interpreter.run(module, *arguments(chunk), schedule=schedule, seed=0)
        assert run.violations == [], (schedule, [str(v) for v in run.violations])
