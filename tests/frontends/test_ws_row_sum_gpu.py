"""On a GPU (an H200 here): `kernels.ws_row_sum` sums every row, for shapes with row and
column tails, fewer bands than blocks, one band per block, several bands per block, a band
height the consumer warps do not divide, one ring stage, bf16 and f16 inputs.

Two checks per launch, each its own test:
- against numpy's float64 sums: |y - sum| <= gamma(d) * sum_j |x[i, j]|, gamma(d) =
  d u / (1 - d u), u = 2**-24, d = ceil(N / 32) + 5 (the additions an element goes through:
  its lane's sequential sum, then five shuffle rounds; the zeros TMA fills in add nothing),
  the recursive-summation bound, so a correct kernel cannot fail it;
- bit for bit against numpy float32 additions in the kernel's order (lane l adds columns l,
  l + 32, ... in order, then y = lane 0 of the xor butterfly 16, 8, 4, 2, 1): the order does
  not depend on the grid or on timing (one block owns each row; no atomics), so every grid
  gives the same bits.

Launches run in a child process under the watchdog of test_pipeline_gpu (a hang fails its
test instead of stalling the suite). y starts as NaN, so a row never written fails both.
The CPU side (tests/frontends/test_ws_row_sum.py) compiles every case here without a GPU.
Without a GPU, the launches run in this process under the interpreter (a hang is its P6
violation), on the smaller cases of SMALL_CASES (the same tiles, warps and stages)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from functools import cache
from math import ceil
from typing import Any

import numpy as np
import pytest

from copy_tools import runtime
from frontends import kernels
from tests import device
from tests.frontends.test_pipeline_gpu import Hung, Watchdog


@dataclass(frozen=True)
class Case:
    id: str
    shape: tuple[int, int]
    dtype: str
    tile: tuple[int, int]
    stages: int
    warps: int
    grids: tuple[int, ...]
    """Blocks to launch on (ws_grid(n) = (n, 1)); the first is compared with the others."""


CASES = [
    # 16 bands (the last of 40 rows), 8 column tiles (the last of 104 columns): fewer bands
    # than SMs on 132 blocks, all of them on one block, 2 or 3 on each of 7.
    Case("f32-1000x1000-64x128", (1000, 1000), "f32", (64, 128), 4, 4, (132, 1, 7)),
    # 8 bands: one band per block on 8 blocks; on 16, half the blocks have none.
    Case("f32-512x256-64x128", (512, 256), "f32", (64, 128), 4, 4, (8, 16)),
    # 32 bands on 5 blocks (7, 7, 6, 6, 6 bands), 4 column tiles each, 2 stages.
    Case("f32-2048x512-64x128-s2", (2048, 512), "f32", (64, 128), 2, 4, (5, 132)),
    # 125-row bands over 4 consumer warps (warps 1-3 repeat row 124, unstored); 17 bands,
    # the last of 10 rows.
    Case("f32-2010x1024-125x128-s3", (2010, 1024), "f32", (125, 128), 3, 4, (132, 4)),
    # The benchmark's band layout (balanced_band_rows(16384, 132) = 125): 132 bands on 132
    # blocks, one each, the last of 9 rows; 2048 columns keep the arrays at 128 MiB.
    Case("f32-16384x2048-125x128-s3", (16384, 2048), "f32", (125, 128), 3, 4, (132,)),
    Case("bf16-1000x1000-64x128", (1000, 1000), "bf16", (64, 128), 4, 4, (132, 3)),
    # 10-row bands over 3 warps, 5 column tiles (the last of 8 columns).
    Case("f16-130x264-10x64-w3-s2", (130, 264), "f16", (10, 64), 2, 3, (3, 132)),
    # One ring stage (load, sum, release, load ...), 5 warps sharing 125 rows evenly.
    Case("f32-300x96-125x32-w5-s1", (300, 96), "f32", (125, 32), 1, 5, (2, 1)),
    # Smaller than one tile: 4 columns of a 32-column box, 3 rows of 2-row bands.
    Case("f32-3x4-2x32-s1", (3, 4), "f32", (2, 32), 1, 4, (1, 4)),
]

SMALL_CASES = [
    # The interpreted twins of CASES. 4 bands (the last of 8 rows), 2 column tiles (the
    # last of 72 columns): fewer bands than blocks on 5, all on one, 2 on each of 2.
    Case("f32-200x200-64x128", (200, 200), "f32", (64, 128), 4, 4, (5, 1, 2)),
    # 4 bands: one band per block on 4 blocks; on 8, half the blocks have none.
    Case("f32-256x256-64x128", (256, 256), "f32", (64, 128), 4, 4, (4, 8)),
    # 6 bands on 4 blocks (2, 2, 1, 1), 2 stages.
    Case("f32-384x256-64x128-s2", (384, 256), "f32", (64, 128), 2, 4, (4,)),
    # 125-row bands over 4 consumer warps; 3 bands, the last of 10 rows.
    Case("f32-260x256-125x128-s3", (260, 256), "f32", (125, 128), 3, 4, (2,)),
    Case("bf16-130x264-64x128", (130, 264), "bf16", (64, 128), 4, 4, (3,)),
    Case("f16-130x264-10x64-w3-s2", (130, 264), "f16", (10, 64), 2, 3, (3, 16)),
    Case("f32-300x96-125x32-w5-s1", (300, 96), "f32", (125, 32), 1, 5, (2, 1)),
    Case("f32-3x4-2x32-s1", (3, 4), "f32", (2, 32), 1, 4, (1, 4)),
]

U = 2.0**-24
"""The unit roundoff of f32."""


def numpy_dtype(name: str) -> Any:
    if name == "bf16":
        return pytest.importorskip("ml_dtypes").bfloat16
    return {"f32": np.float32, "f16": np.float16}[name]


def case_named(name: str) -> Case:
    return next(c for c in [*CASES, *SMALL_CASES] if c.id == name)


@cache
def program(name: str) -> runtime.Program:
    c = case_named(name)
    module = kernels.ws_row_sum(c.shape, c.dtype, c.tile, stages=c.stages, consumer_warps=c.warps)
    return runtime.compile(module)


@cache
def inputs(name: str) -> np.ndarray:
    c = case_named(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = rng.standard_normal(c.shape) * 100
    # A few large terms, so that the order matters; in f16 (largest finite 65504) only as
    # large as stays finite: 1e4 made infinities of both signs, so NaN sums (H200 run 25).
    x[rng.random(c.shape) < 0.01] *= 50 if c.dtype == "f16" else 1e4
    return x.astype(numpy_dtype(c.dtype))


def launch(cubin: bytes, abi: Any, x: np.ndarray, y: np.ndarray, grid: tuple) -> np.ndarray:
    """In the child: one launch; y comes back."""
    runtime.Program(cubin, abi)(x, y, grid=grid)
    return y


_RESULTS: dict[tuple[str, int], np.ndarray] = {}


def row_sums(watchdog: Watchdog, name: str, blocks: int) -> np.ndarray:
    key = (name, blocks)
    if key not in _RESULTS:
        x = inputs(name)  # first: a bf16 case without ml_dtypes skips before compiling
        p = program(name)
        y = np.full(x.shape[0], np.nan, dtype=np.float32)
        if device.INTERPRETED:
            p(x, y, grid=kernels.ws_grid(blocks))  # interpreted: a hang is a P6 violation
            _RESULTS[key] = y
            return y
        try:
            _RESULTS[key] = watchdog.call(launch, p.cubin, p.abi, x, y, kernels.ws_grid(blocks))
        except Hung as exc:
            pytest.fail(f"{name} on {blocks} blocks hangs: {exc}")
    return _RESULTS[key]


def in_kernel_order(c: Case, x: np.ndarray) -> np.ndarray:
    """The kernel's sums, computed with float32 additions in its order."""
    m, n = c.shape
    width = ceil(n / c.tile[1]) * c.tile[1]  # TMA zero-fills the last column tile
    padded = np.zeros((m, width), dtype=np.float32)
    padded[:, :n] = x.astype(np.float32)
    chunks = padded.reshape(m, width // 32, 32)
    lanes = np.zeros((m, 32), dtype=np.float32)
    for k in range(chunks.shape[1]):
        lanes = lanes + chunks[:, k, :]
    for offset in (16, 8, 4, 2, 1):
        lanes = lanes + lanes[:, np.arange(32) ^ offset]
    return lanes[:, 0]


@pytest.fixture(scope="module")
def watchdog():
    dog = Watchdog()
    yield dog
    dog.close()


PARAMS = [
    pytest.param(c.id, g, id=f"{c.id}-g{g}")
    for c in device.shapes(CASES, SMALL_CASES)
    for g in c.grids
]

pytestmark = device.marks()


@pytest.mark.parametrize(("name", "blocks"), PARAMS)
def test_row_sums_within_the_summation_bound(watchdog, name, blocks):
    c = case_named(name)
    x = inputs(name).astype(np.float64)
    y = row_sums(watchdog, name, blocks).astype(np.float64)
    exact = x.sum(axis=1)
    depth = ceil(c.shape[1] / 32) + 5
    bound = depth * U / (1 - depth * U) * np.abs(x).sum(axis=1)
    error = np.abs(y - exact)
    bad = ~(error <= bound)  # NaN (a row never written) is bad too
    assert not bad.any(), (
        f"{int(bad.sum())} of {c.shape[0]} rows off, first row {int(np.argmax(bad))}: "
        f"error {error[bad][0]:.3g} > bound {bound[bad][0]:.3g}"
    )


@pytest.mark.parametrize(("name", "blocks"), PARAMS)
def test_row_sums_are_the_kernels_order_bit_for_bit(watchdog, name, blocks):
    c = case_named(name)
    y = row_sums(watchdog, name, blocks)
    expected = in_kernel_order(c, inputs(name))
    wrong = np.flatnonzero(y.view(np.uint32) != expected.view(np.uint32))
    assert wrong.size == 0, (
        f"{wrong.size} of {c.shape[0]} rows differ, first row {wrong[0]}: "
        f"{y[wrong[0]]!r} != {expected[wrong[0]]!r}"
    )
