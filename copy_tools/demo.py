"""`copy-demo`: the main job on a bundled example, end to end.

Verifies the TMA tile-copy example (or the .mlir file given), lowers it, and compiles it to
LLVM IR, PTX and a cubin (nvJitLink, no GPU needed), writing them and the kernel ABI under
`build/`. It prints what it made, the key PTX instructions and the in-process compile time.
Then it runs the example and checks it against numpy: on the GPU where there is one, else
on the CPU under the interpreter (its first 2 x 2 blocks), which also checks its copies.
"""

from __future__ import annotations

import argparse
import sys
import time
from importlib import resources
from pathlib import Path

from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError

from copy_tools.cli import guarded
from copy_tools.universe import make_context

EXAMPLE_NAME = "tma_tile_copy.mlir"
"""The bundled example's file name."""


def default_example() -> Path:
    """The bundled example: examples/ ships as the package data `copy_tools.examples`; run
    from a source checkout that is not installed (`python -m copy_tools.demo` in the tree),
    the tree's examples/ folder."""
    try:
        return Path(str(resources.files("copy_tools.examples") / EXAMPLE_NAME))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "examples" / EXAMPLE_NAME


KEY_INSTRUCTIONS = (
    "cp.async.bulk.tensor",
    "cp.reduce.async.bulk.tensor",
    "mbarrier.arrive.expect_tx",
    "mbarrier.try_wait.parity",
    "cp.async.cg.shared.global",
    "cp.async.ca.shared.global",
    "tcgen05.",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="copy-demo", description=__doc__)
    parser.add_argument("input", nargs="?", default=None, help=f"default: {EXAMPLE_NAME}")
    parser.add_argument("--target", default=None, help="override the module's copy.target")
    parser.add_argument("--out", default="build", help="output folder (default: build/)")
    args = parser.parse_args(argv)

    from passes import backend
    from passes.pipeline import compile_module

    path = default_example() if args.input is None else Path(args.input)
    try:
        text = path.read_text()
    except OSError as exc:
        print(f"copy-demo: error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 1
    backend.start_worker()
    start = time.perf_counter()
    try:
        module = Parser(make_context(), text, str(path)).parse_module()
        source = module.clone()  # the copy IR, for the interpreter (compiling lowers it)
        compiled = compile_module(module, make_context(), args.target)
    except (ParseError, DiagnosticException, ValueError) as exc:
        print(f"copy-demo: error: {exc}\n(copy-opt {path} gives located diagnostics)")
        return 1
    elapsed = time.perf_counter() - start

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / path.stem
    stem.with_suffix(".ll").write_text(compiled.llvm_ir)
    stem.with_suffix(".ptx").write_text(compiled.ptx)
    cubin = stem.with_suffix(".cubin")
    cubin.write_bytes(compiled.cubin)
    Path(f"{cubin}.json").write_text(compiled.abi.to_json())

    target = compiled.target.name
    print(f"{path.name} -> {target}: compiled in {elapsed * 1000:.0f} ms (in process)")
    for name, kernel in compiled.abi.kernels.items():
        kinds = ", ".join(p.kind for p in kernel.params)
        block = "?" if kernel.block is None else list(kernel.block)
        print(
            f"  kernel {name}: params ({kinds}), block {block}, "
            f"cluster {list(kernel.cluster)}, dynamic SMEM {kernel.smem_bytes} bytes"
        )
    print("  PTX instructions:")
    seen: set[str] = set()
    for token in compiled.ptx.split():
        if any(token.startswith(key) for key in KEY_INSTRUCTIONS) and token not in seen:
            seen.add(token)
            print(f"    {token}")
    print(f"  wrote {stem}.ll, {stem}.ptx, {cubin} ({len(compiled.cubin)} bytes), {cubin}.json")
    return launch_if_possible(path, compiled, source)


def launch_if_possible(path: Path, compiled, source) -> int:
    """Runs the TMA tile-copy example and checks it against numpy: on the GPU where there
    is one, else under the interpreter."""
    import runtime

    if path.name != EXAMPLE_NAME:
        print(f"  (the run and its check are for {EXAMPLE_NAME} only)")
        return 0
    if not runtime.gpu_available():
        return interpret(source)
    import numpy as np

    program = runtime.Program(compiled.cubin, compiled.abi)
    x = np.random.default_rng(0).standard_normal((4096, 4096), dtype=np.float32)
    y = np.zeros_like(x)
    try:
        program(x, y, grid=(64, 64))
    except (ValueError, runtime.CudaError) as exc:
        print(f"copy-demo: error: the launch failed: {exc}", file=sys.stderr)
        return 1
    ok = bool(np.array_equal(x, y))
    print(f"  launched on the GPU: y {'==' if ok else '!='} x bit for bit (numpy check)")
    return 0 if ok else 1


def interpret(source) -> int:
    """No GPU: the example's first 2 x 2 blocks on the CPU, under the interpreter."""
    import numpy as np

    import interpreter

    x = np.random.default_rng(0).standard_normal((4096, 4096), dtype=np.float32)
    y = np.zeros_like(x)
    start = time.perf_counter()
    run = interpreter.run(source, x, y, grid=(2, 2))
    elapsed = time.perf_counter() - start
    y = run.arrays[1]
    for violation in run.violations:
        print(f"copy-demo: error: {violation}", file=sys.stderr)
    ok = bool(np.array_equal(y[:128, :128], x[:128, :128])) and not y[128:].any()
    ok = ok and not y[:, 128:].any()  # the other blocks did not run
    print(
        f"  no GPU here: ran its first 2 x 2 blocks on the CPU (the interpreter, "
        f"{elapsed * 1000:.0f} ms): y {'==' if ok else '!='} x bit for bit on their tiles, "
        f"{len(run.violations)} rule(s) broken"
    )
    return 0 if ok and not run.violations else 1


def run() -> int:
    """Entry point of `copy-demo` (no traceback, `copy-demo | head` included: `cli.guarded`)."""
    return guarded("copy-demo", main)


if __name__ == "__main__":
    sys.exit(run())
