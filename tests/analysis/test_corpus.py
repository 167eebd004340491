"""The corpus of shipped kernels' data movement (tests/corpus/, issue N): each kernel parses
and passes the op verifiers and kernel rules, runs clean and bit-exact under the interpreter
against its numpy model, and is proven by the protocol analysis with no error and no
warning. A kernel the analysis cannot prove today is a strict xfail whose reason is the
finding it gives (shortened), so that it turns into a pass as issue N lands."""

from __future__ import annotations

import warnings
from functools import cache

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import interpreter
from analysis.protocol import check_protocol, render
from analysis.verify import verify_module
from copy_tools.universe import make_context
from tests.corpus import HERE, KERNELS, KINDS, Kernel

TODAY: dict[str, str] = {}
"""What the protocol analysis says today of the kernels it cannot prove (issue N, items
1-3). Each is a false finding: the interpreter runs the kernel clean."""

SCHEDULES = ("random", "adversarial", "round_robin")


@cache
def parsed(name: str) -> ModuleOp:
    kernel = next(k for k in KERNELS if k.name == name)
    return Parser(make_context(), kernel.text(), str(kernel.path)).parse_module()


def ids(kernel: Kernel) -> str:
    return kernel.name


def test_the_corpus_covers_issue_n():
    """At least 12 kernels, one file each, covering every kind issue N lists."""
    files = {p.stem for p in HERE.glob("*.mlir")}
    assert files == {k.name for k in KERNELS}
    assert len(KERNELS) >= 12
    covered = {kind for k in KERNELS for kind in k.kinds}
    assert set(KINDS) <= covered, set(KINDS) - covered
    for kernel in KERNELS:
        header = kernel.text().split("builtin.module")[0]
        assert "Protocol:" in header, kernel.name
        assert "Launch:" in header, kernel.name


@pytest.mark.parametrize("kernel", KERNELS, ids=ids)
def test_it_passes_the_op_verifiers_and_kernel_rules(kernel: Kernel):
    verify_module(parsed(kernel.name), protocol=False)


RUNS = [
    pytest.param(k, schedule, id=f"{k.name}-{schedule}")
    for k in KERNELS
    for schedule in (("adversarial",) if k.slow else SCHEDULES)
]
"""One run per schedule (the kernels ran clean under 10 seeds of each when written); the
slow kernels under the adversarial schedule only."""


@pytest.mark.parametrize(("kernel", "schedule"), RUNS)
def test_it_runs_clean_and_bit_exact(kernel: Kernel, schedule: str):
    arguments = kernel.arguments(np.random.default_rng(0))
    run = interpreter.run(
        parsed(kernel.name),
        *arguments,
        grid=kernel.grid,
        clusters=kernel.clusters,
        schedule=schedule,
        seed=0,
    )
    assert run.violations == [], [str(v) for v in run.violations]
    for index, expected in kernel.expected(arguments).items():
        assert np.array_equal(run.arrays[index], expected), index


@pytest.mark.parametrize(
    "kernel",
    [
        pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=TODAY[k.name]))
        if k.name in TODAY
        else k
        for k in KERNELS
    ],
    ids=ids,
)
def test_the_protocol_analysis_proves_it(kernel: Kernel):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        findings = check_protocol(parsed(kernel.name))
    assert findings == [], "\n\n".join(render(f) for f in findings)
