"""Why do the 16-bit elementwise rows trail torch's? Time (CUDA events, median of 30) and
Nsight Compute's view (DRAM share of peak, achieved occupancy, SM throughput, issued
instructions, registers) of torch's form and the copy-dialect `ws_elementwise`
configurations that came closest: by default the adds on the tail shape 10000 x 10008
(RESULTS.md runs 46, 48, 52, 54), bf16 and f16; with `--large`, f16 add and a x + b on
16384 x 16384 (runs 51, 54).

    python3 benchmarks/probes/tail_add_probe.py [--large]   # times, then runs under ncu

One launch per kernel is profiled between cudaProfilerStart/Stop, caches flushed
(`--cache-control all`), clocks as set (`--clock-control none`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import timed  # noqa: E402
from bench_multicast import group_by_marker, marker_launch, profile_once  # noqa: E402
from dram_peak_probe import parse  # noqa: E402

LARGE = "--large" in sys.argv
SHAPE = (16384, 16384) if LARGE else (10000, 10008)
AXPB_A, AXPB_B = 1.5, 0.25
METRICS = (
    "gpu__time_duration.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "smsp__inst_executed.sum",
    "launch__registers_per_thread",
    "launch__grid_size",
    "launch__block_size",
    "launch__occupancy_limit_shared_mem",
)
# (tile, stages, consumer warps, out buffers, flattened to rows of the tile's width)
CONFIGS = [
    ((32, 128), 1, 4, 2, True),
    ((32, 128), 1, 4, 1, True),
    ((16, 128), 1, 4, 1, True),
    ((64, 128), 1, 8, 1, True),
    ((16, 256), 1, 4, 1, False),
]
# (op, tile, stages, consumer warps, out buffers, the loads' L2 policy, the kernel's last
# wait read-only) on the large shape, f16. The last wait: the builders end with
# `wait_group bulk 0` (the stores' writes done); `read_only` ends them when the stores have
# read their SMEM, as CUTLASS's epilogues do (`tma_store_wait<0>`: `.read`), so a block
# leaves its SM sooner.
LARGE_CONFIGS = [
    ("add", (32, 128), 1, 4, 2, None, False),
    ("add", (32, 128), 1, 4, 2, None, True),
    ("add", (32, 128), 1, 4, 2, "evict_first", False),
    ("add", (32, 128), 1, 4, 2, "evict_first", True),
    ("add", (16, 256), 1, 4, 1, None, True),
    ("add", (64, 128), 1, 8, 1, None, True),
    ("add", (32, 128), 1, 4, 1, None, True),
    ("axpb", (32, 128), 1, 4, 1, None, False),
    ("axpb", (32, 128), 1, 4, 1, None, True),
    ("axpb", (16, 128), 1, 4, 1, None, True),
]


def read_only_end(module) -> None:
    """Make the kernel's last waits for its bulk groups (pending 0, not read-only) wait only
    until the stores have read their SMEM."""
    from xdsl.dialects.builtin import UnitAttr

    from copy_dialect import ops as copy
    from copy_dialect.attributes import GroupKind

    for op in module.walk():
        bulk = isinstance(op, copy.WaitGroupOp) and op.group.data == GroupKind.BULK
        if bulk and op.pending.value.data == 0:
            op.properties["read_only"] = UnitAttr()


def large_rows():
    import torch

    from copy_tools import runtime
    from frontends import kernels

    x = torch.randn(SHAPE, device="cuda").half()
    y = torch.randn(SHAPE, device="cuda").half()
    z = torch.empty_like(x)
    b_cpu = torch.tensor(AXPB_B)
    # The ws kernel's a x + b: a rounded f32 product, a rounded f32 sum, rounded to f16.
    axpb = (x.float() * AXPB_A + AXPB_B).half()
    made = [
        ("torch add f16", lambda: torch.add(x, y, out=z), z, x + y, 3),
        (
            "torch a x + b f16 (torch.add(b, x, alpha=a))",
            lambda: torch.add(b_cpu, x, alpha=AXPB_A, out=z),
            z,
            None,  # torch may fuse the product into the sum: within an ulp, not checked here
            2,
        ),
    ]
    for op, tile, stages, warps, buffers, hint, read_end in LARGE_CONFIGS:
        module = kernels.ws_elementwise(
            op, SHAPE, "f16", tile, stages=stages, consumer_warps=warps, out_buffers=buffers,
            cache_hints=(hint, None),
        )  # fmt: skip
        if read_end:
            read_only_end(module)
        args = (x, y, z) if op == "add" else (x, z, AXPB_A, AXPB_B)
        launch = (
            runtime.compile(module).kernel().prepare(*args, grid=kernels.tiles_grid(SHAPE, tile))
        )
        name = (
            f"ws {op} f16 {tile[0]}x{tile[1]}, {stages} stage{'s' if stages > 1 else ''}, "
            f"{warps} warps, {buffers} out buffer{'s' if buffers > 1 else ''}"
            + (f", loads {hint}" if hint else "")
            + (", read-only end" if read_end else "")
        )
        made.append((name, launch, z, *((x + y, 3) if op == "add" else (axpb, 2))))
    return made


def rows():
    import torch

    from copy_tools import runtime
    from frontends import kernels

    made = []
    for dtype, torch_dtype in (("bf16", torch.bfloat16), ("f16", torch.float16)):
        x = torch.randn(SHAPE, device="cuda").to(torch_dtype)
        y = torch.randn(SHAPE, device="cuda").to(torch_dtype)
        z = torch.empty_like(x)
        expected = x + y
        add = lambda x=x, y=y, z=z: torch.add(x, y, out=z)  # noqa: E731
        made.append((f"torch add {dtype}", add, z, expected, 3))
        for tile, stages, warps, buffers, flat in CONFIGS:
            shape = (SHAPE[0] * SHAPE[1] // tile[1], tile[1]) if flat else SHAPE
            module = kernels.ws_elementwise(
                "add", shape, dtype, tile, stages=stages, consumer_warps=warps,
                out_buffers=buffers,
            )  # fmt: skip
            args = (x.view(shape), y.view(shape), z.view(shape))
            grid = kernels.tiles_grid(shape, tile)
            launch = runtime.compile(module).kernel().prepare(*args, grid=grid)
            name = (
                f"ws add {dtype} {tile[0]}x{tile[1]}, {stages} stage, {warps} warps, "
                f"{buffers} out buffer{'s' if buffers > 1 else ''}"
                + (f", rows of {tile[1]}" if flat else "")
            )
            made.append((name, launch, z, expected, 3))
    return made


def child(profile: bool) -> int:
    import torch

    marker = marker_launch(torch.randn(64, 64, device="cuda"))
    # Each row: its name, launch, output, expected output (None: not checked) and the
    # number of arrays it reads and writes (3 for an add, 2 for a x + b).
    for name, launch, z, expected, arrays in large_rows() if LARGE else rows():
        z.fill_(float("nan"))
        launch()
        torch.cuda.synchronize()
        correct = bool(torch.isfinite(z).all() if expected is None else torch.equal(z, expected))
        if not profile:
            seconds = timed(launch, 30)
            gbps = arrays * z.numel() * z.element_size() / seconds / 1e9
            print(f"TIME {name}|{seconds * 1e6:.1f}|{gbps:.0f}|{correct}", flush=True)
            continue
        profile_once(launch, marker)
        print(f"ROW {name}", flush=True)
    return 0


def parent() -> int:
    timing = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", *(["--large"] if LARGE else [])],
        capture_output=True,
        text=True,
    )
    times = {}
    for line in timing.stdout.splitlines():
        if line.startswith("TIME "):
            name, us, gbps, correct = line[5:].split("|")
            times[name] = (us, gbps, correct)
    cmd = [
        "ncu", "--csv", "--page", "raw", "--profile-from-start", "off",
        "--target-processes", "application-only", "--cache-control", "all",
        "--clock-control", "none", "--metrics", ",".join(METRICS),
        sys.executable, os.path.abspath(__file__), "--child", "--profile",
        *(["--large"] if LARGE else []),
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True)
    names = [line[4:] for line in out.stdout.splitlines() if line.startswith("ROW ")]
    try:
        groups = group_by_marker(parse(out.stdout, METRICS))
    except (KeyError, IndexError, ValueError) as exc:
        print(f"no ncu table ({exc}):", out.stdout[-2000:], out.stderr[-2000:], sep="\n")
        groups = []
    print(
        f"{SHAPE[0]}x{SHAPE[1]}: time = median of 30 (CUDA events); GB/s = the arrays read and "
        "written (3 for an add, 2 for a x + b) / time; correct: bit-exact (torch's a x + b: "
        "finite only)\n"
    )
    print(
        "| kernel | us | GB/s | correct | ncu us | DRAM % | occupancy % | SM % | "
        "warp instructions | regs | grid | block | SMEM-limited blocks/SM |"
    )
    print("|---" * 13 + "|")
    for i, name in enumerate(times or names):
        us, gbps, correct = times.get(name, ("-", "-", "-"))
        cells = ["-"] * 8
        if i < len(groups) and len(groups[i]) == 1 and names[i] == name:
            k = groups[i][0]
            cells = [
                f"{k['gpu__time_duration.sum'] * 1e6:.1f}",
                f"{k['dram__throughput.avg.pct_of_peak_sustained_elapsed']:.1f}",
                f"{k['sm__warps_active.avg.pct_of_peak_sustained_active']:.1f}",
                f"{k['sm__throughput.avg.pct_of_peak_sustained_elapsed']:.1f}",
                f"{k['smsp__inst_executed.sum']:.3g}",
                f"{k['launch__registers_per_thread']:.0f}",
                f"{k['launch__grid_size']:.0f}",
                f"{k['launch__block_size']:.0f}",
            ]
            cells.append(f"{k['launch__occupancy_limit_shared_mem']:.0f}")
        else:
            cells.append("-")
        print(f"| {name} | {us} | {gbps} | {correct} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(child("--profile" in sys.argv) if "--child" in sys.argv else parent())
