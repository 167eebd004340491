"""`kernels.broadcast_copy` without a GPU: every variant (multicast, its unicast twin, the
rank-major unicast order) builds, verifies (ops and protocol) and compiles to a cubin for
sm_90a with the cluster, boxes and multicast it promises; parameters it cannot build raise a
ValueError saying what was expected. The launches are in test_multicast_broadcast_gpu.py."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, func, gpu

from analysis.protocol import check_protocol
from copy_dialect import ops as copy
from copy_tools.universe import make_context
from frontends import kernels
from passes.pipeline import compile_module

VARIANTS = {
    "multicast": {"multicast": True},
    "unicast": {"multicast": False},
    "unicast_rank_major": {"multicast": False, "order": "rank_major"},
}


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16"])
@pytest.mark.parametrize("cluster", [2, 4])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_variant_compiles_for_sm_90a(variant, cluster, dtype):
    shape, tile = (1000, 1000), (64, 256)
    module = kernels.broadcast_copy(shape, dtype, tile, cluster=cluster, **VARIANTS[variant])
    assert not check_protocol(module)
    compiled = compile_module(module, make_context())
    assert compiled.cubin
    (abi,) = compiled.abi.kernels.values()
    assert abi.name == f"broadcast_{'multicast' if variant == 'multicast' else variant}"
    assert abi.cluster == (cluster, 1, 1)
    x, y, load, store = abi.params
    assert (x.shape, y.shape) == (shape, (cluster, *shape))
    # The multicast load issues 1/cluster of the tile's rows; the twins load the whole tile.
    rows = tile[0] // cluster if variant == "multicast" else tile[0]
    assert load.box == (rows, tile[1])
    assert store.box == (1, *tile)
    assert store.written
    assert f".reqnctapercluster {cluster}, 1, 1" in compiled.ptx
    assert (".multicast::cluster" in compiled.ptx) == (variant == "multicast")


def test_grid_has_a_cta_per_tile_and_rank():
    assert kernels.broadcast_grid((1000, 1000), (64, 256), 4) == (16, 16)
    assert kernels.broadcast_grid((128, 512), (64, 256)) == (4, 2)


def test_small_tiles_and_shares():
    # Shares of 8 rows x 64 bf16 (1 KiB) over a cluster of 4; 64-byte rows of x.
    module = kernels.broadcast_copy((130, 32), "bf16", (32, 64), cluster=4)
    compiled = compile_module(module, make_context())
    (abi,) = compiled.abi.kernels.values()
    assert abi.params[2].box == (8, 64)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (((256, 256), "f32"), {"cluster": 1}, r"expected a cluster of 2 to 8 CTAs .* got 1"),
        (((256, 256), "f32"), {"cluster": 16}, r"expected a cluster of 2 to 8 CTAs .* got 16"),
        (
            ((256, 256), "f32"),
            {"order": "rank_major"},
            r"expected order='cluster' for multicast=True, got order='rank_major'.*"
            r"multicast=False",
        ),
        (((256, 256), "f32"), {"order": "random"}, r"expected order of cluster, rank_major"),
        (
            ((256, 256), "f32", (30, 64)),
            {"cluster": 4},
            r"expected tile rows divisible by the cluster \(4\) .* got 30; use 32 rows",
        ),
        (
            ((256, 256), "f32", (4, 8)),
            {},
            r"share of the tile \(2x8 f32\) to be a multiple of 128 bytes.* got 64 bytes",
        ),
        (
            ((256, 256), "f32", (64, 6)),
            {"multicast": False},
            r"expected tile rows of a multiple of 16 bytes .* got 6 f32 \(24 bytes\); use 8",
        ),
        (
            ((100, 100), "bf16"),
            {},
            r"expected rows of x and y of a multiple of 16 bytes .* got 100 bf16 \(200 bytes\);"
            r" pad the columns to 104",
        ),
        (
            ((1024, 1024), "f32", (256, 256)),
            {},
            r"expected a tile that fits the \d+ bytes of SMEM .* use a smaller tile",
        ),
        (((1024, 1024), "f32", (64, 512)), {}, r"expected a 2-D tile of 1 to 256 elements"),
        (((1024,), "f32"), {}, r"expected a 2-D shape of positive extents, got \(1024,\)"),
        (
            ((256, 256), "f32"),
            {"target": "sm_90"},
            r"'copy.async_copy' with collective \(multicast=True\) needs a target with "
            r"\.multicast::cluster \(sm_90a, .*\), but the target is sm_90; use sm_90a",
        ),
        (
            ((256, 256), "f32"),
            {"multicast": False, "target": "sm_80"},
            r"'broadcast_copy' with cluster=2 needs a target with clusters \(sm_90, .*\), but the "
            r"target is sm_80; use sm_90 or newer",
        ),
        (
            ((256, 256), "f32"),
            {"target": "sm_99"},
            r"unknown target 'sm_99': expected one of sm_80, ",
        ),
    ],
)
def test_invalid_parameters_raise_a_value_error(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        kernels.broadcast_copy(*args, **kwargs)


def block_copies(module, bx: int, by: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The load's GMEM origin and the store's, as block (bx, by) computes them."""
    load, store = gmem_origins(module, bx, by, 2)
    return load, store


def gmem_origins(module, bx: int, by: int, count: int) -> list[tuple[int, ...]]:
    """The GMEM origins of the kernel's first `count` copies, as block (bx, by) computes
    them: the kernel's index arithmetic evaluated on the block id, up to the last of them."""
    (fn,) = (op for op in module.walk() if isinstance(op, func.FuncOp))
    values = {}
    binary = {
        arith.AddiOp: lambda a, b: a + b,
        arith.MuliOp: lambda a, b: a * b,
        arith.DivUIOp: lambda a, b: a // b,
        arith.RemUIOp: lambda a, b: a % b,
    }
    copies = []
    for op in fn.body.block.ops:
        if isinstance(op, arith.ConstantOp):
            values[op.result] = op.value.value.data
        elif isinstance(op, gpu.BlockIdOp):
            values[op.result] = bx if op.dimension.data == gpu.DimensionEnum.X else by
        elif type(op) in binary:
            values[op.result] = binary[type(op)](values[op.lhs], values[op.rhs])
        elif isinstance(op, copy.AsyncCopyOp):
            copies.append(tuple(values[i] for i in op.geometry().gmem_indices))
            if len(copies) == count:
                return copies
    raise AssertionError(f"expected {count} copies, found {len(copies)}")


@pytest.mark.parametrize("cluster", [2, 4])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_rank_and_tile_is_stored_once_from_its_tile(variant, cluster):
    shape, tile = (130, 1000), (32, 256)
    module = kernels.broadcast_copy(shape, "f32", tile, cluster=cluster, **VARIANTS[variant])
    gx, gy = kernels.broadcast_grid(shape, tile, cluster)
    stored = []
    for by in range(gy):
        for bx in range(gx):
            load, (rank, row, col) = block_copies(module, bx, by)
            # The CTAs of a cluster share the load (multicast: CTA r issues rows r/C of it).
            assert load == (row, col)
            if variant != "unicast_rank_major":
                assert rank == bx % cluster
            stored.append((rank, row, col))
    tiles = {
        (r, i * tile[0], j * tile[1])
        for r in range(cluster)
        for i in range(-(-shape[0] // tile[0]))
        for j in range(-(-shape[1] // tile[1]))
    }
    assert sorted(stored) == sorted(tiles)


def test_rank_major_puts_the_ctas_of_a_tile_a_whole_x_apart():
    shape, tile = (256, 1024), (64, 256)
    module = kernels.broadcast_copy(
        shape, "f32", tile, cluster=2, multicast=False, order="rank_major"
    )
    gx, _ = kernels.broadcast_grid(shape, tile, 2)
    launched = {block_copies(module, n % gx, n // gx)[1]: n for n in range(2 * 16)}
    assert all(launched[(1, r, c)] - launched[(0, r, c)] == 16 for _, r, c in launched)


# --- broadcast_row_dot: C matrix-vector products sharing x ---------------------------------


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16"])
@pytest.mark.parametrize("cluster", [2, 4, 8])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_row_dot_variant_compiles_for_sm_90a(variant, cluster, dtype):
    shape, tile = (1000, 1000), (64, 256)
    module = kernels.broadcast_row_dot(shape, dtype, tile, cluster=cluster, **VARIANTS[variant])
    assert not check_protocol(module)
    compiled = compile_module(module, make_context())
    (abi,) = compiled.abi.kernels.values()
    assert abi.name == f"broadcast_row_dot_{'multicast' if variant == 'multicast' else variant}"
    assert abi.cluster == (cluster, 1, 1)
    x, v, y, load = abi.params
    assert (x.shape, v.shape, y.shape) == (shape, (cluster, 1000), (cluster, 4, 1000))
    assert y.element == "f32"
    rows = tile[0] // cluster if variant == "multicast" else tile[0]
    assert load.box == (rows, tile[1])
    assert (".multicast::cluster" in compiled.ptx) == (variant == "multicast")
    # The products and sums round as the numpy reference's (no contraction into an fma).
    assert "mul.rn.f32" in compiled.ptx
    assert "fma" not in compiled.ptx


@pytest.mark.parametrize("cluster", [2, 4])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_row_dot_loads_the_same_tiles_as_the_copy(variant, cluster):
    shape, tile = (130, 1000), (32, 256)
    dots = kernels.broadcast_row_dot(shape, "f32", tile, cluster=cluster, **VARIANTS[variant])
    copies = kernels.broadcast_copy(shape, "f32", tile, cluster=cluster, **VARIANTS[variant])
    (fn,) = (op for op in dots.walk() if isinstance(op, func.FuncOp))
    (load,) = [op for op in fn.body.block.ops if isinstance(op, copy.AsyncCopyOp)]
    assert bool(load.collective_dims) == (variant == "multicast")
    gx, gy = kernels.broadcast_grid(shape, tile, cluster)
    for by in range(gy):
        for bx in range(gx):
            assert block_copies(copies, bx, by)[0] == gmem_origins(dots, bx, by, 1)[0]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (((256, 256), "i32"), {}, r"expected a float element type \(f32, bf16, f16\), got 'i32'"),
        (
            ((256, 256), "f32", (64, 48)),
            {},
            r"expected tile\[1\] to be a multiple of 32 .* got tile \(64, 48\); use tile\[1\] "
            r"= 64",
        ),
        (((256, 256), "f32"), {"cluster": 3, "multicast": True}, r"expected tile rows divisib"),
        (
            ((256, 256), "f32"),
            {"order": "rank_major"},
            r"expected order='cluster' for multicast=True",
        ),
        (
            ((100, 100), "f16"),
            {},
            r"expected rows of x and y of a multiple of 16 bytes .* pad the columns to 104",
        ),
    ],
)
def test_row_dot_invalid_parameters_raise_a_value_error(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        kernels.broadcast_row_dot(*args, **kwargs)


def test_the_kernel_order_reference_is_within_the_documented_bound():
    # The GPU test compares the kernel with row_dot_in_kernel_order bit for bit; here that
    # reference is checked against float64 sums, within the bound the builder documents.
    from tests.frontends.row_dot_reference import (
        row_dot_bound,
        row_dot_exact,
        row_dot_in_kernel_order,
    )

    rng = np.random.default_rng(7)
    x = rng.standard_normal((70, 300)).astype(np.float32)
    v = rng.standard_normal((4, 300)).astype(np.float32)
    got = row_dot_in_kernel_order(x, v, 64)
    assert got.shape == (4, 5, 70)
    error = np.abs(got - row_dot_exact(x, v, 64))
    assert (error <= row_dot_bound(x, v, 64)).all()
    assert error.max() > 0  # float32 rounding happened: the comparison is not vacuous
