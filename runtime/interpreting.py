"""Kernel calls on the CPU: `COPY_INTERPRET=1` runs them under the interpreter instead of
the GPU; `COPY_INTERPRET=compare` runs them on both, on the same inputs, and their results
must agree bit for bit (`InterpreterMismatch`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

INTERPRET_ENV = "COPY_INTERPRET"
"""Set to 1, a kernel call runs the kernel on the CPU (the interpreter) instead of the GPU;
set to `compare`, it runs on both, on the same inputs, and their results must agree bit for
bit (`InterpreterMismatch`)."""


def interpreting() -> bool:
    """Whether kernel calls run on the CPU instead of the GPU (`COPY_INTERPRET=1`)."""
    return os.environ.get(INTERPRET_ENV, "") not in ("", "0", "compare")


def comparing() -> bool:
    """Whether kernel calls run on the GPU and the interpreter both
    (`COPY_INTERPRET=compare`)."""
    return os.environ.get(INTERPRET_ENV, "") == "compare"


def twin(a: np.ndarray) -> np.ndarray:
    """A copy of `a` with its strides: a view into a padded array is copied with the array
    it views (the kernel's layout checks see the same strides)."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root is a or not root.flags.c_contiguous:
        return a.copy()
    offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(a.shape, a.dtype, root.copy(), offset, a.strides)


class InterpreterMismatch(AssertionError):
    """Under `COPY_INTERPRET=compare`, the GPU and the interpreter left an array differently."""


def check_same(name: str, gpu: Sequence[Any], cpu: Sequence[Any], launch: str) -> None:
    """Raise `InterpreterMismatch` unless every numpy array of `gpu` has the bytes of its
    twin in `cpu` (the first differing byte named)."""
    for i, (a, b) in enumerate(zip(gpu, cpu, strict=True)):
        if not isinstance(a, np.ndarray):
            continue
        got, want = (np.ascontiguousarray(x).reshape(-1).view(np.uint8) for x in (a, b))
        differ = np.flatnonzero(got != want)
        if differ.size:
            raise InterpreterMismatch(
                f"kernel {name}, argument {i} ({a.dtype}{list(a.shape)}): the GPU and the "
                f"interpreter differ at {differ.size} bytes, the first at byte "
                f"{int(differ[0])} ({launch})"
            )
