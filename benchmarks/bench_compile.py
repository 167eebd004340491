"""Compile-time benchmark: in-process time from .mlir text to cubin for each example, and the
time to verify generated kernels of 10,000 and 100,000 ops.

    python benchmarks/bench_compile.py [--repeat N] [--verify-repeat N] [--ops N ...]
    python benchmarks/bench_compile.py --breakdown [--repeat N]
    python benchmarks/bench_compile.py --emit N > kernel.mlir

Prints markdown tables with the conditions (machine, versions). Imports, the LLVM worker's
start and one warm-up compile per example happen before timing; each example row is the
median of N timed runs (parse + verify + lower + translate + PTX + cubin). Each generated
kernel is parsed once, then verified N times by `passes.pipeline.verify_module` (what
`compile_module`, `runtime.compile` and copy-opt run: `copy_dialect.verification`), and its
row is the median. `--breakdown` times each stage of `compile_module` for each example
instead (context, parse, both verify_module runs, each pass of `lowering_passes` by name,
translation to LLVM IR, the worker's PTX + cubin request with the steps the worker reports
(LLVM's parse, O3 pipeline and codegen, nvJitLink; the round trip is the rest), the ABI
read-back): median and min of N warm runs per stage run one after another, and the whole
compile's, in which the lowered module's verification and ABI overlap with the worker.
`--emit N` prints the generated kernel of about N ops instead (to time copy-opt on it as a
whole process).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path

from xdsl.parser import Parser

from copy_dialect import ops as copy
from copy_tools.universe import make_context
from passes import backend, translate_llvm
from passes.backend_worker import ALWAYS_COMPILE
from passes.pipeline import compile_module, lowering_passes, verify_module

# Time every compile: the backend worker would answer a repeated one from memory.
os.environ[ALWAYS_COMPILE] = "1"

ROOT = Path(__file__).resolve().parent.parent


def compile_text(text: str) -> None:
    ctx = make_context()
    compile_module(Parser(ctx, text).parse_module(), ctx)


def staged_compile(text: str) -> dict[str, float]:
    """`compile_text`, stage by stage (the steps of `compile_module` and `compile_lowered`, for
    a module that names its target), one after another: seconds per stage. `compile_lowered`
    verifies the lowered module while the worker emits the PTX and links the cubin; here it
    is timed on its own. The kernels' ABI comes from convert-copy-to-nvvm as it lowers. The
    worker's own steps are indented: what the worker reports for LLVM and nvJitLink; the
    round trip (the frames, the worker's wake-up) is the rest of the worker's row."""
    times: dict[str, float] = {}
    start = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal start
        now = time.perf_counter()
        times[stage] = now - start
        start = now

    ctx = make_context()
    lap("context")
    module = Parser(ctx, text).parse_module()
    lap("parse")
    target = copy.module_target(module, None)
    assert target is not None, "the examples name their target"
    verify_module(module)
    lap("verify_module (input)")
    for p in lowering_passes(target):
        p.apply(ctx, module)
        lap(p.name)
    llvm_ir = translate_llvm.translate_module(module)
    lap("translate to LLVM IR")
    worker: dict[str, float] = {}
    backend.compile_ptx_and_cubin(llvm_ir, target, timings=worker)
    lap("PTX + cubin (worker)")
    for step, seconds in worker.items():
        times[f"&nbsp;&nbsp;{step}"] = seconds
    times["&nbsp;&nbsp;round trip"] = times["PTX + cubin (worker)"] - sum(worker.values())
    start = time.perf_counter()
    verify_module(module)
    lap("verify_module (lowered), overlapped")
    return times


def breakdown(repeat: int) -> None:
    """Prints, per example, each stage's median and min over `repeat` warm runs."""
    backend.start_worker()
    print(conditions(repeat))
    for path in sorted((ROOT / "examples").glob("*.mlir")):
        text = path.read_text()
        staged_compile(text)  # warm-up
        runs = [staged_compile(text) for _ in range(repeat)]
        print(f"\n| {path.name}: stage | median (ms) | min (ms) |")
        print("|---|---|---|")
        for stage in runs[0]:
            stage_times = [run[stage] for run in runs]
            median, best = statistics.median(stage_times), min(stage_times)
            print(f"| {stage} | {median * 1000:.2f} | {best * 1000:.2f} |")
        path_times = [critical_path(run) for run in runs]
        print(
            "| sum of the stages, less the overlapped and the worker's own | "
            f"{statistics.median(path_times) * 1000:.2f} | {min(path_times) * 1000:.2f} |"
        )
        median, best = timed_compile(text, repeat)
        print(f"| **compile_module, end to end** | {median * 1000:.2f} | {best * 1000:.2f} |")


def critical_path(run: dict[str, float]) -> float:
    """The stages `compile_module` runs one after another (the verification of the lowered
    module overlaps with the worker; the worker's steps are inside its row)."""
    return sum(
        seconds
        for stage, seconds in run.items()
        if not stage.endswith(", overlapped") and not stage.startswith("&nbsp;")
    )


def timed_compile(text: str, repeat: int) -> tuple[float, float]:
    """The median and min seconds of `repeat` runs of `compile_text`, after one warm-up."""
    compile_text(text)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        compile_text(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def machine_speed(repeat: int = 20) -> tuple[float, float]:
    """This sitting's speed, apart from the project: the median milliseconds of a fixed
    pure-Python loop (the interpreter, as xDSL's parser and passes use it) and of a fixed
    SHA-256 (native code, as LLVM and nvJitLink). The shared 2-core machine's speed moves
    from sitting to sitting by up to 40%; these two rows say how fast this one was."""

    def python_loop() -> None:
        total = 0
        for i in range(200_000):
            total += i * i % 7

    data = bytes(4 << 20)

    def native() -> None:
        hashlib.sha256(data).digest()

    medians = []
    for work in (python_loop, native):
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            work()
            times.append(time.perf_counter() - start)
        medians.append(statistics.median(times) * 1000)
    return medians[0], medians[1]


def conditions(repeat: int) -> str:
    loop, native = machine_speed()
    return (
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; xdsl {version('xdsl')}, llvmlite {version('llvmlite')}, "
        f"nvidia-nvjitlink {version('nvidia-nvjitlink')}; median of {repeat} runs "
        "after imports, worker start and one warm-up; this sitting's speed: a fixed Python "
        f"loop {loop:.1f} ms, SHA-256 of 4 MiB {native:.1f} ms (medians of 20)\n"
    )


SMEM = "memref<4x64x32xf32, #copy.smem<swizzle = 128>>"
GMEM = "memref<4096x4096xf32>"
STAGES = 4
OPS_PER_STAGE = 5


def generated_module(ops: int) -> str:
    """A protocol-correct kernel of about `ops` ops: a 4-slot ring of tiles, each repetition j
    in slot j % 4 with parity (j // 4) % 2 loading a tile, waiting for it, storing it and
    waiting until the store has read the slot; every bulk group is waited before the return."""
    lines = [
        'builtin.module attributes {copy.target = #copy.target<"sm_90a">} {',
        f"  func.func @k(%x: {GMEM}, %y: {GMEM}) attributes "
        "{gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {",
        *(f"    %c{s} = arith.constant {s} : index" for s in range(STAGES)),
        "    %false = arith.constant false",
        "    %true = arith.constant true",
        f"    %buf = copy.alloc_smem : {SMEM}",
        f"    %bars = copy.barrier_init arrivals 1 : !copy.barrier<{STAGES}>",
    ]
    for j in range(max(1, (ops - len(lines)) // OPS_PER_STAGE)):
        slot = f"%c{j % STAGES}"
        parity = "%true" if (j // STAGES) % 2 else "%false"
        lines += [
            f"    copy.async_copy %x[%c0, %c0] to %buf[{slot}] barrier %bars[{slot}] : "
            f"{GMEM} to {SMEM}, !copy.barrier<{STAGES}>",
            f"    copy.barrier_wait %bars[{slot}], {parity} : !copy.barrier<{STAGES}>",
            f"    copy.async_copy %buf[{slot}] to %y[%c0, %c0] : {SMEM} to {GMEM}",
            "    copy.commit_group bulk",
            "    copy.wait_group bulk 0 read_only",
        ]
    return "\n".join([*lines, "    copy.wait_group bulk 0", "    func.return", "  }", "}"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--verify-repeat", type=int, default=5)
    parser.add_argument("--ops", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--emit", type=int, metavar="N", help="print the N-op kernel and exit")
    parser.add_argument(
        "--breakdown", action="store_true", help="time each stage of each example's compile"
    )
    args = parser.parse_args()
    if args.emit is not None:
        print(generated_module(args.emit))
        return 0
    if args.breakdown:
        breakdown(args.repeat)
        return 0

    backend.start_worker()
    rows = []
    for path in sorted((ROOT / "examples").glob("*.mlir")):
        median, best = timed_compile(path.read_text(), args.repeat)
        rows.append((path.name, median * 1000, best * 1000))

    verified = []
    for size in args.ops:
        module = Parser(make_context(), generated_module(size)).parse_module()
        ops = sum(1 for _ in module.walk())
        times = []
        for _ in range(args.verify_repeat):
            start = time.perf_counter()
            verify_module(module)
            times.append(time.perf_counter() - start)
        verified.append((ops, statistics.median(times), min(times)))

    print(conditions(args.repeat))
    print("| example | .mlir -> cubin, median (ms) | min (ms) |")
    print("|---|---|---|")
    for name, median, best in rows:
        print(f"| {name} | {median:.1f} | {best:.1f} |")
    print(
        f"\n| generated kernel: {STAGES}-slot ring of load, wait, store, commit, wait "
        f"read_only | ops | verify_module, median of {args.verify_repeat} (s) | min (s) |"
    )
    print("|---|---|---|---|")
    for ops, median, best in verified:
        print(f"| x {(ops - 12) // OPS_PER_STAGE} | {ops} | {median:.3f} | {best:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
