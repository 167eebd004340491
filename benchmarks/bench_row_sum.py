"""Row-sum bandwidth on the GPU: `kernels.ws_row_sum` against PyTorch's `x.sum(dim=1)`.

    python benchmarks/bench_row_sum.py [--reps 20] [--rows 16384] [--cols 16384]

One float32 array of rows x cols (1 GiB by default), y = its row sums (float32). Each row is
the median of `reps` timed launches after 3 warm-ups (CUDA events); GB/s counts the bytes
read plus written (x and y). Each result is checked against torch's float64 sums, within
the bound the GPU test uses: (ceil(cols / 32) + 5) * 2**-24 * sum_j |x[i, j]|. The
copy-dialect rows run on one block per SM (`ws_grid(sms)`) and vary the band height
(tile[0]), the tile width, the stages and the consumer warps; `balanced_band_rows` gives the
band height that spreads the rows most evenly over the SMs (125 for 16384 rows on 132).
Prints a markdown table with the conditions.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from math import ceil

from bench_common import timed

U = 2.0**-24


def variants(rows: int, sms: int) -> list[tuple[tuple[int, int], int, int, bool]]:
    """(tile, stages, consumer warps, L2 evict-first loads) of the copy-dialect rows."""
    from frontends import kernels

    balanced = kernels.balanced_band_rows(rows, sms)
    return [
        ((64, 128), 4, 4, False),
        ((128, 128), 3, 4, False),
        ((balanced, 128), 3, 4, False),
        ((balanced, 128), 3, 4, True),
        ((balanced, 64), 6, 4, False),
        ((balanced, 128), 3, 8, False),
        ((25, 256), 6, 4, False),
        ((32, 256), 6, 4, False),
    ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--rows", type=int, default=16384)
    parser.add_argument("--cols", type=int, default=16384)
    args = parser.parse_args()

    import torch

    from copy_tools import runtime
    from frontends import kernels

    m, n = args.rows, args.cols
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    x = torch.randn(m, n, device="cuda")
    exact = x.double().sum(dim=1)
    bound = (ceil(n / 32) + 5) * U / (1 - (ceil(n / 32) + 5) * U) * x.double().abs().sum(dim=1)
    nbytes = (m * n + m) * 4
    y = torch.empty(m, device="cuda")

    def correct() -> str:
        bad = ~((y.double() - exact).abs() <= bound)
        return "yes" if not bool(bad.any()) else f"no ({int(bad.sum())} rows off)"

    lines = []

    def add(name: str, seconds: float | None, ok: str, note: str) -> None:
        shown = "-" if seconds is None else f"{nbytes / seconds / 1e9:.0f}"
        lines.append(f"| {name} | {shown} | {ok} | {note} |")
        print(f"  {name}: {shown} GB/s ({ok}) {note}", file=sys.stderr, flush=True)

    y.zero_()
    t = timed(lambda: torch.sum(x, dim=1, out=y), args.reps)
    add("torch x.sum(dim=1)", t, correct(), "float32")
    for tile, stages, warps, evict_first in variants(m, sms):
        name = f"copy-dialect ws_row_sum {tile[0]}x{tile[1]}, {stages} stages, {warps} warps"
        name += ", evict-first loads" if evict_first else ""
        bands = ceil(m / tile[0])
        busiest = ceil(bands / sms) * tile[0]
        note = f"{bands} bands on {sms} blocks, busiest block {busiest} rows"
        try:
            hint = kernels.EVICT_FIRST if evict_first else None
            module = kernels.ws_row_sum(
                (m, n), "f32", tile, stages=stages, consumer_warps=warps, cache_hint=hint
            )
            launch = runtime.compile(module).kernel().prepare(x, y, grid=kernels.ws_grid(sms))
        except Exception as exc:
            add(name, None, "failed", f"{type(exc).__name__}: {str(exc)[:200]}")
            continue
        y.fill_(float("nan"))
        t = timed(launch, args.reps)
        add(name, t, correct(), note)

    driver = subprocess.run(
        ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    commit = (
        subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "(no git)"
    )
    print(
        f"GPU: {props.name} ({sms} SMs), driver {driver}; commit {commit}; float32 {m}x{n} "
        f"({m * n * 4 / 2**30:.2f} GiB); median of {args.reps} launches after 3 warm-ups "
        "(CUDA events); GB/s = bytes read + written / time\n"
    )
    print("| kernel | GB/s | correct | notes |")
    print("|---|---|---|---|")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
