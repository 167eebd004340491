"""Interpreter benchmark: how long the interpreter takes to run each builder kernel at the
shape its interpreted test runs, and its throughput.

    python benchmarks/bench_interpreter.py [--repeat N]

Prints a markdown table with the conditions (machine, Python, numpy, commit): per kernel, the
grid, the CTAs and threads run, the ops the interpreter executed (summed over threads'
lockstep groups: one op of an agent counts once), the median wall time of N runs (random
schedule, seed 0) after one warm-up, and the throughput in CTAs and ops per second.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from math import prod
from pathlib import Path

import numpy as np

import interpreter
from frontends import kernels as k
from interpreter import machine as machine_module

ROOT = Path(__file__).resolve().parent.parent


def f32(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def cases() -> list[tuple[str, Callable[[], object], Callable[[], list], tuple[int, ...]]]:
    s = (256, 256)
    return [
        ("tma_copy 130x264 f32", lambda: k.tma_copy((130, 264), "f32"),
         lambda: [f32((130, 264)), np.zeros((130, 264), np.float32)], k.grid((130, 264), (64, 64))),
        ("tma_copy swizzle 128, 256x256", lambda: k.tma_copy(s, "f32", (64, 32), swizzle=128),
         lambda: [f32(s), np.zeros(s, np.float32)], k.grid(s, (64, 32))),
        ("tma_copy reduce add 256x256", lambda: k.tma_copy(s, "f32", reduce="add"),
         lambda: [f32(s), f32(s, 1)], k.grid(s, (64, 64))),
        ("cp_async_copy 256x256", lambda: k.cp_async_copy(s, "f32"),
         lambda: [f32(s), np.zeros(s, np.float32)], k.grid(s, (32, 128))),
        ("bulk_copy 65536", lambda: k.bulk_copy(65536, "f32", 4096),
         lambda: [f32((65536,)), np.zeros(65536, np.float32)], (16, 1)),
        ("multicast_copy 256x256", lambda: k.multicast_copy(s, "f32"),
         lambda: [f32((8, 32, 256)), np.zeros((8, 32, 256), np.float32)], (8, 4)),
        ("tma_copy_pipelined 3 stages 512x256",
         lambda: k.tma_copy_pipelined((512, 256), "f32", (64, 64), stages=3),
         lambda: [f32((512, 256)), np.zeros((512, 256), np.float32)], (4,)),
        ("ws_copy 2 stages 256x256", lambda: k.ws_copy(s, "f32", (64, 128), stages=2),
         lambda: [f32(s), np.zeros(s, np.float32)], k.ws_grid(4)),
        ("ws_elementwise add 256x256", lambda: k.ws_elementwise("add", s, "f32", stages=2),
         lambda: [f32(s), f32(s, 1), np.zeros(s, np.float32)], k.ws_grid(4)),
        ("ws_row_sum 256x256", lambda: k.ws_row_sum(s, "f32", stages=2),
         lambda: [f32(s), np.zeros(256, np.float32)], k.ws_grid(4)),
        ("dsmem_exchange store 128x256", lambda: k.dsmem_exchange((128, 256), "f32"),
         lambda: [f32((128, 256)), np.zeros((128, 256), np.float32)],
         k.exchange_grid((128, 256), (64, 64))),
    ]  # fmt: skip


def counted_run(module: object, args: list, grid: tuple[int, ...]) -> tuple[float, int, object]:
    """Seconds, ops executed and the run."""
    ops = 0
    original = machine_module.Machine.run

    def run(self: machine_module.Machine) -> None:
        nonlocal ops
        original(self)
        ops += self.ops

    machine_module.Machine.run = run  # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        result = interpreter.run(module, *args, grid=grid)
        return time.perf_counter() - start, ops, result
    finally:
        machine_module.Machine.run = original  # type: ignore[method-assign]


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}; commit {commit()}; median of "
        f"{repeat} runs after one warm-up; random schedule, seed 0\n"
    )
    print("| kernel | grid | CTAs | threads/CTA | ops | time (ms) | CTAs/s | ops/s | violations |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, build, make_args, grid in cases():
        module = build()
        counted_run(module, make_args(), grid)  # warm-up
        times, ops, result = [], 0, None
        for _ in range(repeat):
            seconds, ops, result = counted_run(module, make_args(), grid)
            times.append(seconds)
        median = statistics.median(times)
        fn = interpreter.kernel_named(module, None)  # type: ignore[arg-type]
        block = fn.attributes["gpu.known_block_size"].get_values()  # type: ignore[union-attr]
        ctas = prod(grid)
        print(
            f"| {name} | {tuple(grid)} | {ctas} | {prod(block)} | {ops} | {median * 1000:.1f} "
            f"| {ctas / median:.0f} | {ops / median:.0f} | {len(result.violations)} |"  # type: ignore[union-attr]
        )


if __name__ == "__main__":
    main()
