"""Three launches of kernels.gemm (128x256x64 cooperative, bf16) on device tensors, for a
profiler (Nsight Compute: `ncu --launch-skip 2 --launch-count 1 -k regex:gemm ...`).

    python scripts/gemm_once.py M N K [--tile 128x256x64] [--schedule cooperative]
        [--cluster 1|2]
"""

from __future__ import annotations

import argparse

from copy_tools import runtime
from frontends import kernels


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", type=int, nargs=3)
    parser.add_argument("--tile", default="128x256x64")
    parser.add_argument("--schedule", default="cooperative")
    parser.add_argument("--cluster", type=int, default=1)
    args = parser.parse_args()
    import torch

    m, n, k = args.shape
    tile = tuple(int(x) for x in args.tile.split("x"))
    module = kernels.gemm(
        m, n, k, tile=tile, schedule=args.schedule, cluster=args.cluster, verify=False
    )
    kernel = runtime.compile(module, verify=False).kernel()
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    sms = kernel.max_active_clusters() * args.cluster  # blocks the GPU runs at once
    launch = kernel.prepare(
        a,
        b,
        c,
        grid=kernels.gemm_grid(m, n, tile, sms=sms, cluster=args.cluster, schedule=args.schedule),
    )
    for _ in range(3):
        launch()
    torch.cuda.synchronize()
    print("gemm_once: 3 launches")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
