"""On a GPU (an H200 here): kernels.dsmem_exchange in clusters of 2 and 4, every mode
(st.async from the threads, red.async add, the bulk SMEM -> SMEM copy), over shapes with
whole and partial edge tiles: y's tile of each CTA is the tile of the CTA that sends to it
(store, bulk) or the sum of its own and that one (reduce), bit for bit against numpy; and
their copy-legalize'd sm_80 and sm_86 forms, bit for bit against the sm_90a kernel.
test_dsmem.py compiles the same kernels. Without a GPU, under the interpreter, on the
smaller shapes (whole tiles, and partial edge tiles in rows and columns; the legalized forms
on the latter)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from xdsl.parser import Parser

from copy_tools import runtime
from copy_tools.universe import make_context
from frontends import kernels
from tests import device
from tests.dialect.test_dsmem import (
    CASES,
    CLUSTER_Y,
    LEGAL_TARGETS,
    PHASE_LOOP,
    SHAPES,
    TILE,
    columns,
    folded_fits,
    legalized,
    module,
)
from tests.passes.test_legalize_gpu import on_h200
from tests.runtime.test_runtime_gpu import numpy_dtype, same_bits

pytestmark = device.marks()

RUN_SHAPES = device.shapes(SHAPES, [(64, 128), (100, 120)])
LEGAL_SHAPES = device.shapes(SHAPES, [(100, 120)])
AS_WRITTEN_AND_FOLDED = [
    pytest.param(None, id="sm_90a"),
    *(pytest.param(t, id=t) for t in LEGAL_TARGETS),
]


def values(shape, dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "i32":
        return rng.integers(-(2**31), 2**31, size=shape, dtype=np.int64).astype(np.int32)
    return (rng.standard_normal(shape) * 100).astype(numpy_dtype(dtype))


def expected(x: np.ndarray, shape, cluster: int, reduce: bool, tile=TILE) -> np.ndarray:
    """y of the exchange: each tile column gets its sender's tile (zero beyond x), plus its
    own with `reduce` (int32 wrap-around, as red.async.add.u32)."""
    cols, rows = kernels.exchange_grid(shape, tile, cluster)
    padded = np.zeros((rows * tile[0], cols * tile[1]), x.dtype)
    padded[: shape[0], : shape[1]] = x
    y = np.zeros_like(padded)
    for c, source in enumerate(kernels.exchange_sources(shape, tile, cluster)):
        mine = slice(c * tile[1], (c + 1) * tile[1])
        theirs = padded[:, source * tile[1] : (source + 1) * tile[1]]
        y[:, mine] = theirs + padded[:, mine] if reduce else theirs
    return y[: shape[0], : shape[1]]


@pytest.mark.parametrize("shape", RUN_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize(("mode", "dtype", "cluster"), CASES)
def test_exchange(mode, dtype, cluster, shape):
    full = columns(shape, cluster)
    program = runtime.compile(module(mode, dtype, cluster, shape))
    x = values(full, dtype, seed=zlib.crc32(f"{mode}{dtype}{cluster}{shape}".encode()))
    y = np.zeros_like(x)
    with np.errstate(over="ignore"):
        want = expected(x, full, cluster, mode == "reduce")
    program(x, y, grid=kernels.exchange_grid(full, TILE, cluster))
    assert same_bits(y, want)


@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize("shape", LEGAL_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize(("mode", "dtype", "cluster"), CASES)
def test_legalized_exchange_returns_the_same_bytes(mode, dtype, cluster, shape, target):
    """copy-legalize's sm_80 and sm_86 forms (each cluster folded into one block of a role
    per CTA; their PTX assembled for sm_90) return the sm_90a kernel's bytes, on the same
    grid: the first block of each cluster runs it, the others return."""
    built = module(mode, dtype, cluster, shape)
    if not folded_fits(built, cluster, target):
        pytest.skip(f"the folded cluster's SMEM exceeds {target}'s (LG3, test_dsmem.py)")
    full = columns(shape, cluster)
    grid = kernels.exchange_grid(full, TILE, cluster)
    x = values(full, dtype, seed=zlib.crc32(f"legal{mode}{dtype}{cluster}{shape}".encode()))
    y = np.zeros_like(x)
    on_h200(legalized(built, target))(x, y, grid=grid)
    original = np.zeros_like(x)
    runtime.compile(module(mode, dtype, cluster, shape))(x, original, grid=grid)
    with np.errstate(over="ignore"):
        want = expected(x, full, cluster, mode == "reduce")
    assert same_bits(original, want)
    assert same_bits(y, original)


@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize("shape", [(64, 1024), (67, 1000)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_legalized_exchange_in_clusters_of_8(shape, target):
    """A cluster of 8 CTAs of 128 threads folds into one block of 1024 threads (eight roles)
    where its SMEM fits: 8 x 64 f32 tiles (the 64 x 64 tiles of the other cases would need
    8 x 32 KiB)."""
    tile = (8, 64)
    built = kernels.dsmem_exchange(shape, "f32", tile, cluster=8)
    grid = kernels.exchange_grid(shape, tile, 8)
    x = values(shape, "f32", seed=zlib.crc32(f"eight{shape}{target}".encode()))
    y = np.zeros_like(x)
    on_h200(legalized(built, target))(x, y, grid=grid)
    assert same_bits(y, expected(x, shape, 8, False, tile))


@pytest.mark.parametrize("target", AS_WRITTEN_AND_FOLDED)
def test_phase_loop_returns_the_exchanged_rows(target):
    """test_dsmem.PHASE_LOOP (two phases of a pair's exchange in one loop), as written and
    folded: each pair of 16-column blocks of x's first 128 rows swapped into y, the other
    rows untouched."""
    x = values((256, 256), "f32", seed=zlib.crc32(b"phase loop"))
    want = np.full_like(x, np.nan)
    pairs = x[:128].reshape(128, 8, 2, 16)
    want[:128] = pairs[:, :, ::-1, :].reshape(128, 256)
    built = Parser(make_context(), PHASE_LOOP).parse_module()
    program = runtime.compile(built) if target is None else on_h200(legalized(built, target))
    y = np.full_like(x, np.nan)
    program(x, y, grid=(16, 1))
    assert same_bits(y, want)


@pytest.mark.parametrize("target", AS_WRITTEN_AND_FOLDED)
def test_cluster_along_y_returns_the_exchanged_rows(target):
    """test_dsmem.CLUSTER_Y (a pair along y), as written and folded on a grid of (1, 16)."""
    x = values((256, 256), "f32", seed=zlib.crc32(b"cluster along y"))
    want = np.full_like(x, np.nan)
    want[:64] = x[:64].reshape(64, 8, 2, 16)[:, :, ::-1, :].reshape(64, 256)
    built = Parser(make_context(), CLUSTER_Y).parse_module()
    program = runtime.compile(built) if target is None else on_h200(legalized(built, target))
    y = np.full_like(x, np.nan)
    program(x, y, grid=(1, 16))
    assert same_bits(y, want)
