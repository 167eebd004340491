"""On a GPU (an H200 here): `kernels.broadcast_copy`, x (M, N) -> y (C, M, N) with y[r] = x
for every rank r of a cluster of C, matches numpy bit for bit: the multicast kernel (each CTA
of a cluster loads 1/C of the tile with .multicast::cluster and stores the whole tile), its
unicast twin (the same kernel, cluster and grid, each CTA loading the whole tile) and the
rank-major unicast order, for clusters of 2 and 4 (and 8), f32/bf16/f16, shapes that are
multiples of the tile and shapes with tails (zero-filled loads, shares wholly out of bounds,
clipped stores). `kernels.broadcast_row_dot` (the same loads, each rank's dot products with
its own vector) matches numpy's sums in the kernel's order bit for bit over the same cases.

Without a GPU, under the interpreter: the same tiles on smaller shapes (SMALL_CASES: a
multiple of the tile, and tails with shares wholly out of bounds), each variant and shape on
clusters of 2 and 4 with the dtypes taken in turn (`combinations`), and the cluster of 8 on a
shape with tails on both sides."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from copy_tools import runtime
from frontends import kernels
from tests import device

pytestmark = device.marks()

VARIANTS = {
    "multicast": {"multicast": True},
    "unicast": {"multicast": False},
    "unicast_rank_major": {"multicast": False, "order": "rank_major"},
}
# (shape, tile): multiples of the tile, then tails. 130 rows in 64-row tiles: the last tile
# holds 2 rows, so with a cluster of 4 its last shares (rows 144-191) are wholly outside x.
CASES = [
    ((256, 512), (64, 256)),
    ((1000, 1000), (64, 256)),
    ((130, 264), (64, 256)),
    ((130, 264), (32, 64)),
]
# Interpreted: 66 rows leave a last tile of 2 rows, so with a cluster of 4 its last shares
# are wholly outside x, as above.
SMALL_CASES = [((128, 256), (64, 256)), ((66, 264), (64, 256)), ((66, 264), (32, 64))]
DTYPES = ["f32", "bf16", "f16"]
TURNS = [((2, "f32"), (4, "f16")), ((2, "f16"), (4, "bf16")), ((2, "bf16"), (4, "f32"))]
"""The (cluster, dtype) pairs of an interpreted run: variant v on shape c takes turn
(v + c) % 3, so each variant and shape runs on both clusters, and each in every dtype."""


def combinations(cases) -> list:
    """The parameters (variant, (shape, tile), cluster, dtype): on a GPU, every combination;
    interpreted, SMALL_CASES' each variant and shape twice, on its turn's pairs."""
    if not device.INTERPRETED:
        return [(v, c, k, d) for v in VARIANTS for c in cases for k in (2, 4) for d in DTYPES]
    return [
        (v, c, *pair)
        for i, v in enumerate(VARIANTS)
        for j, c in enumerate(cases)
        for pair in TURNS[(i + j) % len(TURNS)]
    ]


def case_id(value) -> str:
    if isinstance(value, tuple) and isinstance(value[0], tuple):
        return "x".join(map(str, value[0])) + "-" + "x".join(map(str, value[1]))
    return str(value)


def numpy_dtype(name: str):
    if name == "bf16":
        return pytest.importorskip("ml_dtypes").bfloat16
    return {"f32": np.float32, "f16": np.float16}[name]


def bits(a: np.ndarray) -> np.ndarray:
    return a.view({2: np.uint16, 4: np.uint32}[a.itemsize])


@pytest.mark.parametrize(
    ("variant", "case", "cluster", "dtype"),
    combinations(device.shapes(CASES, SMALL_CASES)),
    ids=case_id,
)
def test_every_rank_gets_x(variant, case, cluster, dtype):
    shape, tile = case
    item = numpy_dtype(dtype)  # first: bf16 without ml_dtypes skips before compiling
    module = kernels.broadcast_copy(shape, dtype, tile, cluster=cluster, **VARIANTS[variant])
    program = runtime.compile(module)
    rng = np.random.default_rng(zlib.crc32(f"{variant}{shape}{tile}{cluster}{dtype}".encode()))
    x = (rng.standard_normal(shape) * 100).astype(item)
    # Poisoned: every element of y has bits no element of x has (x is finite, y all NaN
    # with a payload), so a rank or a tile left unwritten shows.
    poison = {2: 0x7FFF, 4: 0x7FFFFFFF}[x.itemsize]
    y = np.full((cluster, *shape), poison, bits(x).dtype).view(x.dtype)
    program(x, y, grid=kernels.broadcast_grid(shape, tile, cluster))
    for r in range(cluster):
        assert np.array_equal(bits(y[r]), bits(x)), f"rank {r} of {cluster}"


# broadcast_row_dot: the same tile loads, each rank multiplying by its own vector. Its
# sums are compared bit for bit with numpy adding in the kernel's order
# (row_dot_reference), for every variant, cluster, dtype and the tails above, plus a tile
# of three lanes' columns.
ROW_DOT_CASES = [*CASES, ((257, 1000), (64, 96))]
SMALL_ROW_DOT_CASES = [*SMALL_CASES, ((65, 200), (64, 96))]


@pytest.mark.parametrize(
    ("variant", "case", "cluster", "dtype"),
    combinations(device.shapes(ROW_DOT_CASES, SMALL_ROW_DOT_CASES)),
    ids=case_id,
)
def test_row_dot_matches_the_kernel_order_bit_for_bit(variant, case, cluster, dtype):
    from tests.frontends.row_dot_reference import (
        row_dot_bound,
        row_dot_exact,
        row_dot_in_kernel_order,
    )

    shape, tile = case
    item = numpy_dtype(dtype)  # first: bf16 without ml_dtypes skips before compiling
    module = kernels.broadcast_row_dot(shape, dtype, tile, cluster=cluster, **VARIANTS[variant])
    program = runtime.compile(module)
    rng = np.random.default_rng(zlib.crc32(f"dot{variant}{shape}{tile}{cluster}{dtype}".encode()))
    x = rng.standard_normal(shape).astype(item)
    v = rng.standard_normal((cluster, shape[1])).astype(item)
    tiles = -(-shape[1] // tile[1])
    y = np.full((cluster, tiles, shape[0]), np.nan, np.float32)  # an unwritten sum shows
    program(x, v, y, grid=kernels.broadcast_grid(shape, tile, cluster))
    expected = row_dot_in_kernel_order(x, v, tile[1])
    assert np.array_equal(y.view(np.uint32), expected.view(np.uint32))
    assert (np.abs(y - row_dot_exact(x, v, tile[1])) <= row_dot_bound(x, v, tile[1])).all()


@pytest.mark.parametrize("workload", ["copy", "row_dot"])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_cluster_of_8(variant, workload):
    """The largest portable cluster: each CTA's multicast share is 8 of the 64 rows; 1000 x
    1000 (interpreted: 66 x 200) leaves tails on both sides."""
    from tests.frontends.row_dot_reference import row_dot_in_kernel_order

    shape, tile, cluster = device.shapes([(1000, 1000)], [(66, 200)])[0], (64, 256), 8
    rng = np.random.default_rng(zlib.crc32(f"8{variant}{workload}".encode()))
    x = rng.standard_normal(shape).astype(np.float32)
    grid = kernels.broadcast_grid(shape, tile, cluster)
    if workload == "copy":
        module = kernels.broadcast_copy(shape, "f32", tile, cluster=cluster, **VARIANTS[variant])
        y = np.full((cluster, *shape), np.nan, np.float32)
        runtime.compile(module)(x, y, grid=grid)
        assert all(np.array_equal(bits(y[r]), bits(x)) for r in range(cluster))
        return
    module = kernels.broadcast_row_dot(shape, "f32", tile, cluster=cluster, **VARIANTS[variant])
    v = rng.standard_normal((cluster, shape[1])).astype(np.float32)
    expected = row_dot_in_kernel_order(x, v, tile[1])
    y = np.full(expected.shape, np.nan, np.float32)
    runtime.compile(module)(x, v, y, grid=grid)
    assert np.array_equal(y.view(np.uint32), expected.view(np.uint32))
