"""On a GPU (an H200 here): non-tensor bulk copies (`impl bulk`) move every byte of the
arrays: 1-D copies with tails of one to many 16-byte chunks (some after a bulk prefetch),
persistent ring copies of whole rows with 1 to 4 stages (every slot reused, both
parities), and multicast bulk loads in a cluster of 2, each over f32/f16/bf16/i8 random
bit patterns (NaN payloads included), bit for bit against numpy. test_bulk.py compiles the
same kernels; without a GPU, they run under the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from copy_tools import runtime
from tests import device
from tests.dialect.test_bulk import MULTICAST, ONE_D, ROWS, multicast, one_d, rows

pytestmark = device.marks()


def numpy_dtype(name: str) -> np.dtype:
    if name == "bf16":
        return np.dtype(pytest.importorskip("ml_dtypes").bfloat16)
    return np.dtype({"f32": np.float32, "f16": np.float16, "i8": np.int8}[name])


def data(shape, dtype: str, seed: int) -> np.ndarray:
    """Random bit patterns of `dtype`, `shape` (NaN payloads included: a copy moves bits)."""
    item = numpy_dtype(dtype)
    raw = np.random.default_rng(seed).integers(0, 256, int(np.prod(shape)) * item.itemsize)
    return raw.astype(np.uint8).view(item).reshape(shape)


def poison(x: np.ndarray) -> np.ndarray:
    return np.full_like(x.view(np.uint8), 0xA5).view(x.dtype)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a.view(np.uint8), b.view(np.uint8)))


@pytest.mark.parametrize(("n", "dtype", "tile", "prefetch"), ONE_D)
def test_one_d_bulk_copy(n, dtype, tile, prefetch):
    program = runtime.compile(one_d(n, dtype, tile, prefetch))
    x = data((n,), dtype, seed=n)
    y = poison(x)
    program(x, y, grid=(-(-n // tile),))
    assert same_bits(y, x)


@pytest.mark.parametrize(("shape", "dtype", "tile", "stages"), ROWS)
@pytest.mark.parametrize("blocks", [1, 3, 7])
def test_bulk_ring_copy(shape, dtype, tile, stages, blocks):
    program = runtime.compile(rows(shape, dtype, tile, stages))
    x = data(shape, dtype, seed=stages * 31 + blocks)
    y = poison(x)
    program(x, y, grid=(blocks,))
    assert same_bits(y, x)


@pytest.mark.parametrize(("shape", "dtype", "tile"), MULTICAST)
def test_multicast_bulk_copy(shape, dtype, tile):
    program = runtime.compile(multicast(shape, dtype, tile))
    half = tile[0] // 2
    view = (shape[0] // half, half, shape[1])
    x = data(view, dtype, seed=shape[0])
    y = poison(x)
    # One pair of CTAs per tile of rows (a tile is whole rows).
    program(x, y, grid=(2, shape[0] // tile[0]))
    assert same_bits(y, x)
