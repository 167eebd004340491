"""One small launch of a kernel, for compute-sanitizer.

python scripts/gpu_check.py tma|multicast|pipelined1|pipelined3|broadcast2|broadcast4
                                            (builder kernels, small arrays; pipelinedS:
                                             the persistent ring of S stages on 4 blocks;
                                             broadcastC: y[r] = x by multicast over a
                                             cluster of C, with tails)
python scripts/gpu_check.py gemm|gemm_pingpong|gemm_cluster2
                                            (kernels.gemm, 256 x 384 x 192 bf16 on 2
                                             blocks: persistent, 2 tiles a block; C
                                             within the GEMM tests' tolerance)
python scripts/gpu_check.py examples/tma_tile_copy.mlir|examples/multicast_copy.mlir
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from copy_tools import runtime
from frontends import kernels

EXAMPLES = {
    "tma_tile_copy.mlir": ((4096, 4096), (64, 64)),
    "multicast_copy.mlir": ((128, 32, 4096), (128, 64)),
}


GEMMS = {
    "gemm": {},
    "gemm_pingpong": {"schedule": "pingpong"},
    "gemm_cluster2": {"cluster": 2},
}
"""kernels.gemm's schedules for the sanitizers: small, persistent (fewer blocks than tiles)."""


def check_gemm(which: str) -> int:
    """kernels.gemm at 256 x 384 x 192 (bf16, bf16 C) on 2 blocks (2 clusters of 2 for the
    cluster form): C against numpy's f32 product within the GEMM tests' bound."""
    import ml_dtypes

    M, N, K = 256, 384, 192
    options = GEMMS[which]
    program = runtime.compile(kernels.gemm(M, N, K, **options))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    c = np.zeros((M, N), ml_dtypes.bfloat16)
    cluster = options.get("cluster", 1)
    schedule = options.get("schedule", "cooperative")
    sms = 2 * cluster
    program(a, b, c, grid=kernels.gemm_grid(M, N, sms=sms, cluster=cluster, schedule=schedule))
    af, bf = a.astype(np.float32), b.astype(np.float32)
    ref = af @ bf.T
    bound = K * 2.0**-22 * (np.abs(af) @ np.abs(bf).T) + 2.0**-7 * np.abs(ref)
    ok = bool(np.all(np.abs(c.astype(np.float32) - ref) <= bound))
    print(f"{which}: {'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


def main(which: str) -> int:
    if which == "tma":
        module, shape, grid = kernels.tma_copy((256, 320), "f32"), (256, 320), (5, 4)
    elif which == "multicast":
        module, shape, grid = kernels.multicast_copy((128, 256), "f32"), (4, 32, 256), (8, 2)
    elif which.startswith("pipelined") and which[len("pipelined") :].isdigit():
        stages = int(which[len("pipelined") :])
        module = kernels.tma_copy_pipelined((512, 384), "f32", (64, 64), stages=stages)
        shape, grid = (512, 384), (4,)
    elif which in ("broadcast2", "broadcast4"):
        c = int(which[-1])
        shape = (130, 264)  # tails: with C = 4 the last tile's last shares are wholly outside
        module = kernels.broadcast_copy(shape, "f32", cluster=c)
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        y = np.zeros((c, *shape), np.float32)
        runtime.compile(module)(x, y, grid=kernels.broadcast_grid(shape, (64, 256), c))
        ok = all(np.array_equal(x, y[r]) for r in range(c))
        print(f"{which}: {'ok' if ok else 'MISMATCH'}")
        return 0 if ok else 1
    elif which in GEMMS:
        return check_gemm(which)
    elif Path(which).name in EXAMPLES:
        module = Path(which).read_text()
        shape, grid = EXAMPLES[Path(which).name]
    else:
        expected = (
            f"tma, multicast, pipelinedS, broadcastC, {', '.join(GEMMS)} or one of "
            f"{sorted(EXAMPLES)}"
        )
        print(f"expected {expected}, got {which}", file=sys.stderr)
        return 1
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    y = np.zeros_like(x)
    runtime.compile(module)(x, y, grid=grid)
    ok = bool(np.array_equal(x, y))
    print(f"{which}: {'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "tma"))
