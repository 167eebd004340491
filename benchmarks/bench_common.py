"""What the GPU benchmarks share: timing, the first checked launch, the run's conditions, tables.

Imported by `bench_copy.py` and `bench_compute.py` from their own folder (a script's folder is
the first entry of `sys.path`). Only `timed`, `settle` and `device_limits` need a GPU; the rest
is plain Python (tests/test_bench.py).
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
