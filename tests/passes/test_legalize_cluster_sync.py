"""copy-legalize folds a DSMEM kernel's cluster into one block, each CTA a role of it
(passes/legalize_cluster.py); a whole `copy.cluster_sync` becomes a named barrier of every
role's threads, the folded block's own (id n + 1: the roles take 1 to n). The bulk exchange
of lit_tests/passes/copy-legalize-cluster.mlir that ends with the cluster's barrier (no
handshake: the barrier keeps each source alive until the peer has it) legalizes for sm_80,
is proven there and runs bit-exact and race-free under the interpreter. Half a cluster
barrier (`arrive` or `wait` alone) has no such form: LG3 at the op, the module left as it
was."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_dialect import ops as copy
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from passes.legalize import CopyLegalizePass

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "lit_tests" / "passes" / "copy-legalize-cluster.mlir"
KERNEL = next(c for c in LIT.read_text().split("// -----") if "@exchange_then_every_cta_meets" in c)


def legalized(text: str, target: str = "sm_80"):
    module = Parser(make_context(), text).parse_module()
    CopyLegalizePass(target=target).apply(make_context(), module)
    return module


@pytest.mark.parametrize("schedule", ["round_robin", "random", "adversarial"])
def test_the_cluster_barrier_folds_to_a_named_barrier_and_runs_exact(schedule: str):
    module = legalized(KERNEL)
    verify_module(module)  # valid on sm_80, and proven
    syncs = [op for op in module.walk() if isinstance(op, copy.NamedBarrierSyncOp)]
    assert [(s.id.value.data, s.threads.value.data) for s in syncs] == [(3, 256), (3, 256)]
    assert not any(isinstance(op, copy.ClusterSyncOp) for op in module.walk())
    x = np.random.default_rng(2).integers(-8, 9, (256, 256)).astype(np.float32)
    run = interpreter.run(module, x, np.zeros_like(x), grid=(2, 1, 1), schedule=schedule)
    assert run.violations == [], [str(v) for v in run.violations]
    y = np.zeros_like(x)
    y[0:64, 0:64], y[0:64, 64:128] = x[0:64, 64:128], x[0:64, 0:64]
    np.testing.assert_array_equal(run.arrays[1], y)


@pytest.mark.parametrize("half", ["arrive", "wait"])
def test_half_a_cluster_barrier_has_no_folded_form(half: str):
    text = KERNEL.replace("  copy.cluster_sync\n", f"  copy.cluster_sync {half}\n")
    module = Parser(make_context(), text).parse_module()
    before = str(module)
    with pytest.raises(CopyVerifyException, match=r"half a cluster barrier") as caught:
        CopyLegalizePass(target="sm_80").apply(make_context(), module)
    assert caught.value.rules == ("LG3",)
    assert f"copy.cluster_sync {half}" in str(caught.value)
    assert str(module) == before
