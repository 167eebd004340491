"""On a GPU (an H200 here): the warp-specialized kernels of `kernels` (a producer warp
feeding a ring of SMEM slots to consumer warps) against numpy, for odd shapes (partial edge
tiles), every stage count, small grids (each block walks many laps of its ring) and several
consumer-warp counts, all bit-exact against numpy (`a * x + b` as numpy computes it in f32:
a rounded product, then a rounded sum). Without a GPU, under the interpreter, on smaller
shapes and grids of the same tiles, stages, warps and ops (each list's second half)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from copy_tools import runtime
from frontends import kernels
from tests import device
from tests.runtime.test_runtime_gpu import numpy_dtype, random, same_bits

pytestmark = device.marks()

TARGET = "sm_90a"


def seed(*parts: object) -> int:
    return zlib.crc32(repr(parts).encode())


@pytest.mark.parametrize(
    ("shape", "dtype", "tile", "stages", "in_flight", "blocks"),
    device.shapes(
        [
            ((1000, 1000), "f32", (64, 128), 4, 1, 3),
            ((130, 264), "f32", (64, 128), 1, 0, 1),
            ((130, 264), "f32", (64, 128), 2, 1, 2),
            ((513, 776), "f16", (64, 128), 3, 2, 5),
            ((777, 1032), "bf16", (128, 128), 6, 1, 7),
            ((4096, 4096), "f32", (64, 128), 4, 2, 132),
            ((64, 128), "f32", (64, 128), 4, 1, 132),  # fewer tiles than blocks
            ((300, 200), "i32", (32, 64), 5, 3, 4),
        ],
        [
            ((200, 300), "f32", (64, 128), 4, 1, 3),
            ((130, 264), "f32", (64, 128), 1, 0, 1),
            ((130, 264), "f32", (64, 128), 2, 1, 2),
            ((129, 200), "f16", (64, 128), 3, 2, 5),
            ((257, 264), "bf16", (128, 128), 6, 1, 2),
            ((256, 512), "f32", (64, 128), 4, 2, 5),
            ((64, 128), "f32", (64, 128), 4, 1, 20),  # fewer tiles than blocks
            ((100, 200), "i32", (32, 64), 5, 3, 4),
        ],
    ),
    ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v),
)
def test_ws_copy(shape, dtype, tile, stages, in_flight, blocks):
    module = kernels.ws_copy(shape, dtype, tile, stages=stages, in_flight=in_flight, target=TARGET)
    program = runtime.compile(module)
    x = random(shape, dtype, seed(shape, dtype, stages))
    y = np.zeros_like(x)
    program(x, y, grid=(blocks, 1))
    assert same_bits(y, x)


ELEMENTWISE_CASES = device.shapes(
    [
        # (op, shape, dtype, out_dtype, stages, consumer_warps, blocks)
        ("add", (1000, 1000), "f32", None, 1, 4, 5),
        ("add", (130, 264), "bf16", None, 1, 1, 1),
        ("add", (513, 776), "f16", None, 2, 8, 3),
        ("add", (2048, 2048), "f32", None, 2, 4, 132),
        ("add", (2048, 2048), "f32", None, None, 8, 132),
        ("axpb", (1000, 1000), "f32", None, 3, 4, 7),
        ("axpb", (130, 264), "bf16", None, 4, 2, 2),
        ("axpb", (777, 1032), "f16", None, 2, 4, 4),
        ("cast", (1000, 1000), "f32", "bf16", 4, 4, 6),
        ("cast", (130, 264), "f32", "f16", 1, 4, 1),
        ("cast", (513, 776), "bf16", "f32", 3, 8, 2),
        ("cast", (64, 128), "f16", "f32", 2, 4, 132),
    ],
    [
        ("add", (200, 300), "f32", None, 1, 4, 5),
        ("add", (130, 264), "bf16", None, 1, 1, 1),
        ("add", (129, 200), "f16", None, 2, 8, 3),
        ("add", (256, 512), "f32", None, 2, 4, 20),
        ("add", (256, 512), "f32", None, None, 8, 20),
        ("axpb", (200, 300), "f32", None, 3, 4, 7),
        ("axpb", (130, 264), "bf16", None, 4, 2, 2),
        ("axpb", (129, 200), "f16", None, 2, 4, 4),
        ("cast", (200, 264), "f32", "bf16", 4, 4, 6),
        ("cast", (130, 264), "f32", "f16", 1, 4, 1),
        ("cast", (129, 200), "bf16", "f32", 3, 8, 2),
        ("cast", (64, 128), "f16", "f32", 2, 4, 20),
    ],
)


@pytest.mark.parametrize(
    ("op", "shape", "dtype", "out_dtype", "stages", "warps", "blocks"),
    ELEMENTWISE_CASES,
    ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v),
)
def test_ws_elementwise(op, shape, dtype, out_dtype, stages, warps, blocks):
    module = kernels.ws_elementwise(
        op, shape, dtype, out_dtype=out_dtype, stages=stages, consumer_warps=warps, target=TARGET
    )
    program = runtime.compile(module)
    out_np = numpy_dtype(out_dtype or dtype)
    x = random(shape, dtype, seed(op, shape, dtype, 0))
    z = np.zeros(shape, out_np)
    if op == "add":
        y = random(shape, dtype, seed(op, shape, dtype, 1))
        program(x, y, z, grid=(blocks, 1))
        # Each element computed in f32 and rounded once (what PyTorch does for 16-bit types).
        want = (x.astype(np.float32) + y.astype(np.float32)).astype(out_np)
        assert same_bits(z, want)
    elif op == "axpb":
        a, b = np.float32(1.75), np.float32(-3.125)
        program(x, z, a, b, grid=(blocks, 1))
        # In f32, each op rounded (mul.rn, add.rn: no fma), then rounded to the dtype.
        want = (a * x.astype(np.float32) + b).astype(out_np)
        assert same_bits(z, want)
    else:
        program(x, z, grid=(blocks, 1))
        assert same_bits(z, x.astype(np.float32).astype(out_np))


@pytest.mark.parametrize(
    ("shape", "dtype", "tile", "stages", "in_flight", "per_block"),
    device.shapes(
        [
            ((1000, 1000), "f32", (32, 256), 1, 0, 1),
            ((1000, 1000), "f32", (32, 256), 2, 1, 1),
            ((513, 776), "f16", (16, 256), 4, 2, 3),  # the last block gets fewer tiles
            ((130, 264), "bf16", (64, 128), 2, 1, 2),
            ((777, 1032), "i32", (32, 128), 3, 1, 8),
        ],
        [
            ((100, 300), "f32", (32, 256), 1, 0, 1),
            ((100, 300), "f32", (32, 256), 2, 1, 1),
            ((65, 264), "f16", (16, 256), 4, 2, 3),  # the last block gets fewer tiles
            ((130, 264), "bf16", (64, 128), 2, 1, 2),
            ((100, 300), "i32", (32, 128), 3, 1, 8),
        ],
    ),
    ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v),
)
def test_ws_copy_dealt_by_tiles(shape, dtype, tile, stages, in_flight, per_block):
    """The same kernel, a few tiles per block on `tiles_grid` (the fast launch)."""
    module = kernels.ws_copy(shape, dtype, tile, stages=stages, in_flight=in_flight, target=TARGET)
    program = runtime.compile(module)
    x = random(shape, dtype, seed(shape, dtype, tile, per_block))
    y = np.zeros_like(x)
    program(x, y, grid=kernels.tiles_grid(shape, tile, per_block))
    assert same_bits(y, x)


@pytest.mark.parametrize(
    ("op", "shape", "dtype", "out_dtype", "tile", "stages", "warps", "out_buffers", "per_block"),
    device.shapes(
        [
            ("add", (1000, 1000), "f32", None, (32, 128), 1, 4, 1, 1),
            ("add", (1000, 1000), "bf16", None, (16, 256), 1, 4, 2, 1),
            ("add", (513, 776), "f16", None, (32, 128), 2, 8, 1, 3),
            ("axpb", (777, 1032), "f32", None, (32, 128), 1, 4, 1, 1),
            ("axpb", (130, 264), "bf16", None, (64, 128), 1, 8, 1, 2),
            ("cast", (1000, 1000), "f32", "bf16", (32, 128), 1, 4, 1, 1),
            ("cast", (513, 776), "f32", "f16", (16, 256), 2, 4, 1, 5),
            ("cast", (130, 264), "bf16", "f32", (32, 128), 1, 2, 1, 1),
        ],
        [
            ("add", (100, 300), "f32", None, (32, 128), 1, 4, 1, 1),
            ("add", (100, 264), "bf16", None, (16, 256), 1, 4, 2, 1),
            ("add", (129, 200), "f16", None, (32, 128), 2, 8, 1, 3),
            ("axpb", (100, 300), "f32", None, (32, 128), 1, 4, 1, 1),
            ("axpb", (130, 264), "bf16", None, (64, 128), 1, 8, 1, 2),
            ("cast", (100, 264), "f32", "bf16", (32, 128), 1, 4, 1, 1),
            ("cast", (65, 264), "f32", "f16", (16, 256), 2, 4, 1, 5),
            ("cast", (130, 264), "bf16", "f32", (32, 128), 1, 2, 1, 1),
        ],
    ),
    ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v),
)
def test_ws_elementwise_dealt_by_tiles(
    op, shape, dtype, out_dtype, tile, stages, warps, out_buffers, per_block
):
    """One output buffer, a few tiles per block on `tiles_grid`: odd shapes, every op."""
    module = kernels.ws_elementwise(
        op,
        shape,
        dtype,
        tile,
        out_dtype=out_dtype,
        stages=stages,
        consumer_warps=warps,
        out_buffers=out_buffers,
        target=TARGET,
    )
    program = runtime.compile(module)
    grid = kernels.tiles_grid(shape, tile, per_block)
    out_np = numpy_dtype(out_dtype or dtype)
    x = random(shape, dtype, seed(op, shape, dtype, 2))
    z = np.zeros(shape, out_np)
    if op == "add":
        y = random(shape, dtype, seed(op, shape, dtype, 3))
        program(x, y, z, grid=grid)
        want = (x.astype(np.float32) + y.astype(np.float32)).astype(out_np)
    elif op == "axpb":
        a, b = np.float32(-0.625), np.float32(7.5)
        program(x, z, a, b, grid=grid)
        want = (a * x.astype(np.float32) + b).astype(out_np)
    else:
        program(x, z, grid=grid)
        want = x.astype(np.float32).astype(out_np)
    assert same_bits(z, want)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_ws_elementwise_with_register_reallocation(dtype):
    # A producer warpgroup gives registers (setmaxnreg.dec 40), two consumer warpgroups take
    # them (setmaxnreg.inc 232): 128 * 40 + 256 * 232 <= 65536.
    shape = device.shapes([(777, 1032)], [(129, 200)])[0]
    module = kernels.ws_elementwise(
        "add", shape, dtype, consumer_warps=8, maxnreg=(40, 232), target=TARGET
    )
    program = runtime.compile(module)
    x = random(shape, dtype, seed("maxnreg", dtype, 0))
    y = random(shape, dtype, seed("maxnreg", dtype, 1))
    z = np.zeros_like(x)
    program(x, y, z, grid=(device.shapes([5], [2])[0], 1))
    assert same_bits(z, (x.astype(np.float32) + y.astype(np.float32)).astype(x.dtype))
