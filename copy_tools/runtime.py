"""The runtime with the compiler in front: `compile` MLIR (text or a module) into a Program.

    from copy_tools import runtime
    program = runtime.compile(open("examples/tma_tile_copy.mlir").read())
    program(x, y, grid=(64, 64))

Everything else is `runtime`'s, which loads and launches cubins without the
compiler (and without xDSL).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from copy_tools.universe import make_context
from passes import backend
from passes.pipeline import compile_module
from runtime import (
    CudaError,
    Kernel,
    NoDriverError,
    Program,
    check_device,
    gpu_available,
    load,
)


def compile(  # noqa: A001
    source: str | ModuleOp,
    target: str | None = None,
    *,
    debug_guards: bool = False,
    arch: str | None = None,
) -> Program:
    """Compiles MLIR text or a module (copy dialect) for `target` (default: its copy.target)
    into a Program whose kernels can be called; `debug_guards`: with device-side checks of
    what the verifier cannot prove (docs/lowering.md, "Debug guards"), each failing one
    printing its rule id and trapping. `arch`: the GPU to assemble the target's PTX for,
    where it is a later one than the target's (`compile(m, "sm_80", arch="sm_90")` runs
    sm_80 code on an H100 or H200, as CUDA's compute_80 -> sm_90 does)."""
    backend.start_worker()  # a worker that is not running yet starts while this parses
    ctx = make_context()
    module = source if isinstance(source, ModuleOp) else Parser(ctx, source).parse_module()
    compiled = compile_module(module, ctx, target, debug_guards=debug_guards, arch=arch)
    return Program(compiled.cubin, compiled.abi)


__all__ = [
    "CudaError",
    "Kernel",
    "NoDriverError",
    "Program",
    "check_device",
    "compile",
    "gpu_available",
    "load",
]
