"""Is a TMA copy of copy-dialect at or above torch's copy? Each candidate timed interleaved with
`y.copy_(x)` on the same 2 GiB float32 arrays (16384x32768): `--rounds` alternating rounds of
`--reps` launches after 3 warm-ups, the median of each kernel's round medians, the ratio =
torch time / ours, and the spread of the per-round ratios (min-max); every result checked.

Candidates: `kernels.ws_copy` dealt out a few tiles per block (`kernels.tiles_grid`, bench_copy's
WS_COPY_PER_TILE) and persistent, and the one-tile `kernels.tma_copy` with each L2 promotion of
its load's tensor map.

    python3 benchmarks/probes/copy_confirm.py [--rounds 7] [--reps 20] [--set occupancy]

`--set occupancy`: ws_copy with one tile per block over the SMEM each block takes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import timed  # noqa: E402
from bench_copy import WS_COPY_PER_TILE  # noqa: E402

M, N = 16384, 32768


OCCUPANCY = (
    # (tile, stages, in flight): one tile per block; the ring's unused slots set the block's
    # SMEM, and with it how many blocks share an SM (3 for 64 KiB, 2 for 96 KiB, 1 for 128+).
    ((32, 256), 2, 1),
    ((32, 256), 2, 1),
    ((24, 256), 2, 1),
    ((48, 256), 1, 0),
    ((16, 256), 4, 1),
    ((32, 128), 4, 1),
    ((32, 256), 3, 1),
    ((64, 256), 2, 1),
    ((64, 256), 1, 0),
    ((16, 256), 2, 1),
)


def occupancy_candidates():
    """ws_copy, one tile per block, over the SMEM a block takes (`--set occupancy`)."""
    from frontends import kernels

    return [
        (
            f"ws_copy {t[0]}x{t[1]}, {s} stages, {f} in flight, 1 tile/block",
            lambda t=t, s=s, f=f: kernels.ws_copy((M, N), "f32", t, stages=s, in_flight=f),
            kernels.tiles_grid((M, N), t),
        )
        for t, s, f in OCCUPANCY
    ]


def candidates(sms: int):
    """(name, module builder, grid) of each candidate."""
    from frontends import kernels

    found = []
    for tile, stages, in_flight, per_block in WS_COPY_PER_TILE:
        found.append(
            (
                f"ws_copy {tile[0]}x{tile[1]}, {stages} stages, {in_flight} in flight, "
                f"{per_block} tile(s)/block",
                lambda t=tile, s=stages, f=in_flight: kernels.ws_copy(
                    (M, N), "f32", t, stages=s, in_flight=f
                ),
                kernels.tiles_grid((M, N), tile, per_block),
            )
        )
    found.append(
        (
            "ws_copy 64x256, 3 stages, 2 in flight, persistent",
            lambda: kernels.ws_copy((M, N), "f32", (64, 256), stages=3, in_flight=2),
            kernels.ws_grid(sms),
        )
    )
    for box in ((64, 256), (32, 256)):
        for promotion in (None, 0, 64, 256):
            found.append(
                (
                    f"tma_copy {box[0]}x{box[1]}, L2 promotion "
                    f"{'128 (default)' if promotion is None else promotion}",
                    lambda b=box, p=promotion: kernels.tma_copy((M, N), "f32", b, l2_promotion=p),
                    kernels.grid((M, N), box),
                )
            )
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--set", choices=("sweep", "occupancy"), default="sweep")
    args = parser.parse_args()
    import torch

    from copy_tools import runtime

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    x = torch.randn(M, N, device="cuda")
    y = torch.empty_like(x)
    nbytes = 2 * M * N * 4
    print(
        f"{torch.cuda.get_device_name()}; x, y {M}x{N} float32; GB/s = read + written; "
        f"{args.rounds} rounds x {args.reps} launches, interleaved with torch's copy"
    )
    print("| kernel | torch GB/s | ours GB/s | ratio | round ratios min-max | correct |")
    print("|---|---|---|---|---|---|")
    chosen = candidates(sms) if args.set == "sweep" else occupancy_candidates()
    for name, build, grid in chosen:
        launch = runtime.compile(build()).kernel().prepare(x, y, grid=grid)
        theirs, ours = [], []
        for _ in range(args.rounds):
            theirs.append(timed(lambda: y.copy_(x), args.reps))
            y.fill_(float("nan"))
            ours.append(timed(launch, args.reps))
        ok = bool(torch.equal(x, y))
        launch.release()
        t, o = statistics.median(theirs), statistics.median(ours)
        ratios = [a / b for a, b in zip(theirs, ours, strict=True)]
        print(f"| {name} | {nbytes / t / 1e9:.0f} | {nbytes / o / 1e9:.0f} | {t / o:.3f} | "
              f"{min(ratios):.3f}-{max(ratios):.3f} | {ok} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
