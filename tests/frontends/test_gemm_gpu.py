"""On a GPU: `kernels.gemm` against numpy's product of the same bf16/f16 operands in f32,
under a tolerance (the GPU does not specify the order or the internal precision of wgmma's
accumulation): |C - ref| <= 2^-7 |ref| + K 2^-22 (|A| |B|^T) for 16-bit C (its rounding,
and f32 accumulation in any order), 2^-20 |ref| + K 2^-22 (|A| |B|^T) for f32 C. Square,
odd (edge tiles zero-filled and clipped) and persistent (fewer blocks than tiles) launches
of each schedule, and a cluster of 2. Without a GPU, under the interpreter, at smaller
shapes (tests/frontends/test_gemm.py compares the interpreter bit for bit)."""

from __future__ import annotations

import numpy as np
import pytest

from copy_tools import runtime
from frontends import kernels
from tests import device
from tests.runtime.test_runtime_gpu import numpy_dtype

pytestmark = device.marks()

CASES = device.shapes(
    [
        # (M, N, K, options, sms)
        ((1024, 1024, 1024), {}, None),
        ((1000, 1000, 1000), {"out": "f32"}, 132),
        ((513, 776, 264), {"dtype": "f16", "out": "f16", "tile": (128, 128, 32)}, 7),
        ((1024, 1024, 512), {"schedule": "pingpong"}, 132),
        ((777, 1032, 520), {"schedule": "pingpong", "stages": 3, "out": "f32"}, 5),
        ((1024, 2048, 512), {"tile": (128, 256, 64)}, 132),
        ((1000, 1024, 128), {"cluster": 2}, 132),
        ((1024, 2048, 256), {"tile": (128, 256, 64), "group": 4}, 13),
        ((1000, 1032, 128), {"cluster": 2, "group": 8}, 6),
    ],
    [
        ((128, 128, 128), {}, None),
        ((130, 72, 80), {"tile": (128, 64, 64), "out": "f32"}, None),
        ((200, 264, 136), {"dtype": "f16", "out": "f16", "tile": (128, 128, 32)}, 2),
        ((256, 256, 192), {"schedule": "pingpong"}, 1),
    ],
)


@pytest.mark.parametrize(("shape", "options", "sms"), CASES, ids=str)
def test_gemm(shape, options, sms):
    M, N, K = shape
    dtype, out = options.get("dtype", "bf16"), options.get("out", "bf16")
    tile = options.get("tile", (128, 128, 64))
    program = runtime.compile(kernels.gemm(M, N, K, **options), verify=False)
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(numpy_dtype(dtype))
    b = rng.standard_normal((N, K)).astype(numpy_dtype(dtype))
    c = np.full((M, N), np.nan, numpy_dtype(out))
    cluster = options.get("cluster", 1)
    schedule = options.get("schedule", "cooperative")
    grid = kernels.gemm_grid(M, N, tile, sms=sms, cluster=cluster, schedule=schedule)
    program(a, b, c, grid=grid)
    af, bf = a.astype(np.float32), b.astype(np.float32)
    ref = af @ bf.T
    bound = K * 2.0**-22 * (np.abs(af) @ np.abs(bf).T)
    bound += (2.0**-20 if out == "f32" else 2.0**-7) * np.abs(ref)
    err = np.abs(c.astype(np.float32) - ref)
    assert np.all(err <= bound), f"{int(np.sum(~(err <= bound)))} elements off"


@pytest.mark.skipif(not device.GPU, reason="no CUDA driver or GPU here: an occupancy query")
def test_max_active_clusters_bounds_the_persistent_grid():
    """`max_active_clusters`: the clusters of 2 (one block an SM each, for its SMEM) the GPU
    runs at once: at least one, at most one per pair of SMs; a kernel without a cluster: its
    blocks, one per SM here."""
    from cuda.bindings import driver as cu

    from runtime.driver import call

    sms = call(
        "cuDeviceGetAttribute",
        cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        call("cuCtxGetDevice"),
    )
    pair = runtime.compile(kernels.gemm(1024, 1024, 256, cluster=2), verify=False).kernel()
    assert 1 <= pair.max_active_clusters() <= sms // 2
    one = runtime.compile(kernels.gemm(1024, 1024, 256), verify=False).kernel()
    assert one.max_active_clusters() == sms
