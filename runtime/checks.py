"""The checks of a launch that need no GPU: the grid, block and cluster values, each array
argument's shape, dtype, strides and alignment against the kernel's ABI (`check_arguments`),
and, once a GPU is found, the device against the kernel's target (`check_device`). Each
failure an `ArgumentError` saying what was expected, what was got and the fix; a Program runs
them all before it touches CUDA."""

from __future__ import annotations

from dataclasses import replace
from math import prod
from typing import Any

from facts.abi import KernelAbi, PointerParam, ScalarParam
from facts.target import TARGETS
from runtime import arrays as arr
from runtime.driver import DeviceFacts
from runtime.errors import ArgumentError


def check_device(target: str, smem_bytes: int, facts: DeviceFacts) -> None:
    """The device can run code for `target` with that much shared memory."""
    t = TARGETS[target]
    major, minor = divmod(t.sm, 10)
    have = facts.compute_capability
    if t.suffix in ("a", "f"):
        fits = have == (major, minor) if t.suffix == "a" else have[0] == major
    else:
        fits = have[0] == major and have[1] >= minor
    if not fits:
        raise ArgumentError(
            f"expected a GPU that runs {target} code (compute capability {major}.{minor}"
            f"{'' if t.suffix == 'a' else ' or a later minor'}), got {facts.name} with "
            f"compute capability {have[0]}.{have[1]}; recompile with --target for it"
        )
    if smem_bytes > facts.max_smem_optin:
        raise ArgumentError(
            f"expected at most {facts.max_smem_optin} bytes of shared memory per block on "
            f"{facts.name}, got a kernel that needs {smem_bytes}"
        )


def check_layout(array: arr.DeviceArray, param: PointerParam, name: str) -> arr.DeviceArray:
    """The array's strides against the argument's layout, which the kernel addresses it with:
    a row-major argument takes a contiguous array, one of a strided layout
    (`PointerParam.strides`) an array of exactly those strides (a view of a padded array),
    but where the layout's stride is `?` (the array's own, which only a tensor map reads).
    Returned with the layout's strides (they differ only in dims of size 1, which no address
    depends on), so that a tensor map encoded from it describes the layout."""
    if param.strides is None:
        if not array.contiguous:
            raise ArgumentError(row_major_error(array, name))
        return array
    want = tuple(None if s < 0 else s * array.itemsize for s in param.strides)
    if not array.strides_match(want):
        raise ArgumentError(strides_error(array, param, name))
    strides = tuple(have if w is None else w for w, have in zip(want, array.strides, strict=True))
    return replace(array, strides=strides)


def row_major_error(array: arr.DeviceArray, name: str) -> str:
    """Why a non-contiguous array does not fit a row-major argument, and the fixes."""
    fix = "np.ascontiguousarray(...)" if array.host is not None else "a contiguous copy"
    elements = element_strides(array)
    layout = ""
    if elements is not None and all(s > 0 for s in elements):
        layout = f", or give the kernel's argument the layout strided<{list(elements)}>"
    return (
        f"expected {name} to be C-contiguous (row-major, the kernel's layout), got strides "
        f"{array.strides} bytes; pass {fix}{layout}"
    )


def strides_error(array: arr.DeviceArray, param: PointerParam, name: str) -> str:
    """Why an array does not fit a strided argument, and the padded array whose view would."""
    want = tuple("?" if s < 0 else s for s in param.strides or ())
    shown = "(" + ", ".join(map(str, want)) + ("," if len(want) == 1 else "") + ")"
    elements = element_strides(array)
    got = f"{elements} elements" if elements is not None else f"{array.strides} bytes"
    padded = padded_shape(array.shape, param.strides or ())
    if padded is None:
        fix = "pass an array of those strides (a view of a larger array)"
    else:
        sliced = zip(array.shape, padded, strict=True)
        view = ", ".join(":" if d == p else f":{d}" for d, p in sliced)
        fix = f"pass a view of a {padded} array, e.g. padded[{view}]"
    return (
        f"expected {name} with strides {shown} elements (its layout {param.layout}), got "
        f"{got}; {fix}"
    )


def element_strides(array: arr.DeviceArray) -> tuple[int, ...] | None:
    """The array's strides in elements, None where one is not a whole number of them."""
    if any(s % array.itemsize for s in array.strides):
        return None
    return tuple(s // array.itemsize for s in array.strides)


def padded_shape(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...] | None:
    """The row-major array of which an array of `shape` at these element strides is the
    leading corner (each stride a multiple of the next, the innermost 1), None where there is
    none."""
    if not strides or strides[-1] != 1 or any(s < 1 for s in strides):
        return None
    pairs = list(zip(strides, strides[1:], strict=False))
    if any(outer % inner for outer, inner in pairs):
        return None
    padded = (shape[0], *(outer // inner for outer, inner in pairs))
    return padded if all(p >= d for p, d in zip(padded, shape, strict=True)) else None


def check_chunk_alignment(array: arr.DeviceArray, param: PointerParam, name: str) -> None:
    """A cp.async copy moves chunks aligned to their size: of a static array the one the
    compiler picked, of a dynamic one the largest that divides the array's address and row
    pitches, picked at run time. The smallest it may move, `align` bytes
    (`PointerParam.align`), must divide them (a device view that starts mid-chunk would
    fault). The kernel computes the pitches from the sizes
    (a contiguous array's strides) or takes its layout's; a host array's device copy is
    allocated aligned."""
    align = param.align
    if param.strides is None:
        pitches = [prod(array.shape[i + 1 :]) * array.itemsize for i in range(len(array.shape) - 1)]
    else:
        pitches = [s * array.itemsize for s in param.strides[:-1]]
    if any(p % align for p in pitches):
        inner = array.shape[-1]
        padded = -(-inner * array.itemsize // align) * align // array.itemsize
        raise ArgumentError(
            f"expected {name} whose rows are a multiple of {align} bytes apart (the smallest "
            f"chunk the kernel's cp.async copies of it move), got strides of {pitches} bytes "
            f"({inner} elements of {array.dtype} a row); pad the innermost dimension to "
            f"{padded} elements"
        )
    if array.pointer % align:
        raise ArgumentError(
            f"expected {name} at an address aligned to {align} bytes (the smallest chunk the "
            f"kernel's cp.async copies of it move), got {array.pointer:#x}"
        )


GRID_LIMITS = (2**31 - 1, 65535, 65535)
"""The most blocks a grid has along x, y and z (a larger grid fails with
CUDA_ERROR_INVALID_VALUE, seen on the H200 for grid y = 65536)."""


def launch_shape(value: Any, what: str, kernel: str) -> tuple[int, int, int]:
    """A grid or block given as an int or 1 to 3 ints, each at least 1, as (x, y, z)."""
    dims = (value,) if isinstance(value, int) and not isinstance(value, bool) else value
    try:
        dims = tuple(dims)
    except TypeError:
        dims = None
    ok = (
        dims is not None
        and 1 <= len(dims) <= 3
        and all(isinstance(d, int) and not isinstance(d, bool) for d in dims)
    )
    if not ok or dims is None:
        raise ArgumentError(
            f"expected {what} for kernel {kernel} to be 1 to 3 positive ints (x, y, z), got "
            f"{value!r}; fix: pass e.g. {what}=(64, 64)"
            + (", kernels.grid(shape, tile) gives a grid" if what == "grid" else "")
        )
    if any(d < 1 for d in dims):
        raise ArgumentError(
            f"expected every {what} dimension of kernel {kernel} to be at least 1, got "
            f"{tuple(dims)}; fix: launch at least one {'block' if what == 'grid' else 'thread'} "
            "along each dimension"
        )
    return (tuple(dims) + (1, 1, 1))[:3]  # type: ignore[return-value]


def check_launch(
    abi: KernelAbi, kernel: str, grid: Any, block: Any
) -> tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, ...]]:
    """The grid and block of a launch against the kernel's known block and cluster and the
    CUDA grid limits: (grid, block, cluster), each three ints."""
    grid3 = launch_shape(grid, "grid", kernel)
    fixed = abi.block
    if block is None and fixed is None:
        raise ArgumentError(
            f"expected a block shape for kernel {kernel}, got none (the kernel has no "
            "gpu.known_block_size); fix: pass block=(x, y, z)"
        )
    block3 = launch_shape(fixed if block is None else block, "block", kernel)
    if fixed is not None and list(block3) != list(fixed):
        raise ArgumentError(
            f"expected block {tuple(fixed)} for kernel {kernel} (its gpu.known_block_size), "
            f"got {block3}; fix: leave block out or pass {tuple(fixed)}"
        )
    cluster = tuple(abi.cluster)
    if any(g % c for g, c in zip(grid3, cluster, strict=True)):
        raise ArgumentError(
            f"expected a grid that is a multiple of the cluster {cluster}, got {grid3} "
            f"(kernel {kernel}); fix: round each grid dimension up to a multiple of the "
            "cluster's"
        )
    if any(g > limit for g, limit in zip(grid3, GRID_LIMITS, strict=True)):
        raise ArgumentError(
            f"expected a grid of at most {GRID_LIMITS} blocks per dimension (the CUDA "
            f"limits), got {grid3}; for {kernel}, use larger tiles, put the blocks "
            "along x, or a persistent kernel"
        )
    return grid3, block3, cluster


def check_arguments(abi: KernelAbi, kernel: str, values: list[Any]) -> list[arr.DeviceArray | Any]:
    """The caller's arguments against the ABI; arrays are described, not yet uploaded."""
    arguments = abi.arguments
    if len(values) != len(arguments):
        raise ArgumentError(
            f"expected {len(arguments)} arguments for kernel {kernel}, got {len(values)}; "
            f"fix: pass {', '.join(describe(p) for p in arguments) or 'none'}"
        )
    described: list[arr.DeviceArray | Any] = []
    for i, (value, param) in enumerate(zip(values, arguments, strict=True)):
        name = f"argument {i} of {kernel}"
        if isinstance(param, ScalarParam):
            described.append(check_scalar(value, param, name))
            continue
        array = arr.device_array(value, name)
        shape = arr.packed_shape(param.element, param.shape)
        matches = len(array.shape) == len(shape) and all(
            want < 0 or want == have for want, have in zip(shape, array.shape, strict=True)
        )
        if not matches:
            shown = tuple("?" if d < 0 else d for d in shape)
            packed = arr.PACKED_ELEMENTS.get(param.element)
            raise ArgumentError(
                f"expected {name} of shape {shown}"
                + (f" (the bytes of its {param.element} elements, packed)" * bool(packed))
                + f", got {array.shape}; fix: pass an array of the shape the kernel was built "
                "for, or rebuild it for this one"
            )
        accepted = arr.accepted_dtypes(param.element)
        if array.dtype not in accepted:
            want = " or ".join(sorted(accepted)) or param.element
            raise ArgumentError(
                f"expected {name} of dtype {want} (the kernel's {param.element}), got "
                f"{array.dtype}; fix: pass x.astype({sorted(accepted or {want})[0]!r})"
            )
        array = check_layout(array, param, name)
        if param.align > 1:
            check_chunk_alignment(array, param, name)
        described.append(array)
    return described  # the tensor maps' arrays: Kernel.check_arguments


SCALAR_KINDS = {"i1": (bool, int), "f32": (float, int), "f64": (float, int)}
"""The Python values a scalar parameter takes (the integer types: ints)."""


def check_scalar(value: Any, param: ScalarParam, name: str) -> Any:
    """A scalar argument: a Python or numpy number of the parameter's kind, in its range."""
    import numpy as np

    if isinstance(value, np.generic):
        value = value.item()
    kinds = SCALAR_KINDS.get(param.type, (int,))
    integral = param.type not in ("f32", "f64", "i1")
    if not isinstance(value, kinds) or (integral and isinstance(value, bool)):
        raise ArgumentError(
            f"expected {name} to be a {param.type} scalar "
            f"({' or '.join(k.__name__ for k in kinds)}), got {type(value).__name__} "
            f"{value!r}; fix: pass a Python number"
        )
    bits = {"i32": 32, "i64": 64, "index": 64}.get(param.type)
    if bits is not None and not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise ArgumentError(
            f"expected {name} in the signed {bits}-bit range of its {param.type}, got {value}"
        )
    return value


def describe(param: PointerParam | ScalarParam) -> str:
    if isinstance(param, ScalarParam):
        return param.type
    dims = ", ".join("?" if d < 0 else str(d) for d in param.shape)
    return f"{param.element}[{dims}]"
