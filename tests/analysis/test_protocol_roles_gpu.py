"""On a GPU (an H200 here): every kernel of lit_tests/dialects/copy/protocol-roles.mlir (the
warp-specialized kernels the protocol analysis proves: named barriers between consumer
warpgroups, copy.barrier_test with and without a suspend-hinted wait, spin loops, issuers
`elected` and `warps`, a producer warpgroup) launched for grids of 1, 3 and 132 blocks (each
block walks a different number of laps of its ring), each must copy x to y bit for bit. The
CPU twin (test_protocol_roles.py) compiles the same kernels.

Interpreted (no GPU), each kernel copies the first 16th of its tiles (its `%total`
constant cut to a 16th: the first 64 rows of x; one block walks 2 or 4 laps of its ring),
on grids of 1, 3 and 20 blocks (the last with blocks that have no tile): those rows must be
x's bits, and every other row of y left as it was."""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest

from copy_tools import runtime
from tests import device
from tests.analysis.test_protocol_roles import KERNELS, kernel_source

pytestmark = device.marks()

SHAPE = (1024, 1024)
SHARE = 16 if device.INTERPRETED else 1
"""The kernels copy 1 / SHARE of their tiles (their rows of x, from the first)."""
TOTAL = re.compile(r"%total = arith.constant (\d+) : index")


@cache
def compiled(name: str) -> runtime.Program:
    """The kernel, its tile count cut to 1 / SHARE of it."""
    text = kernel_source(name)
    assert len(TOTAL.findall(text)) == 1, name
    text = TOTAL.sub(lambda m: f"%total = arith.constant {int(m[1]) // SHARE} : index", text)
    return runtime.compile(text)


@pytest.mark.parametrize("blocks", device.shapes([1, 3, 132], [1, 3, 20]))
@pytest.mark.parametrize("name", KERNELS)
def test_protocol_roles_kernel_copies(name, blocks):
    program = compiled(name)
    rng = np.random.default_rng(blocks)
    x = rng.standard_normal(SHAPE, dtype=np.float32)
    y = np.full_like(x, np.nan)
    program(x, y, grid=(blocks, 1))
    rows = SHAPE[0] // SHARE
    assert np.array_equal(y[:rows].view(np.uint32), x[:rows].view(np.uint32))
    assert np.isnan(y[rows:]).all()
