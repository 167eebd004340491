"""Compile-time benchmark: in-process time from .mlir text to cubin for each example, and the
time to verify a generated 10,000-op module.

    python benchmarks/bench_compile.py [--repeat N]

Prints a markdown table with the conditions (machine, versions). Imports, the LLVM worker's
start and one warm-up compile per example happen before timing; each row is the median of
N timed runs (parse + verify + lower + translate + PTX + cubin).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path

from xdsl.parser import Parser

from copy_tools.universe import make_context
from passes import backend
from passes.pipeline import compile_module

ROOT = Path(__file__).resolve().parent.parent


def compile_text(text: str) -> None:
    ctx = make_context()
    compile_module(Parser(ctx, text).parse_module(), ctx)


def generated_module(ops: int) -> str:
    """A kernel of `ops` copy-dialect ops: load, wait, fence, store, commit, repeated."""
    lines = [
        'builtin.module attributes {copy.target = #copy.target<"sm_90a">} {',
        "  func.func @k(%x: memref<4096x4096xf32>, %y: memref<4096x4096xf32>, %p: i1) {",
        "    %c0 = arith.constant 0 : index",
        "    %buf = copy.alloc_smem : memref<4x64x32xf32, #copy.smem<swizzle = 128>>",
        "    %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>",
    ]
    smem = "memref<4x64x32xf32, #copy.smem<swizzle = 128>>"
    body = [
        f"    copy.async_copy %x[%c0, %c0] to %buf[%c0] barrier %bars[%c0] : "
        f"memref<4096x4096xf32> to {smem}, !copy.barrier<4>",
        "    copy.barrier_wait %bars[%c0], %p : !copy.barrier<4>",
        "    copy.fence_async_shared",
        f"    copy.async_copy %buf[%c0] to %y[%c0, %c0] : {smem} to memref<4096x4096xf32>",
        "    copy.commit_group bulk",
    ]
    while len(lines) - 5 < ops:
        lines += body
    return "\n".join([*lines, "    func.return", "  }", "}"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    backend.start_worker()
    rows = []
    for path in sorted((ROOT / "examples").glob("*.mlir")):
        text = path.read_text()
        compile_text(text)  # warm-up
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            compile_text(text)
            times.append(time.perf_counter() - start)
        rows.append((path.name, statistics.median(times) * 1000, min(times) * 1000))

    text = generated_module(10_000)
    module = Parser(make_context(), text).parse_module()
    ops = sum(1 for _ in module.walk())
    verify = []
    for _ in range(5):
        start = time.perf_counter()
        module.verify()
        verify.append(time.perf_counter() - start)

    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; xdsl {version('xdsl')}, llvmlite {version('llvmlite')}, "
        f"nvidia-nvjitlink {version('nvidia-nvjitlink')}; median of {args.repeat} runs "
        "after imports, worker start and one warm-up\n"
    )
    print("| example | .mlir -> cubin, median (ms) | min (ms) |")
    print("|---|---|---|")
    for name, median, best in rows:
        print(f"| {name} | {median:.1f} | {best:.1f} |")
    print(
        f"\n| generated module | ops | verify, median of 5 (s) |\n|---|---|---|\n"
        f"| load/wait/fence/store/commit x {ops // 5} | {ops} | "
        f"{statistics.median(verify):.3f} |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
