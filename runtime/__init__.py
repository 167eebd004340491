"""The cuda-python runtime: load what the compiler emits and launch it on arrays.

    import runtime
    program = runtime.load("tile.cubin")   # written by copy-opt -t cubin -o tile.cubin
    program(x, y, grid=(64, 64))           # numpy arrays in, results copied back

It needs no compiler and imports no xDSL: a Program is a cubin and its kernel ABI
(`facts.abi`). `copy_tools.runtime.compile` compiles MLIR into one in process.

Arrays may be numpy arrays (copied to the device and back) or device arrays (PyTorch, CuPy,
JAX: `__cuda_array_interface__` or DLPack), used in place. Everything only the runtime can
know is checked before the launch, each failure a ValueError saying what was expected and
what was found: the GPU's compute capability against the kernel's target, its shared-memory
limit, and the arrays' shapes, dtypes, strides and alignment against the kernel.
"""

from __future__ import annotations

from runtime.driver import CudaError, NoDriverError, gpu_available
from runtime.interpreting import INTERPRET_ENV, InterpreterMismatch, comparing, interpreting
from runtime.kernel import Kernel, Program, check_device, load

__all__ = [
    "INTERPRET_ENV",
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
