"""On a GPU (an H200 here): the mbarrier-breadth kernels of mbarrier_kernels.py, bit for bit
against numpy at several sizes (odd and tail ones included):

- complete_tx from threads and from warps (each thread's SMEM write released to every
  other thread by the phase it completes the bytes of), y = the neighbour rotation;
- a warp-specialized ring whose first consumer warp drops out with arrive_drop while the
  other three go on (the empty barriers then count 3): y = x; the grids give blocks that
  never drop (1 tile), drop and stop (4 tiles: 2 + one per slot), and drop mid-way;
- inval and reinit of a barrier, whose second life waits on parity 0 again, with a
  nocomplete arrival: y = x.

The CPU twin (test_mbarrier_ops.py) proves and compiles the same kernels; without a GPU,
they run under the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from copy_tools import runtime
from tests import device
from tests.dialect.mbarrier_kernels import (
    TILE_ROWS,
    arrive_drop_kernel,
    complete_tx_grid,
    complete_tx_kernel,
    complete_tx_model,
    inval_reinit_grid,
    inval_reinit_kernel,
)
from tests.dialect.test_mbarrier_ops import (
    ARRIVE_DROP_TILES,
    COMPLETE_TX_SIZES,
    INVAL_REINIT_SHAPES,
)
from tests.runtime.test_runtime_gpu import random, same_bits

pytestmark = device.marks()


@pytest.mark.parametrize("issuer", ["threads", "warps"])
@pytest.mark.parametrize("n", COMPLETE_TX_SIZES)
def test_complete_tx_releases_thread_writes(n, issuer):
    program = runtime.compile(complete_tx_kernel(n, issuer))
    x = random((n,), "f32", n)
    y = np.full_like(x, np.nan)
    program(x, y, grid=complete_tx_grid(n))
    assert same_bits(y, complete_tx_model(x))


@pytest.mark.parametrize("blocks", [1, 2, 5])
@pytest.mark.parametrize("tiles", ARRIVE_DROP_TILES)
def test_arrive_drop_consumer_leaves_the_ring(tiles, blocks):
    program = runtime.compile(arrive_drop_kernel(tiles))
    x = random((tiles * TILE_ROWS, 32), "f32", tiles)
    y = np.full_like(x, np.nan)
    program(x, y, grid=(min(blocks, tiles), 1))
    assert same_bits(y, x)


@pytest.mark.parametrize("shape", INVAL_REINIT_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_inval_reinit_second_life_starts_at_parity_0(shape):
    program = runtime.compile(inval_reinit_kernel(*shape))
    x = random(shape, "f32", shape[0])
    y = np.full_like(x, np.nan)
    program(x, y, grid=inval_reinit_grid(shape[0]))
    assert same_bits(y, x)
