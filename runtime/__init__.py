"""The cuda-python runtime: load what the compiler emits and launch it on arrays.

    import runtime
    program = runtime.load("tile.cubin")   # written by copy-opt -t cubin -o tile.cubin
    program(x, y, grid=(64, 64))           # numpy arrays in, results copied back

It needs no compiler and imports no xDSL: a Program is a cubin and its kernel ABI
(`facts.abi`). `copy_tools.runtime.compile` compiles MLIR into one in process.

Arrays may be numpy arrays (copied to the device and back) or device arrays (PyTorch, CuPy,
JAX: `__cuda_array_interface__` or DLPack), used in place. A call checks its arguments
before it touches CUDA, so the same error appears with or without a GPU: the grid, block and
cluster values, the arrays' shapes, dtypes, strides and alignment and the scalars against
the kernel (`runtime.checks`); then the GPU's compute capability against the kernel's target
and its shared-memory limit. Each failure is an `ArgumentError` (a ValueError) saying what
was expected, what was found and the fix; `NoDriverError` only once the arguments are good.
"""

from __future__ import annotations

from runtime.driver import CudaError, NoDriverError, gpu_available
from runtime.errors import ArgumentError
from runtime.interpreting import INTERPRET_ENV, InterpreterMismatch, comparing, interpreting
from runtime.kernel import Kernel, Program, check_device, load

__all__ = [
    "INTERPRET_ENV",
    "ArgumentError",
    "CudaError",
    "InterpreterMismatch",
    "Kernel",
    "NoDriverError",
    "Program",
    "check_device",
    "comparing",
    "gpu_available",
    "interpreting",
    "load",
]
