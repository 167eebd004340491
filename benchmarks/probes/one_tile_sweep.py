"""Which box makes the one-tile-per-block TMA copy fastest? `kernels.tma_copy` over 2 GiB
float32 arrays (16384x32768) for a sweep of boxes, each timed interleaved with torch's copy
(3 rounds x `--reps` launches, median of each kernel's rounds), both checked.

    python3 benchmarks/probes/one_tile_sweep.py [--reps 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import timed  # noqa: E402

M, N = 16384, 32768
BOXES = [(8, 256), (16, 256), (32, 256), (64, 256), (128, 256), (32, 128), (64, 128), (128, 128)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    import torch

    from copy_tools import runtime
    from frontends import kernels

    x = torch.randn(M, N, device="cuda")
    y = torch.empty_like(x)
    nbytes = 2 * M * N * 4
    rows = []
    for box in BOXES:
        launch = runtime.compile(kernels.tma_copy((M, N), "f32", box)).kernel()
        launch = launch.prepare(x, y, grid=kernels.grid((M, N), box))
        torch_t, ours_t = [], []
        for _ in range(3):
            torch_t.append(timed(lambda: y.copy_(x), args.reps))
            y.zero_()
            ours_t.append(timed(launch, args.reps))
        ok = bool(torch.equal(x, y))
        launch.release()
        t, o = statistics.median(torch_t), statistics.median(ours_t)
        rows.append((box, nbytes / t / 1e9, nbytes / o / 1e9, ok))
    print(f"{torch.cuda.get_device_name()}; x, y {M}x{N} float32; GB/s = read + written")
    print("| box | torch copy GB/s | TMA copy GB/s | ratio | correct |")
    print("|---|---|---|---|---|")
    for box, t, o, ok in rows:
        print(f"| {box[0]}x{box[1]} | {t:.0f} | {o:.0f} | {o / t:.3f} | {ok} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
