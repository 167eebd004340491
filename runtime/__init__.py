"""The cuda-python runtime: load what the compiler emits and launch it on arrays.

    from copy_dialect import runtime
    program = runtime.compile(open("examples/tma_tile_copy.mlir").read())
    program(x, y, grid=(64, 64))        # numpy arrays in, results copied back

Arrays may be numpy arrays (copied to the device and back) or device arrays (PyTorch, CuPy,
JAX: `__cuda_array_interface__` or DLPack), used in place. Everything only the runtime can
know is checked before the launch, each failure a ValueError saying what was expected and
what was found: the GPU's compute capability against the kernel's target, its shared-memory
limit, and the arrays' shapes, dtypes, strides and alignment against the kernel.
"""

from __future__ import annotations

from typing import Any

from copy_dialect.runtime.driver import CudaError, NoDriverError, gpu_available
from copy_dialect.runtime.kernel import Kernel, Program, check_device, load


def compile(source: Any, target: str | None = None) -> Program:  # noqa: A001
    """Compiles MLIR text or a module (copy dialect) for `target` (default: its copy.target)
    into a Program whose kernels can be called."""
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.parser import Parser

    from copy_dialect.passes.pipeline import compile_module
    from copy_dialect.universe import make_context

    ctx = make_context()
    module = source if isinstance(source, ModuleOp) else Parser(ctx, source).parse_module()
    compiled = compile_module(module, ctx, target)
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
