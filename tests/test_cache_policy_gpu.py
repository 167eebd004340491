"""On a GPU (an H200 here): L2 cache policies change where lines live, never what a copy
returns: tma_copy with every (load, store) pair of named policies, as a copy, as a
reduce-add, and as a reduce-add that prefetches its destination with the store's policy, on
an odd shape (partial edge tiles), bit for bit against numpy. Skipped where
there is no GPU (test_cache_policy.py compiles the same kernels)."""

from __future__ import annotations

import numpy as np
import pytest
from test_cache_policy import CASES, module
from test_runtime_gpu import random, same_bits

from copy_dialect import kernels
from copy_tools import runtime

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not runtime.gpu_available(), reason="no CUDA driver or GPU here"),
]

SHAPE = (300, 200)


@pytest.mark.parametrize(("load", "store", "reduce"), CASES)
def test_policy_leaves_results_unchanged(load, store, reduce):
    program = runtime.compile(module(load, store, reduce))
    x = random(SHAPE, "f32", 1)
    y = random(SHAPE, "f32", 2) if reduce else np.zeros(SHAPE, np.float32)
    want = (y + x) if reduce else x.copy()
    program(x, y, grid=kernels.grid(SHAPE, (64, 64)))
    assert same_bits(y, want)
