"""On a GPU (an H200 here): the grouped copy of frontends.kernels, whose blocks re-point
one tensor map in global memory at their group's matrix, shape and pitch before they load
(copy.tensormap_replace, release/acquire fences; one block per group and tile, or one
block per tile that walks the groups, waiting for each load before it re-points), copies
every group of several group lists (odd rows and columns, groups smaller than a tile) bit
for bit, leaves the pool's padding and the space past the groups untouched, and gives the
same result when the launch is issued again (each launch starts from the host-encoded
map). test_tensormap_update.py compiles the same kernels. Without a GPU, the copies run
under the interpreter; the relaunch of a prepared launch needs a GPU."""

from __future__ import annotations

import numpy as np
import pytest

from copy_tools import runtime
from frontends import kernels
from tests import device
from tests.dialect.test_tensormap_update import CASES, TILE, case, module
from tests.runtime.test_runtime_gpu import random, same_bits

pytestmark = device.marks()

SENTINEL = np.float32(-7.0)


def expected(src: np.ndarray, table) -> np.ndarray:
    """What the copy leaves in a dst pool filled with SENTINEL: each group's elements."""
    want = np.full_like(src, SENTINEL)
    for off, rows, cols, pitch in table:
        view = (slice(None), slice(0, cols))
        want[off : off + rows * pitch].reshape(rows, pitch)[view] = src[
            off : off + rows * pitch
        ].reshape(rows, pitch)[view]
    return want


@pytest.mark.parametrize("persistent", [False, True], ids=["per_group", "persistent"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_grouped_copy_bit_exact(name, persistent):
    """One block per (group, tile), or (`persistent`) one block per tile that re-points its
    map at each group in turn."""
    table, capacity, biggest = case(name)
    program = runtime.compile(module(name, persistent))
    src = random((capacity,), "f32", 3)
    dst = np.full((capacity,), SENTINEL, np.float32)
    meta = np.array(table, np.int64)
    # The initial map's array: the first group's matrix (any 2-D f32 array TMA accepts).
    off, rows, _, pitch = table[0]
    first = src[off : off + rows * pitch].reshape(rows, pitch).copy()
    grid = kernels.grouped_grid(biggest, TILE, len(table), persistent)
    program(first, meta, src, dst, grid=grid)
    assert same_bits(dst, expected(src, table))


@pytest.mark.skipif(
    not device.GPU,
    reason="no CUDA driver or GPU here, and the interpreter runs whole calls, not a prepared "
    "launch issued again",
)
def test_grouped_copy_relaunch_starts_from_the_host_map():
    name = "mixed"
    table, capacity, biggest = case(name)
    kernel = runtime.compile(module(name, persistent=True)).kernel()
    src = random((capacity,), "f32", 4)
    dst = np.full((capacity,), SENTINEL, np.float32)
    off, rows, _, pitch = table[0]
    first = src[off : off + rows * pitch].reshape(rows, pitch).copy()
    launch = kernel.prepare(
        first, np.array(table, np.int64), src, dst,
        grid=kernels.grouped_grid(biggest, TILE, len(table), persistent=True),
    )  # fmt: skip
    try:
        for _ in range(3):
            launch()
    finally:
        launch.release()
    assert same_bits(dst, expected(src, table))
