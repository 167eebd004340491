"""Verification against lowering on the corpus of shipped kernels (tests/corpus/, issue N):
for each kernel, how long the protocol analysis takes to verify it and how long the lowering
takes to compile it to PTX without verification, in the same run.

    python benchmarks/bench_verify.py [--repeat N] [--no-processes] [--large OPS] [KERNEL ...]

Prints markdown tables with the conditions (machine, Python, xDSL, date, commit). Per kernel:
its ops; in-process medians of N runs after one warm-up: `check_protocol` (the protocol
analysis alone) and `verify_module` (the op and kernel rules, dominance and the protocol:
what copy-opt, compile_module and runtime.compile run), against the lowering of a freshly
parsed module through `lowering_passes` (convert-copy-to-nvvm and the LLVM conversions, no
verification), its translation to LLVM IR and PTX from the backend's worker; then, as whole
processes (one run each, imports included), `copy-opt FILE` (verification), `copy-opt
--no-verify-protocol FILE` (the same without the protocol) and `copy-opt --no-verify-protocol
-t ptx FILE` (the lowering to PTX without the protocol) and the ratio of the first to the
last; and the analysis's verdict today (clean, or the first finding's severity, rule and
message).

`--k-blocks K` times the kernels whose K loop runs to a constant `%k_tiles` with K k-blocks
in its place (256: K = 16384 at 64-wide k-blocks), the others left out: a constant loop
beyond 96 iterations is proven for every count (analysis/protocol/general.py), a K loop
inside a persistent tile loop by cutting its laps in every tile at once.

`--large OPS` adds a table for a kernel of about OPS ops written straight (no loop: a 4-slot
ring of TMA loads, each waited on, read by every thread and released by a block barrier,
unrolled), the size issue N asks to verify in under 5 s: its parse, `verify_module` (one
run: the op verifiers, kernel rules, dominance and the protocol) and `check_protocol`
alone, one run each.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

from xdsl.parser import Parser

from analysis.protocol import check_protocol
from analysis.verify import verify_module
from copy_dialect import ops as copy
from copy_tools.universe import make_context
from facts.target import target_named
from passes import backend, translate_llvm
from passes.backend_worker import ALWAYS_COMPILE
from passes.pipeline import lowering_passes

# Time every compile: the backend worker would answer a repeated one from memory.
os.environ[ALWAYS_COMPILE] = "1"

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.corpus import KERNELS  # noqa: E402

COPY_OPT = Path(sys.executable).with_name("copy-opt")
K_TILES = re.compile(r"%k_tiles = arith\.constant (\d+) : index")


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def median_of(repeat: int, setup: Callable[[], object], work: Callable[[object], object]):
    """The median seconds of `work(setup())` over `repeat` runs after one warm-up (the setup
    not timed)."""
    work(setup())
    times = []
    for _ in range(repeat):
        arg = setup()
        start = time.perf_counter()
        work(arg)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def lower_to_ptx(module) -> str:
    """convert-copy-to-nvvm and the LLVM conversions, LLVM IR, then PTX: no verification."""
    ctx = make_context()
    name = copy.module_target(module, None)
    for p in lowering_passes(name):
        p.apply(ctx, module)
    return backend.compile_ptx(translate_llvm.translate_module(module), target_named(name))


def quiet_protocol(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return check_protocol(module)


def quiet_verify(module) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            verify_module(module)
        except Exception:  # a protocol error: timed all the same
            pass


def process_seconds(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([str(COPY_OPT), *args], capture_output=True, check=False)
    return time.perf_counter() - start


def verdict(findings) -> str:
    if not findings:
        return "clean"
    first = findings[0]
    message = str(first).splitlines()[0]
    if len(message) > 90:
        message = message[:87] + "..."
    kinds = {f.severity for f in findings}
    label = "error" if "error" in kinds else "warning"
    return f"{label} {'/'.join(first.rules)} ({len(findings)}): {message}"


def commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def conditions(repeat: int) -> str:
    return (
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; xdsl {version('xdsl')}, llvmlite {version('llvmlite')}; "
        f"{datetime.datetime.now().isoformat(timespec='minutes')}; commit {commit()}; "
        f"in-process columns: median of {repeat} runs after one warm-up; process columns: one "
        "run each, Python's start and imports included\n"
    )


def straight_kernel(ops: int) -> str:
    """A kernel of about `ops` ops with no loop: 7 ops a copy (its slot, parity and row as
    constants, the TMA load, the wait, a thread read, a block barrier) through a ring of
    4 slots."""
    lines = [
        'builtin.module attributes {copy.target = #copy.target<"sm_90a">} {',
        "  func.func @straight(%a: memref<?x64xf32>) attributes {gpu.kernel, "
        "gpu.known_block_size = array<i32: 64, 1, 1>} {",
        "    %c0 = arith.constant 0 : index",
        '    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index',
        "    %ring = copy.alloc_smem : memref<4x64x64xf32, #copy.smem>",
        "    %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>",
    ]
    ring = "memref<4x64x64xf32, #copy.smem>"
    for i in range(max(1, (ops - 8) // 7)):
        lines += [
            f"    %s{i} = arith.constant {i % 4} : index",
            f"    %p{i} = arith.constant {'true' if i // 4 % 2 else 'false'}",
            f"    %r{i} = arith.constant {i * 64} : index",
            f"    copy.async_copy %a[%r{i}, %c0] to %ring[%s{i}] barrier %bars[%s{i}] : "
            f"memref<?x64xf32> to {ring}, !copy.barrier<4>",
            f"    copy.barrier_wait %bars[%s{i}], %p{i} : !copy.barrier<4>",
            f"    %v{i} = memref.load %ring[%s{i}, %c0, %t] : {ring}",
            '    "gpu.barrier"() : () -> ()',
        ]
    lines += ["    func.return", "  }", "}"]
    return "\n".join(lines)


def large_table(ops: int) -> None:
    text = straight_kernel(ops)
    start = time.perf_counter()
    module = parse(text)
    parsed = time.perf_counter() - start
    count = sum(1 for _ in module.walk())
    start = time.perf_counter()
    quiet_verify(module)
    verified = time.perf_counter() - start
    start = time.perf_counter()
    findings = quiet_protocol(module)
    protocol = time.perf_counter() - start
    print("\n| kernel | ops | parse (s) | verify_module (s) | check_protocol (s) | verdict |")
    print("|---|---|---|---|---|---|")
    print(f"| straight ring, unrolled | {count} | {parsed:.2f} | {verified:.2f} | "
          f"{protocol:.2f} | {verdict(findings)} |")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--no-processes", action="store_true", help="leave out the copy-opt process columns"
    )
    parser.add_argument("--large", type=int, default=0, metavar="OPS",
                        help="also time a straight kernel of about OPS ops")  # fmt: skip
    parser.add_argument("--k-blocks", type=int, default=0, metavar="K",
                        help="the kernels with a constant %%k_tiles, at K k-blocks")  # fmt: skip
    parser.add_argument("kernels", nargs="*", help="corpus kernels by name (default: all)")
    args = parser.parse_args()
    chosen = [k for k in KERNELS if not args.kernels or k.name in args.kernels]
    backend.start_worker()
    rows = []
    scratch = tempfile.TemporaryDirectory()
    for kernel in chosen:
        text, path = kernel.text(), str(kernel.path)
        if args.k_blocks:
            found = K_TILES.search(text)
            if found is None:
                continue
            text = text.replace(found[0], f"%k_tiles = arith.constant {args.k_blocks} : index")
            path = f"{scratch.name}/{kernel.name}.mlir"
            Path(path).write_text(text)
        module = parse(text)
        ops = sum(1 for _ in module.walk())
        protocol = median_of(args.repeat, lambda m=module: m, quiet_protocol)
        verify = median_of(args.repeat, lambda m=module: m, quiet_verify)
        lower = median_of(args.repeat, lambda t=text: parse(t), lower_to_ptx)
        processes = (
            ()
            if args.no_processes
            else (
                process_seconds(path),
                process_seconds("--no-verify-protocol", path),
                process_seconds("--no-verify-protocol", "-t", "ptx", path),
            )
        )
        rows.append((kernel.name, ops, protocol, verify, lower, processes, quiet_protocol(module)))

    print(conditions(args.repeat))
    if args.k_blocks:
        print(f"The kernels with a constant %k_tiles, at {args.k_blocks} k-blocks.\n")
    head = "| kernel | ops | check_protocol (s) | verify_module (s) | lowering to PTX (s) | ratio |"
    rule = "|---|---|---|---|---|---|"
    if not args.no_processes:
        head += " copy-opt (s) | copy-opt --no-verify-protocol (s) | ... -t ptx (s) | ratio |"
        rule += "---|---|---|---|"
    print(head + " verdict today |")
    print(rule + "---|")
    for name, ops, protocol, verify, lower, processes, findings in rows:
        cells = [name, str(ops), f"{protocol:.3f}", f"{verify:.3f}", f"{lower:.3f}"]
        cells.append(f"{verify / lower:.2f}")
        cells += [f"{seconds:.2f}" for seconds in processes]
        if processes:
            cells.append(f"{processes[0] / processes[2]:.2f}")
        cells.append(verdict(findings))
        print("| " + " | ".join(cells) + " |")
    print(
        "\nratio: verify_module / lowering to PTX, in process (issue N asks for at most 1 on "
        "every kernel);\nthe second ratio, as processes: `copy-opt FILE` / `copy-opt "
        "--no-verify-protocol -t ptx FILE` (the issue's `-t ptx` without verification)."
    )
    if args.large:
        large_table(args.large)
    return 0


if __name__ == "__main__":
    sys.exit(main())
