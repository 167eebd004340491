"""What the GPU benchmarks share: timing, the first checked launch, the run's conditions, tables.

Imported by `bench_copy.py` and `bench_compute.py` from their own folder (a script's folder is
the first entry of `sys.path`). Only `timed`, `settle` and `device_limits` need a GPU; the rest
is plain Python (tests/tools/test_bench.py).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

H200_SMS = 132
H200_SMEM_PER_SM = 233472
"""Shared memory of one H200 SM (bytes): the blocks resident on it share it."""
RESERVED_SMEM_PER_BLOCK = 1024
"""What the driver keeps of an SM's shared memory for each resident block (sm_80 and later)."""
WARMUPS = 3
"""Untimed launches before the timed ones."""
VERSIONED = ("torch", "triton", "jax", "xdsl", "llvmlite", "cuda-bindings", "copy-dialect")


class Fatal(RuntimeError):
    """A launch that leaves the GPU unusable for the rest of the run (a hang, a kernel fault):
    the script prints what it has and exits."""


def timed(fn: Callable[[], object], reps: int, warmups: int = WARMUPS) -> float:
    """Median seconds of `fn` on the current stream, CUDA events, after `warmups` launches."""
    import torch

    for _ in range(warmups):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def settle(what: str, timeout_s: float) -> None:
    """Waits for the current stream, at most `timeout_s`; a kernel still running then (a hang)
    or one that faulted (the context is lost) raises `Fatal`."""
    import torch

    stream = torch.cuda.current_stream()
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if stream.query():
                return
        except RuntimeError as exc:  # a sticky CUDA error: every later call fails too
            raise Fatal(f"{what} faulted: {str(exc).splitlines()[0]}") from None
        if time.monotonic() > deadline:
            raise Fatal(f"{what} did not finish within {timeout_s:g} s (a hang)")
        time.sleep(0.001)


def measure(
    fn: Callable[[], object],
    what: str,
    reps: int,
    *,
    timeout_s: float = 10.0,
    row_budget_s: float = 0.5,
) -> tuple[float, int]:
    """One launch of `fn` waited for under the hang guard (the caller checks its result after
    this returns), then `timed`: (median seconds, reps used). A slow kernel gets fewer reps
    (at least 3) so that one row costs about `row_budget_s`, judged by a second launch (the
    first may include a JIT compile, as Triton's does)."""
    import torch

    fn()
    settle(what, timeout_s)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    settle(what, timeout_s)
    first = start.elapsed_time(end) / 1e3
    used = max(3, min(reps, int(row_budget_s / max(first, 1e-6))))
    return timed(fn, used, warmups=1 if used < reps else WARMUPS), used


def recover(what: str) -> None:
    """After a launch that raised: the GPU must still be usable (a sticky fault raises
    `Fatal`)."""
    import torch

    try:
        torch.cuda.synchronize()
    except RuntimeError as exc:
        raise Fatal(f"{what} faulted: {str(exc).splitlines()[0][:160]}") from None


def fits_per_sm(smem_bytes: int, blocks_per_sm: int, smem_per_sm: int) -> bool:
    """Whether `blocks_per_sm` blocks of `smem_bytes` dynamic shared memory are resident on one
    SM together (the driver reserves `RESERVED_SMEM_PER_BLOCK` for each)."""
    return blocks_per_sm * (smem_bytes + RESERVED_SMEM_PER_BLOCK) <= smem_per_sm


@dataclass(frozen=True)
class DeviceLimits:
    name: str
    sms: int
    smem_per_sm: int
    l2_bytes: int


def device_limits() -> DeviceLimits:
    """The GPU's name, SM count, shared memory per SM and L2 size, from the driver."""
    from cuda.bindings import driver

    from runtime.driver import call, device

    _, facts = device()
    dev = call("cuDeviceGet", 0)
    attr = driver.CUdevice_attribute

    def get(name: str) -> int:
        return int(call("cuDeviceGetAttribute", getattr(attr, name), dev))

    return DeviceLimits(
        facts.name,
        get("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"),
        get("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"),
        get("CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE"),
    )


def _run(args: Sequence[str]) -> str:
    try:
        return subprocess.run(list(args), capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def versions(packages: Iterable[str] = VERSIONED) -> dict[str, str]:
    """The installed version of each package that is installed."""
    found = {}
    for p in packages:
        try:
            found[p] = version(p)
        except Exception:
            continue
    return found


def conditions(limits: DeviceLimits | None) -> dict[str, Any]:
    """The run's conditions: GPU, SMs, clocks and driver (nvidia-smi), versions, commit."""
    smi = _run(
        [
            "nvidia-smi",
            "--query-gpu=driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,"
            "power.limit",
            "--format=csv,noheader",
        ]
    )
    fields = [f.strip() for f in smi.splitlines()[0].split(",")] if smi else []
    keys = ("driver", "sm_clock", "sm_clock_max", "mem_clock", "mem_clock_max", "power_limit")
    found: dict[str, Any] = dict(zip(keys, fields, strict=False))
    if limits is not None:
        found.update(
            gpu=limits.name,
            sms=limits.sms,
            smem_per_sm=limits.smem_per_sm,
            l2_mib=limits.l2_bytes / 2**20,
        )
    found["versions"] = versions()
    found["commit"] = _run(["git", "rev-parse", "--short", "HEAD"]) or "(no git)"
    return found


def describe(c: dict[str, Any]) -> str:
    """The conditions as one line for a table's header."""
    gpu = f"GPU: {c.get('gpu', '?')} ({c.get('sms', '?')} SMs"
    if "smem_per_sm" in c:
        gpu += f", {c['smem_per_sm']} B SMEM/SM, L2 {c['l2_mib']:.0f} MiB"
    gpu += ")"
    if "sm_clock" in c:
        gpu += (
            f", clocks at start: SM {c['sm_clock']} (max {c.get('sm_clock_max', '?')}), "
            f"memory {c.get('mem_clock', '?')} (max {c.get('mem_clock_max', '?')}), "
            f"power limit {c.get('power_limit', '?')}"
        )
    if "driver" in c:
        gpu += f"; driver {c['driver']}"
    versions_ = ", ".join(f"{p} {v}" for p, v in c.get("versions", {}).items())
    return f"{gpu}; {versions_}; commit {c.get('commit', '?')}"


def markdown(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A markdown table; `|` inside a cell is escaped."""

    def cell(v: object) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_json(
    path: str | Path,
    conditions_: dict[str, Any],
    rows: list[dict[str, Any]],
    skipped: dict[str, list[str]] | None = None,
) -> None:
    """The run as JSON: {"conditions": ..., "rows": [...], "skipped": {...}}."""
    found: dict[str, Any] = {"conditions": conditions_, "rows": rows}
    if skipped:
        found["skipped"] = skipped
    Path(path).write_text(json.dumps(found, indent=1) + "\n")


@dataclass(frozen=True)
class PlotGroup:
    """One panel of a bandwidth plot: a table's kernels and the torch copy they are measured
    against (a dashed line)."""

    title: str
    bars: Sequence[tuple[str, float | None]]
    """(kernel, GB/s); None for a row that failed or did not run."""
    copy_gbps: float | None = None


def bandwidth_figure(title: str, groups: Sequence[PlotGroup]):
    """A horizontal bar chart of GB/s per kernel, one panel per group, each with its torch
    copy as a dashed line (`copy_tools.figure`: SVG by hand, PNG with matplotlib)."""
    from copy_tools.figure import Figure, Line, Rect, Text

    bar_h, gap, scale_w = 18, 4, 520
    labels = [name for g in groups for name, _ in g.bars]
    left = 16 + 6.2 * max((len(n) for n in labels), default=10)
    values = [v for g in groups for _, v in g.bars if v] + [
        g.copy_gbps for g in groups if g.copy_gbps
    ]
    top = max(values, default=1.0) * 1.08
    fig = Figure(left + scale_w + 140, 60)
    fig.add(Text(16, 22, title, 13, bold=True))
    fig.add(Text(16, 40, "GB/s (bytes read + written / time); dashed: the torch copy", 10))
    y = 60
    for g in groups:
        fig.add(Text(16, y + 14, g.title, 11, bold=True))
        y += 22
        start = y
        for name, gbps in g.bars:
            fig.add(Text(left - 8, y + bar_h - 5, name, 10, "end"))
            if gbps is None:
                fig.add(Text(left + 4, y + bar_h - 5, "failed / not run", 10, fill="#aa0000"))
            else:
                w = scale_w * gbps / top
                fig.add(Rect(left, y, w, bar_h, "#4c78a8", "bar", f"{name}: {gbps:.0f} GB/s"))
                fig.add(Text(left + w + 4, y + bar_h - 5, f"{gbps:.0f}", 10))
            y += bar_h + gap
        if g.copy_gbps:
            x = left + scale_w * g.copy_gbps / top
            fig.add(Line(x, start - 4, x, y, "#d62728", dashed=True, kind="torch-copy"))
            fig.add(
                Text(
                    x + 4,
                    start + 2 if not g.bars else y + 10,
                    f"torch copy {g.copy_gbps:.0f}",
                    9,
                    fill="#d62728",
                )  # fmt: skip
            )
            y += 14
        y += 12
    fig.add(Line(left, 56, left, y - 12, "#333333"))
    fig.height = y + 8
    return fig


def write_plot(path: str | Path, title: str, groups: Sequence[PlotGroup]) -> None:
    """Writes the bandwidth plot to `path` (.svg, or .png when matplotlib is importable)."""
    bandwidth_figure(title, groups).write(path)


def plot_path_problem(path: str | Path) -> str | None:
    """Before a run: why the plot cannot be written to `path` (not a .svg or .png, or a .png
    without matplotlib), or None."""
    from copy_tools.figure import FigureError, check_picture

    try:
        check_picture(path)
    except FigureError as exc:
        return str(exc)
    return None
