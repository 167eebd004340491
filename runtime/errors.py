"""The one error for a bad argument to the runtime's, the compiler's or the builders' Python
entry points."""

from __future__ import annotations


class ArgumentError(ValueError):
    """A bad argument to a public entry point (`runtime.compile`, a Program or Kernel call,
    `frontends.kernels`' builders): what was expected, what was got, and the fix. Raised
    before anything touches CUDA, so the same error appears with or without a GPU. A
    ValueError, so `except ValueError` keeps catching it."""
