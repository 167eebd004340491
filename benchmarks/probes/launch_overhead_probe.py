"""What a launch costs the host, next to PyTorch's: the f16 add z = x + y by torch
(`torch.add(x, y, out=z)`) and by a prepared copy-dialect launch (`ws_elementwise`, 32x128
tiles, 1 stage, 4 consumer warps, 2 out buffers), on a launch-bound shape (128 x 128) and on
16384 x 16384.

    python3 benchmarks/probes/launch_overhead_probe.py

Rows: the host's microseconds per call (2000 calls issued back to back, then one
synchronize: the host's issue rate, the GPU keeps up on the small shape), and the CUDA-event
time of one launch on an idle stream (`bench_common.timed`, as bench_copy and bench_compute
time every row: it includes the host's time from the start event to the launch), median of
30 per round, rounds alternated between the two.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import timed  # noqa: E402

SHAPES = ((128, 128), (16384, 16384))
TILE = (32, 128)
ROUNDS = 5
CALLS = 2000


def launches(shape: tuple[int, int]):
    import torch

    from copy_tools import runtime
    from frontends import kernels

    x = torch.randn(shape, device="cuda").half()
    y = torch.randn(shape, device="cuda").half()
    z = torch.empty_like(x)
    module = kernels.ws_elementwise(
        "add", shape, "f16", TILE, stages=1, consumer_warps=4, out_buffers=2
    )
    ws = runtime.compile(module).kernel().prepare(x, y, z, grid=kernels.tiles_grid(shape, TILE))
    expected = x + y
    rows = {"torch add": lambda: torch.add(x, y, out=z), "copy-dialect ws add": ws}
    for name, launch in rows.items():
        z.zero_()
        launch()
        torch.cuda.synchronize()
        assert torch.equal(z, expected), name
    return rows


def host_us(launch) -> float:
    import torch

    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(CALLS):
        launch()
    issued = time.perf_counter() - start
    torch.cuda.synchronize()
    return issued / CALLS * 1e6


def main() -> int:
    import torch

    print(
        f"{torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"Python {sys.version.split()[0]}"
    )
    try:
        from importlib.metadata import version

        print(f"cuda-bindings {version('cuda-bindings')}")
    except Exception as exc:  # noqa: BLE001 - the version is a condition, not a result
        print(f"cuda-bindings version unknown ({exc})")
    print()
    print(
        "| shape | kernel | host us per call (median of rounds) | event us (median of rounds) "
        "| event us per round |"
    )
    print("|---|---|---|---|---|")
    for shape in SHAPES:
        rows = launches(shape)
        host: dict[str, list[float]] = {name: [] for name in rows}
        event: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(ROUNDS):
            for name, launch in rows.items():
                if shape == SHAPES[0]:
                    host[name].append(host_us(launch))
                event[name].append(timed(launch, 30) * 1e6)
        for name in rows:
            h = f"{statistics.median(host[name]):.2f}" if host[name] else "-"
            per = ", ".join(f"{t:.1f}" for t in event[name])
            print(
                f"| {shape[0]}x{shape[1]} | {name} | {h} | "
                f"{statistics.median(event[name]):.1f} | {per} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
