"""kernels.tmem_pipeline (issue 33 item 4): a TMEM pipeline on tcgen05, one CTA and a CTA
pair. TMA loads into a ring, the MMA warp's tcgen05.mma into TMEM (four of K 16 a k-block),
tcgen05.commit to the slot's empty barrier and, after the last k-block, to the accumulator
barrier (with a pair: multicast to both CTAs, mask 3, and an M 256 MMA of cta_group 2),
epilogue warps that fence, tcgen05.ld the accumulator and store C.

Each configuration is proven by the protocol analysis with no finding (the builder
verifies), runs under the interpreter race-free and bit-exact against numpy (small integers:
every f32 sum is exact) under its three schedules, and lowers and assembles for every target
with tcgen05 (nvJitLink; ptxas where on PATH). Mutations of the built IR are rejected by the
proof and caught by the interpreter: the epilogue's after fence removed (P14), the pair's
commit multicast to the leader alone (CTA 1's epilogue hangs: P6)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_dialect.errors import CopyDiagnosticError
from copy_tools import runtime
from copy_tools.universe import make_context
from facts.errors import ArgumentError
from facts.target import TCGEN05
from frontends import kernels
from passes.pipeline import compile_module
from tests.ptxas import check_ptxas

SCHEDULES = ("random", "adversarial", "round_robin")
CONFIGS = [
    # k, n, stages, cluster
    (64, 16, 1, 1),
    (256, 64, 2, 1),
    (512, 256, 3, 1),
    (256, 32, 2, 2),
    (512, 128, 4, 2),
]


def inputs(k: int, n: int, cluster: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, (128 * cluster, k)).astype(np.float16)
    b = rng.integers(-2, 3, (n, k)).astype(np.float16)
    return [a, b, np.zeros((128 * cluster, n), np.float32)]


def run(module, k: int, n: int, cluster: int, schedule: str, seed: int = 0):
    return interpreter.run(
        module, *inputs(k, n, cluster, seed), grid=(cluster, 1, 1), schedule=schedule, seed=seed
    )


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize(("k", "n", "stages", "cluster"), CONFIGS)
def test_interpreted_bit_exact_and_race_free(k: int, n: int, stages: int, cluster: int, schedule):
    module = kernels.tmem_pipeline(k, n, stages=stages, cluster=cluster)
    a, b, _ = inputs(k, n, cluster, 0)
    result = run(module, k, n, cluster, schedule)
    assert result.violations == [], [str(v) for v in result.violations]
    assert np.array_equal(result.arrays[2], a.astype(np.float32) @ b.astype(np.float32).T)


@pytest.mark.parametrize("target", TCGEN05.targets)
@pytest.mark.parametrize("cluster", [1, 2])
def test_lowers_and_assembles(target: str, cluster: int, tmp_path: Path):
    module = kernels.tmem_pipeline(256, 128, stages=4, cluster=cluster, target=target)
    out = compile_module(module, make_context(), target)
    assert out.cubin.startswith(b"\x7fELF")
    ptx = out.ptx
    group = f"cta_group::{cluster}"
    mmas = ptx.count(f"tcgen05.mma.{group}.kind::f16")
    assert mmas >= 4, mmas
    assert mmas % 4 == 0, mmas  # 4 a k-block (LLVM may unroll the k loop)
    assert "tcgen05.fence::after_thread_sync" in ptx
    assert "tcgen05.fence::before_thread_sync" in ptx
    commit = f"tcgen05.commit.{group}.mbarrier::arrive::one.shared::cluster"
    assert commit + (".multicast::cluster" if cluster == 2 else ".b64") in ptx
    check_ptxas(ptx, target, tmp_path)


def mutated(module, old: str, new: str):
    text = str(module)
    assert old in text
    return Parser(make_context(), text.replace(old, new, 1)).parse_module()


@pytest.mark.parametrize("cluster", [1, 2])
def test_missing_after_fence_rejected_and_caught(cluster: int):
    module = mutated(
        kernels.tmem_pipeline(256, 64, stages=2, cluster=cluster),
        "nvvm.tcgen05.fence <after>\n",
        "",
    )
    with pytest.raises(CopyDiagnosticError) as found:
        verify_module(module)
    assert found.value.rules == ("P14",)
    for schedule in SCHEDULES:
        rules = {v.rule for v in run(module, 256, 64, cluster, schedule).violations}
        assert "P14" in rules, (schedule, rules)


def test_commit_mask_missing_the_peer_rejected_and_caught():
    module = mutated(
        kernels.tmem_pipeline(256, 64, stages=2, cluster=2),
        "arith.constant 3 : i16",
        "arith.constant 1 : i16",
    )
    with pytest.raises(CopyDiagnosticError) as found:
        verify_module(module)
    assert found.value.rules == ("P6",)
    for schedule in SCHEDULES:
        rules = {v.rule for v in run(module, 256, 64, 2, schedule).violations}
        assert "P6" in rules, (schedule, rules)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"k": 100},
        {"k": 0},
        {"k": 64, "n": 8},
        {"k": 64, "n": 48, "cluster": 2},
        {"k": 64, "n": 512},
        {"k": 64, "stages": 0},
        {"k": 64, "cluster": 4},
        {"k": 64, "cluster": "x"},
        {"k": 64, "target": "sm_90a"},
        {"k": 64, "target": "sm_120a"},
    ],
)
def test_bad_arguments(kwargs):
    with pytest.raises(ArgumentError):
        kernels.tmem_pipeline(**kwargs)


@pytest.mark.parametrize("cluster", [1, 2])
def test_runtime_interpret(cluster: int):
    """Through the runtime's entry (`runtime.interpret`: the IR verified, then run under
    several seeds): C = A B^T, and no rule broken (it raises a KernelViolation if one is)."""
    module = kernels.tmem_pipeline(256, 64, stages=2, cluster=cluster)
    a, b, c = inputs(256, 64, cluster, 3)
    out = runtime.interpret(module, a, b, c, grid=(cluster, 1, 1), schedules=3)
    assert np.array_equal(out[2], a.astype(np.float32) @ b.astype(np.float32).T)
