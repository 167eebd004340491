"""Kernel calls on the CPU: `COPY_INTERPRET=1` runs them under the interpreter instead of
the GPU; `COPY_INTERPRET=compare` runs them on both, on the same inputs, and their results
must agree bit for bit (`InterpreterMismatch`), except the floats of a kernel with a
tensor-core MMA (wgmma, tcgen05.mma): the tensor core adds its products in an order and at an
internal precision the PTX ISA leaves open, the interpreter in k order in f32, so those agree
within `MMA_ULPS` ulps of each element plus `MMA_SPREAD` of the array's largest magnitude
(measured on the H100: 1-ulp rounding flips of 16-bit C, low-bit differences of f32 C;
benchmarks/RESULTS.md, run 78)."""

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


MMA_ULPS = 2
"""Ulps (of each element's own type, at its magnitude) a tensor-core kernel's float result
may differ by between the GPU and the interpreter."""
MMA_SPREAD = 2.0**-16
"""And the fraction of the array's largest magnitude (accumulation-order differences of
terms that cancel)."""


def check_same(
    name: str, gpu: Sequence[Any], cpu: Sequence[Any], launch: str, *, mma: bool = False
) -> None:
    """Raise `InterpreterMismatch` unless every numpy array of `gpu` has the bytes of its
    twin in `cpu` (the first differing byte named); with `mma` (a kernel with a tensor-core
    MMA), float arrays within the MMA tolerance instead (`not_close`)."""
    for i, (a, b) in enumerate(zip(gpu, cpu, strict=True)):
        if not isinstance(a, np.ndarray):
            continue
        if mma and mantissa_bits(a.dtype) is not None:
            far = not_close(a, b)
            if far is not None:
                raise InterpreterMismatch(
                    f"kernel {name}, argument {i} ({a.dtype}{list(a.shape)}): the GPU and the "
                    f"interpreter differ beyond the tensor core's tolerance ({MMA_ULPS} ulps "
                    f"+ {MMA_SPREAD} of the largest magnitude) at {far[0]} elements, the "
                    f"first at flat index {far[1]} ({launch})"
                )
            continue
        got, want = (np.ascontiguousarray(x).reshape(-1).view(np.uint8) for x in (a, b))
        differ = np.flatnonzero(got != want)
        if differ.size:
            raise InterpreterMismatch(
                f"kernel {name}, argument {i} ({a.dtype}{list(a.shape)}): the GPU and the "
                f"interpreter differ at {differ.size} bytes, the first at byte "
                f"{int(differ[0])} ({launch})"
            )


def mantissa_bits(dtype: np.dtype) -> int | None:
    """The explicit mantissa bits of a float type: numpy's floats and ml_dtypes' (bfloat16,
    the fp8 types: kind "V", known to `ml_dtypes.finfo`, which older numpy's `finfo` is
    not); None for anything else."""
    if dtype.kind == "f":
        return int(np.finfo(dtype).nmant)
    try:
        import ml_dtypes

        return int(ml_dtypes.finfo(dtype).nmant)
    except (ImportError, TypeError, ValueError):
        return None


def not_close(gpu: np.ndarray, cpu: np.ndarray) -> tuple[int, int] | None:
    """(how many elements, the first's flat index) of `gpu` farther from `cpu` than the MMA
    tolerance; None when every element is within it (NaNs where both are NaN)."""
    g = np.ascontiguousarray(gpu).reshape(-1).astype(np.float64)
    c = np.ascontiguousarray(cpu).reshape(-1).astype(np.float64)
    finite = np.isfinite(c)
    scale = float(np.max(np.abs(c[finite]), initial=0.0))
    # an ulp of the array's type at each element: f32's, scaled to the type's mantissa
    nmant = mantissa_bits(cpu.dtype) or 23
    ulp = np.spacing(np.abs(c).astype(np.float32)).astype(np.float64) * 2.0 ** (23 - nmant)
    bound = MMA_ULPS * ulp + MMA_SPREAD * scale
    same = (g == c) | (np.isnan(g) & np.isnan(c)) | (np.abs(g - c) <= bound)
    far = np.flatnonzero(~same)
    return None if far.size == 0 else (int(far.size), int(far[0]))
