"""On a GPU (an H100 or H200), or on the CPU under the interpreter: the bulk exchange of a
CTA pair that keeps each sender's source alive with the cluster's barrier
(lit_tests/passes/copy-legalize-cluster.mlir, `exchange_then_every_cta_meets`), launched as
written (sm_90a: a cluster of 2, `barrier.cluster`) and as copy-legalize folds it for sm_80
(one block per cluster, the barrier a named barrier of the block: passes/legalize_cluster.py),
each CTA's received tile in C bit for bit. On an H100 (benchmarks/RESULTS.md, run 72) the
folded form compiled for sm_80 was refused at launch (its cubin runs on compute capability
8.x only): it is now assembled for sm_90."""

from __future__ import annotations

import numpy as np
import pytest

from copy_tools import runtime
from tests import device
from tests.passes.test_legalize_cluster_sync import KERNEL, legalized

pytestmark = device.marks()


@pytest.mark.parametrize("folded", [False, True], ids=["sm_90a", "folded_sm_80"])
def test_the_exchange_ended_by_the_cluster_barrier(folded: bool):
    text = str(legalized(KERNEL)) if folded else KERNEL
    x = np.random.default_rng(4).integers(-8, 9, (256, 256)).astype(np.float32)
    y = np.zeros_like(x)
    # sm_80 code assembled for the Hopper GPU the tests run on (a cubin for sm_80 runs on
    # compute capability 8.x only), as CUDA's compute_80 -> sm_90 does
    runtime.compile(text, arch="sm_90" if folded else None)(x, y, grid=(2, 1))
    want = np.zeros_like(x)
    want[0:64, 0:64], want[0:64, 64:128] = x[0:64, 64:128], x[0:64, 0:64]
    np.testing.assert_array_equal(y, want)
