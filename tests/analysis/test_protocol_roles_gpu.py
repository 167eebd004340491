"""On a GPU (an H200 here): every kernel of lit_tests/dialects/copy/protocol-roles.mlir (the
warp-specialized kernels the protocol analysis proves: named barriers between consumer
warpgroups, copy.barrier_test with and without a suspend-hinted wait, spin loops, issuers
`elected` and `warps`, a producer warpgroup) launched for grids of 1, 3 and 132 blocks (each
block walks a different number of laps of its ring), each must copy x to y bit for bit. The
CPU twin (test_protocol_roles.py) compiles the same kernels; skipped where there is no GPU."""

from __future__ import annotations

import numpy as np
import pytest

from copy_tools import runtime
from tests.analysis.test_protocol_roles import KERNELS, kernel_source

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not runtime.gpu_available(), reason="no CUDA driver or GPU here"),
]


@pytest.mark.parametrize("blocks", [1, 3, 132])
@pytest.mark.parametrize("name", KERNELS)
def test_protocol_roles_kernel_copies(name, blocks):
    program = runtime.compile(kernel_source(name))
    rng = np.random.default_rng(blocks)
    x = rng.standard_normal((1024, 1024), dtype=np.float32)
    y = np.full_like(x, np.nan)
    program(x, y, grid=(blocks, 1))
    assert np.array_equal(y.view(np.uint32), x.view(np.uint32))
