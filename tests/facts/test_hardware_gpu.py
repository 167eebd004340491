"""The facts of facts/hardware.toml, measured again on this GPU by
scripts/measure_hardware.py: every measurement must agree with the file (on an H200; on
another GPU a difference is a finding to record in docs/hardware.md, not a bug). Skipped
without a GPU: the interpreter has no hardware to measure."""

from __future__ import annotations

from pathlib import Path

from tests import device
from tests.facts.test_hardware import harness

pytestmark = device.marks(
    interpreted="cannot stand in for a measurement of the hardware (the driver's tensor-map "
    "encoder, the GPU's store overrun and reductions)"
)


def disagreements(results) -> str:
    return "\n".join(r.line() for r in results if not r.ok)


def test_the_encoder_limits(tmp_path: Path):
    results = harness().MEASURE["encoder"](tmp_path)
    assert len(results) > 30
    assert all(r.ok for r in results), disagreements(results)


def test_the_store_overrun(tmp_path: Path):
    results = harness().MEASURE["store-overrun"](tmp_path)
    assert len(results) == 11
    assert all(r.ok for r in results), disagreements(results)


def test_the_reduction_table(tmp_path: Path):
    results = harness().MEASURE["reductions"](tmp_path)
    assert len(results) == 13 * 8
    assert all(r.ok for r in results), disagreements(results)
