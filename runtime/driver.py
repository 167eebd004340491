"""Checked calls into the CUDA driver (`cuda.bindings.driver`) and the device's facts.

Every driver call goes through `call`, which raises `CudaError` (with the function's name and
the driver's error name and text) for any result other than CUDA_SUCCESS.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache
from typing import Any


class CudaError(RuntimeError):
    """A CUDA driver call failed."""


class NoDriverError(CudaError):
    """There is no CUDA driver (or no GPU) on this machine: raised once, at the runtime's
    boundary (a launch, loading a module), with a message that says how to check."""


NO_GPU_HINT = (
    "`runtime.gpu_available()` says whether this machine can launch, and "
    "`python -m copy_dialect` shows what was found; compiling needs no GPU"
)

NO_DEVICE_ERRORS = ("CUDA_ERROR_NO_DEVICE", "CUDA_ERROR_STUB_LIBRARY")
"""The driver's answers that mean there is no GPU to use (rather than a failing call)."""


def no_gpu(cause: Exception) -> NoDriverError:
    """The one error a launch without a GPU raises: what happened, and how to check."""
    return NoDriverError(
        f"no CUDA driver or GPU found: {cause}. {NO_GPU_HINT[0].upper()}{NO_GPU_HINT[1:]}"
    )


def _driver() -> Any:
    from cuda.bindings import driver

    return driver


def call(name: str, *args: Any) -> Any:
    """`driver.<name>(*args)`, its error checked; returns the remaining results."""
    driver = _driver()
    try:
        result = getattr(driver, name)(*args)
    except Exception as exc:  # the library itself cannot be found or loaded
        if "cuda" in str(exc).lower() and "found" in str(exc).lower():
            raise NoDriverError(f"{name}: no CUDA driver on this machine ({exc})") from None
        raise
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        _, err_name = driver.cuGetErrorName(err)
        _, err_text = driver.cuGetErrorString(err)
        message = f"{name} failed: {_decode(err_name)} ({_decode(err_text)})"
        if _decode(err_name) in NO_DEVICE_ERRORS:
            raise NoDriverError(message)
        raise CudaError(message)
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


def _decode(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class DeviceFacts:
    """What the runtime checks a kernel against."""

    name: str
    compute_capability: tuple[int, int]
    max_smem_optin: int
    """Largest dynamic + static shared memory a block may opt into (bytes)."""
    driver_version: int | None = None
    """`cuDriverGetVersion`: 1000 * major + 10 * minor of the CUDA the driver supports (13010:
    13.1); None where not asked (facts made by hand)."""


_lock = threading.Lock()


@cache
def device(ordinal: int = 0) -> tuple[Any, DeviceFacts]:
    """The device's handle, with its primary context current, and its facts."""
    driver = _driver()
    with _lock:
        call("cuInit", 0)
        dev = call("cuDeviceGet", ordinal)
        context = call("cuDevicePrimaryCtxRetain", dev)
        call("cuCtxSetCurrent", context)
        attr = driver.CUdevice_attribute
        major = call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
        minor = call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
        smem = call(
            "cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev
        )
        name = _decode(call("cuDeviceGetName", 256, dev)).split("\x00")[0]
        version = call("cuDriverGetVersion")
    return context, DeviceFacts(name, (major, minor), smem, version)


def gpu_available() -> bool:
    """Whether a CUDA driver and a GPU are here (for tests that need one)."""
    try:
        device()
    except Exception:
        return False
    return True


def facts() -> DeviceFacts:
    """The device's facts; without a driver or GPU, `NoDriverError` raised here, at the
    boundary, with no traceback through the driver calls behind it."""
    try:
        return device()[1]
    except NoDriverError as exc:
        raise no_gpu(exc) from None


def synchronize() -> None:
    call("cuCtxSynchronize")
