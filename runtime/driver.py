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
    """There is no CUDA driver (or no GPU) on this machine."""


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
        raise CudaError(f"{name} failed: {_decode(err_name)} ({_decode(err_text)})")
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
    return context, DeviceFacts(name, (major, minor), smem)


def gpu_available() -> bool:
    """Whether a CUDA driver and a GPU are here (for tests that need one)."""
    try:
        device()
    except Exception:
        return False
    return True


def synchronize() -> None:
    call("cuCtxSynchronize")
