"""The oracle on a sample (tests/interpreter/oracle.py; scripts/oracle.py runs it all):
every kernel the protocol analysis proves runs clean under every schedule tried, except the
known failures of the analysis listed here, for issue N to fix."""

from __future__ import annotations

import pytest

from tests.interpreter import oracle

KNOWN_UNSOUND: dict[str, str] = {
    # (The fuzz generator changed at 1fef215: its leader-tracked loads wait in the leader
    # only, so the kernels behind each fuzz index changed too; this is scripts/oracle.py's
    # list at 7e60ca4.)
    # (lit/protocol-wgmma.mlir #0, #1 and #3 were here: a consumer role of warps 1-4, not a
    # warpgroup. The analysis now rejects that (P10, ops_mma.whole_warpgroups) and the file's
    # kernels take a producer warpgroup, warps [4, 4].)
}
"""Kernels the analysis proves that the interpreter catches breaking a rule: name -> why.
The kernels of the CPU suite's sample fail the test below unless listed here; the rest are
what scripts/oracle.py reports over the whole corpus."""


def cases():
    yield from oracle.example_cases()
    yield from oracle.builder_cases()
    yield from oracle.lit_cases()
    yield from oracle.fuzz_cases(120)


def test_what_the_analysis_proves_runs_clean(report):
    verdicts = [v for v in map(oracle.judge, cases()) if v is not None]
    unsound = [
        v for v in verdicts
        if v.analysis == "proved" and v.run == "violation" and v.case.name not in KNOWN_UNSOUND
    ]  # fmt: skip
    crashed = [v for v in verdicts if v.run == "error"]
    lines = oracle.table(verdicts).splitlines()
    missed = [v for v in verdicts if v.analysis == "rejected" and v.run == "clean"]
    lines += [f"rejected but clean: {v.case.name} {sorted(v.analysis_rules)}" for v in missed]
    report(f"oracle: {len(verdicts)} kernels", lines)
    assert not crashed, [(v.case.name, v.detail) for v in crashed]
    assert not unsound, [(v.case.name, sorted(v.run_rules), v.detail) for v in unsound]


def case_named(name: str) -> oracle.Case:
    if name.startswith("fuzz/"):
        _, seed, index = name.split("/")
        return list(oracle.fuzz_cases(int(index) + 1, int(seed)))[-1]
    return next(c for c in oracle.lit_cases() if c.name == name)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=why))
        for n, why in KNOWN_UNSOUND.items()
    ],
)
def test_known_unsound(name):
    """Each known failure of the analysis, until issue N turns it into a rejection or a
    warning (then this passes, and strict xfail fails: take it off the list)."""
    verdict = oracle.judge(case_named(name))
    assert verdict is not None
    assert verdict.cell != ("proved", "violation"), verdict.detail
