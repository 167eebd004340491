"""`copy-demo`: the main job on a bundled example, end to end.

Verifies the TMA tile-copy example (or the .mlir file given), lowers it, and compiles it to
LLVM IR, PTX and a cubin (nvJitLink, no GPU needed), writing them and the kernel ABI under
`build/`. It prints what it made, the key PTX instructions and the in-process compile time.
"""

from __future__ import annotations

import argparse
import sys
import time
from importlib import resources
from pathlib import Path

from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError

from copy_tools.universe import make_context

DEFAULT_EXAMPLE = Path(str(resources.files("copy_tools.examples") / "tma_tile_copy.mlir"))
"""The bundled example (examples/ ships as the package data `copy_tools.examples`)."""
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
    parser.add_argument("input", nargs="?", default=str(DEFAULT_EXAMPLE))
    parser.add_argument("--target", default=None, help="override the module's copy.target")
    parser.add_argument("--out", default="build", help="output folder (default: build/)")
    args = parser.parse_args(argv)

    from passes import backend
    from passes.pipeline import compile_module

    path = Path(args.input)
    try:
        text = path.read_text()
    except OSError as exc:
        print(f"copy-demo: error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 1
    backend.start_worker()
    start = time.perf_counter()
    try:
        module = Parser(make_context(), text, str(path)).parse_module()
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
    return launch_if_possible(path, compiled)


def launch_if_possible(path: Path, compiled) -> int:
    """Where there is a GPU, runs the TMA tile-copy example and checks it against numpy."""
    import runtime

    if not runtime.gpu_available():
        print("  no GPU here: compiled only (with a GPU, copy-demo also launches the kernel)")
        return 0
    if path.name != DEFAULT_EXAMPLE.name:
        print(f"  (the launch check runs for {DEFAULT_EXAMPLE.name} only)")
        return 0
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


def run() -> int:
    try:
        return main()
    except BrokenPipeError:  # e.g. `copy-demo | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(run())
