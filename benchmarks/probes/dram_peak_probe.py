"""Are the copies at the DRAM's peak? Nsight Compute's DRAM throughput (% of the peak it
sustains), bytes moved and kernel time, for torch's copy and the copy-dialect copies of the
same 2 GiB float32 arrays, one profiled launch each after warm-ups (torch's copy is a
memcpy, which ncu does not profile: an elementwise torch kernel that moves the same bytes
stands in for it).

    python3 benchmarks/probes/dram_peak_probe.py        # runs itself under ncu, prints a table

Each kernel is launched between cudaProfilerStart/Stop, so ncu (`--profile-from-start off`)
profiles exactly those launches; `--clock-control none` leaves the clocks as in a timed run,
`--cache-control all` flushes caches before each. GB/s here is (read + written bytes) / ncu's
kernel time, one launch: it is not the benchmark's median, only the frame for the DRAM share.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_multicast import group_by_marker, marker_launch, profile_once, unit_scale  # noqa: E402

M, N = 16384, 32768
METRICS = (
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "gpu__time_duration.sum",
)


def kernels_to_profile(x, y, sms: int):
    """(name, launch, check) in profiling order."""
    import torch

    from copy_tools import runtime
    from frontends import kernels

    def prepared(module, grid, args=(x, y)):
        return runtime.compile(module).kernel().prepare(*args, grid=grid)

    # torch's y.copy_(x) is a cudaMemcpyAsync (no kernel for ncu to profile): its row stays
    # empty; torch.mul(x, 1, out=y) moves the same bytes through an elementwise kernel.
    rows = [
        ("torch copy (y.copy_(x), a memcpy)", lambda: y.copy_(x)),
        ("torch elementwise (torch.mul(x, 1, out=y))", lambda: torch.mul(x, 1.0, out=y)),
    ]
    for tile in ((64, 256),):
        launch = prepared(kernels.tma_copy((M, N), "f32", tile), kernels.grid((M, N), tile))
        rows.append((f"TMA copy, 1 tile/block {tile[0]}x{tile[1]}", launch))
    # ws_copy dealt out one tile per block (RESULTS.md runs 36-37: 0.996-1.007 of torch's copy)
    for tile in ((32, 256), (16, 256)):
        module = kernels.ws_copy((M, N), "f32", tile, stages=2, in_flight=1)
        launch = prepared(module, kernels.tiles_grid((M, N), tile))
        rows.append((f"ws_copy {tile[0]}x{tile[1]}, 2 stages, 1 tile/block", launch))
    launch = prepared(kernels.tma_copy_pipelined((M, N), "f32", (64, 256), stages=3), (sms,))
    rows.append(("TMA copy, pipelined 64x256, 3 stages, 1 block/SM", launch))
    return [(name, launch, lambda: bool(torch.equal(x, y))) for name, launch in rows]


def child() -> int:
    import torch

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    x = torch.randn(M, N, device="cuda")
    y = torch.empty_like(x)
    marker = marker_launch(x)
    for name, launch, check in kernels_to_profile(x, y, sms):
        for _ in range(3):
            launch()
        torch.cuda.synchronize()
        y.zero_()
        torch.cuda.synchronize()
        profile_once(launch, marker)
        print(f"ROW {name} (correct: {check()})", flush=True)
    return 0


def parse(text: str, metrics: tuple[str, ...] = METRICS) -> list[dict]:
    """ncu's raw CSV: one dict per kernel, `metrics` in bytes or seconds where ncu gives
    such a unit, as printed otherwise (percent, counts, registers)."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    table = list(csv.reader(io.StringIO("\n".join(lines))))
    header, rows = table[0], table[1:]
    column = {name: i for i, name in enumerate(header)}
    units = {}
    kernels = []
    for cells in rows:
        if not cells[column["ID"]].strip():  # the units row
            units = {m: cells[column[m]] for m in metrics}
            continue
        kernel = {"name": cells[column["Kernel Name"]]}
        for m in metrics:
            try:
                scale = unit_scale(units.get(m, ""))
            except ValueError:  # %, counts, registers
                scale = 1.0
            kernel[m] = float(cells[column[m]].replace(",", "")) * scale
        kernels.append(kernel)
    return kernels


def parent() -> int:
    cmd = [
        "ncu", "--csv", "--page", "raw", "--profile-from-start", "off",
        "--target-processes", "application-only", "--cache-control", "all",
        "--clock-control", "none", "--metrics", ",".join(METRICS),
        sys.executable, os.path.abspath(__file__), "--child",
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True)
    names = [line[4:] for line in out.stdout.splitlines() if line.startswith("ROW ")]
    try:
        groups = group_by_marker(parse(out.stdout))
    except (KeyError, IndexError, ValueError) as exc:
        print(f"no ncu table ({exc}):", out.stdout[-3000:], out.stderr[-3000:], sep="\n")
        return 1
    print(
        f"ncu on {M}x{N} float32 (2 GiB per array), one launch per kernel after 3 warm-ups, "
        "caches flushed (--cache-control all), clocks as set (--clock-control none)\n"
    )
    print("| kernel | ncu kernels | DRAM % of peak | read GB | written GB | us | GB/s |")
    print("|---|---|---|---|---|---|---|")
    for name, group in zip(names, groups, strict=False):
        if not group:
            print(f"| {name} | 0 | - | - | - | - | - |")
            continue
        read = sum(k["dram__bytes_read.sum"] for k in group)
        write = sum(k["dram__bytes_write.sum"] for k in group)
        seconds = sum(k["gpu__time_duration.sum"] for k in group)
        pct = max(k["dram__throughput.avg.pct_of_peak_sustained_elapsed"] for k in group)
        print(
            f"| {name} | {len(group)} | {pct:.1f} | {read / 1e9:.3f} | {write / 1e9:.3f} | "
            f"{seconds * 1e6:.0f} | {(read + write) / seconds / 1e9:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(child() if "--child" in sys.argv else parent())
