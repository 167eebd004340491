"""The one error for a bad argument to a public Python entry point: the runtime's (a Program
or Kernel call), the compiler's (`copy_tools.runtime.compile`) and the builders'
(`frontends.kernels`). Here, in the bottom layer, so that each of them raises the same type."""

from __future__ import annotations


class ArgumentError(ValueError):
    """A bad argument to a public entry point: what was expected, what was got, and the fix.
    The runtime raises it before anything touches CUDA, so the same error appears with or
    without a GPU. A ValueError, so `except ValueError` keeps catching it; also
    `runtime.ArgumentError`."""
