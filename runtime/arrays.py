"""Arrays the runtime accepts, seen as (device pointer, shape, strides, dtype).

- numpy arrays live on the host: they are copied to the device before the launch and back
  after it (`HostArray`);
- device arrays are used in place, found through `__cuda_array_interface__` (CuPy, Numba,
  JAX, PyTorch) or, for PyTorch tensors, `data_ptr()` (which also covers bfloat16, that the
  interface cannot describe), or DLPack through CuPy or PyTorch (`DeviceArray`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runtime.driver import call

DTYPE_NAMES = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "tf32": "float32",  # stored in 32 bits, as f32 (a tf32 TMA map reads those bits)
    "f64": "float64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "si32": "int32",
    "si64": "int64",
    "ui8": "uint8",
    "ui16": "uint16",
    "ui32": "uint32",
    "ui64": "uint64",
}
"""Element type of the IR -> the array dtype it takes (signless ints take either sign)."""

TYPESTR_NAMES = {
    "<f2": "float16",
    "<f4": "float32",
    "<f8": "float64",
    "|i1": "int8",
    "<i2": "int16",
    "<i4": "int32",
    "<i8": "int64",
    "|u1": "uint8",
    "<u2": "uint16",
    "<u4": "uint32",
    "<u8": "uint64",
}


def accepted_dtypes(element: str) -> set[str]:
    name = DTYPE_NAMES.get(element)
    if name is None:
        return set()
    if element.startswith("i") and name.startswith("int"):
        return {name, "u" + name}
    return {name}


@dataclass
class DeviceArray:
    """A device buffer as the kernel sees it."""

    pointer: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    """In bytes."""
    dtype: str
    itemsize: int
    host: Any = None
    """The numpy array it was copied from (copied back after the launch)."""

    @property
    def nbytes(self) -> int:
        n = self.itemsize
        for d in self.shape:
            n *= d
        return n

    @property
    def contiguous(self) -> bool:
        expected, stride = [], self.itemsize
        for d in reversed(self.shape):
            expected.insert(0, stride)
            stride *= d
        return all(
            s == e for s, e, d in zip(self.strides, expected, self.shape, strict=True) if d > 1
        )

    def release(self) -> None:
        """Copy a host array back and free its device copy."""
        if self.host is None:
            return
        call("cuMemcpyDtoH", self.host.ctypes.data, self.pointer, self.nbytes)
        call("cuMemFree", self.pointer)
        self.host = None


def _contiguous_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides, stride = [], itemsize
    for d in reversed(shape):
        strides.insert(0, stride)
        stride *= d
    return tuple(strides)


def device_array(obj: Any, name: str) -> DeviceArray:
    """`obj` as a device array (a numpy array is copied to the device)."""
    if hasattr(obj, "data_ptr") and hasattr(obj, "is_cuda"):  # PyTorch
        if not obj.is_cuda:
            raise ValueError(f"expected {name} on the GPU or a numpy array, got a CPU tensor")
        itemsize = obj.element_size()
        dtype = str(obj.dtype).removeprefix("torch.")
        shape = tuple(obj.shape)
        strides = tuple(s * itemsize for s in obj.stride())
        return DeviceArray(obj.data_ptr(), shape, strides, dtype, itemsize)
    try:
        interface = getattr(obj, "__cuda_array_interface__", None)
    except (AttributeError, TypeError):  # some libraries raise for arrays they cannot describe
        interface = None
    if interface is None and _on_cuda_device(obj):
        return device_array(_from_dlpack(obj, name), name)
    if interface is not None:
        typestr = interface["typestr"]
        dtype = TYPESTR_NAMES.get(typestr)
        if dtype is None:
            raise ValueError(f"expected {name} of a numeric dtype, got typestr {typestr!r}")
        itemsize = int(typestr[2:])
        shape = tuple(interface["shape"])
        strides = interface.get("strides") or _contiguous_strides(shape, itemsize)
        return DeviceArray(interface["data"][0], shape, tuple(strides), dtype, itemsize)
    import numpy as np

    if not isinstance(obj, np.ndarray):
        raise ValueError(
            f"expected {name} to be a numpy array or a device array (DLPack or "
            f"__cuda_array_interface__), got {type(obj).__name__}"
        )
    if not obj.flags.c_contiguous:
        raise ValueError(
            f"expected {name} to be C-contiguous (row-major), got strides {obj.strides}; "
            "pass np.ascontiguousarray(...)"
        )
    if not obj.flags.writeable:
        raise ValueError(f"expected {name} to be writeable: the kernel's results are copied back")
    return DeviceArray(0, obj.shape, obj.strides, obj.dtype.name, obj.itemsize, obj)


def upload(array: DeviceArray) -> None:
    """Gives a host (numpy) array its device copy."""
    if array.host is None or array.pointer:
        return
    array.pointer = int(call("cuMemAlloc", max(array.nbytes, 1)))
    call("cuMemcpyHtoD", array.pointer, array.host.ctypes.data, array.nbytes)


def _on_cuda_device(obj: Any) -> bool:
    """Whether `obj` is a DLPack array in CUDA memory (kDLCUDA = 2, kDLCUDAManaged = 13)."""
    try:
        device_type, _ = obj.__dlpack_device__()
    except Exception:
        return False
    return int(device_type) in (2, 13)


def _from_dlpack(obj: Any, name: str) -> Any:
    for module in ("torch", "cupy"):
        try:
            lib = __import__(module)
        except ImportError:
            continue
        return lib.from_dlpack(obj)
    raise ValueError(
        f"expected {name} with __cuda_array_interface__, or DLPack with CuPy or PyTorch "
        "installed to read it"
    )
