"""On a GPU (an H200 here): the cp.async copy through views made in the kernel
(`kernels.grouped_view_copy`: each block views its group of a pool with
`memref.reinterpret_cast` at the offset, shape and row pitch its row of a table gives)
copies every group bit for bit, zero-fills nothing into the destination, and leaves the
pool's padding and the space between and past the groups untouched: 16-byte aligned groups
(16-byte chunks), pitches of 8 bytes' alignment (8-byte chunks), odd offsets and pitches
(4-byte chunks, or, for 2-byte elements, the element loop), groups smaller than a tile; on
a cp.async group and on an mbarrier. sm_80 and sm_86 PTX runs assembled for sm_90
(`runtime.compile(..., arch="sm_90")`). test_gmem_views.py compiles the same kernels;
without a GPU, they run under the interpreter."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from copy_tools import runtime
from frontends import kernels
from tests import device
from tests.dialect.test_gmem_views import TILE, VIEW_CASES, biggest, view_table
from tests.runtime.test_runtime_gpu import DYNAMIC_CP_ASYNC as TARGET_DTYPES
from tests.runtime.test_runtime_gpu import poisoned, random, same_bits

pytestmark = device.marks()


def expected(src: np.ndarray, dst: np.ndarray, table) -> np.ndarray:
    """`dst` with each group's elements of `src` copied in (numpy's view of the pools)."""
    want = dst.copy()
    for off, rows, cols, pitch in table:
        group = slice(off, off + rows * pitch)
        want[group].reshape(rows, pitch)[:, :cols] = src[group].reshape(rows, pitch)[:, :cols]
    return want


def run(target: str, dtype: str, name: str, barrier: bool) -> None:
    table, capacity = view_table(name, dtype)
    arch = None if target == "sm_90a" else "sm_90"
    module = kernels.grouped_view_copy(
        len(table), capacity, dtype, TILE, target=target, barrier=barrier
    )
    program = runtime.compile(module, arch=arch)
    src = random((capacity,), dtype, seed=zlib.crc32(f"{target}{dtype}{name}".encode()))
    dst = poisoned((capacity,), dtype)
    grid = kernels.grouped_grid(biggest(name), TILE, len(table))
    program(np.array(table, np.int64), src, dst, grid=grid)
    assert same_bits(dst, expected(src, poisoned((capacity,), dtype), table)), (name, table)


@pytest.mark.parametrize("name", sorted(VIEW_CASES))
@pytest.mark.parametrize(("target", "dtype"), TARGET_DTYPES, ids=lambda v: str(v))
def test_view_copy_matches_numpy(target, dtype, name):
    run(target, dtype, name, barrier=False)


@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("name", ["odd", "aligned"])
def test_view_copy_on_a_barrier_matches_numpy(dtype, name):
    """The element loop's stores, fenced before each thread's arrival, are seen by the
    threads that wait on the barrier."""
    run("sm_80", dtype, name, barrier=True)
