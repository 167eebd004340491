"""Arrays the runtime accepts, seen as (device pointer, shape, strides, dtype).

- numpy arrays live on the host: they are copied to the device before the launch and back
  after it (`DeviceArray.host`); a view of a padded array as the span it covers, and back
  element by element, never into the gaps between its rows;
- device arrays are used in place, found through `__cuda_array_interface__` (CuPy, Numba,
  JAX, PyTorch) or, for PyTorch tensors, `data_ptr()` (which also covers bfloat16, that the
  interface cannot describe), or DLPack through CuPy or PyTorch (`DeviceArray`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runtime.driver import call
from runtime.errors import ArgumentError

DTYPE_NAMES = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "tf32": "float32",  # stored in 32 bits, as f32 (a tf32 TMA map reads those bits)
    "f64": "float64",
    "f4E2M1FN": "uint8",  # packed: the array is its bytes (PACKED_ELEMENTS)
    "f6E2M3FN": "uint8",
    "f6E3M2FN": "uint8",
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

PACKED_ELEMENTS = {"f4E2M1FN": 4, "f6E2M3FN": 6, "f6E3M2FN": 6}
"""Element types an array holds packed, and their bits: an FP4 array is its bytes, `[..., K /
2]` uint8 for `[..., K]`, an FP6 one `[..., 3 K / 4]`, as the GPU reads them (16U4 and 16U6
tensor maps)."""


def packed_shape(element: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of the array that holds elements of shape `shape`: the innermost dim in bytes
    for a packed type (a dynamic one stays dynamic)."""
    bits = PACKED_ELEMENTS.get(element)
    if bits is None or not shape or shape[-1] < 0:
        return shape
    return (*shape[:-1], shape[-1] * bits // 8)


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
    allocation: int = 0
    """A host array's device copy: the start of the span it covers (`span`)."""

    @property
    def nbytes(self) -> int:
        n = self.itemsize
        for d in self.shape:
            n *= d
        return n

    @property
    def span(self) -> tuple[int, int]:
        """The bytes the array's elements cover, as offsets from its first element: from
        the lowest to one past the highest (a view of a padded array spans the gaps between
        its rows too; empty for an empty array)."""
        if 0 in self.shape:
            return 0, 0
        low = sum(min(0, (d - 1) * s) for d, s in zip(self.shape, self.strides, strict=True))
        high = sum(max(0, (d - 1) * s) for d, s in zip(self.shape, self.strides, strict=True))
        return low, high + self.itemsize

    @property
    def contiguous(self) -> bool:
        return self.strides_match(_contiguous_strides(self.shape, self.itemsize))

    def strides_match(self, strides: tuple[int | None, ...]) -> bool:
        """Whether the array has these byte strides (None: any), but in dims of size 0 or
        1, whose stride no element's address depends on."""
        return all(
            want is None or want == have or d <= 1
            for want, have, d in zip(strides, self.strides, self.shape, strict=True)
        )

    def release(self) -> None:
        """Copy a host array back and free its device copy: a contiguous array at once, a
        view (of a padded array) element by element, never the gaps between its rows."""
        if self.host is None:
            return
        if self.host.flags.c_contiguous:
            call("cuMemcpyDtoH", self.host.ctypes.data, self.pointer, self.nbytes)
        else:
            self.host[...] = self._staged_copy()
        call("cuMemFree", self.allocation)
        self.host = None

    def _staged_copy(self) -> Any:
        """The device copy of a host view, read back into a host buffer of its span and
        seen through the view's strides."""
        import numpy as np

        low, high = self.span
        staging = np.empty(high - low, np.uint8)
        call("cuMemcpyDtoH", staging.ctypes.data, self.allocation, high - low)
        return np.ndarray(
            self.host.shape, self.host.dtype, staging, offset=-low, strides=self.host.strides
        )


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
            raise ArgumentError(f"expected {name} on the GPU or a numpy array, got a CPU tensor")
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
            raise ArgumentError(f"expected {name} of a numeric dtype, got typestr {typestr!r}")
        itemsize = int(typestr[2:])
        shape = tuple(interface["shape"])
        strides = interface.get("strides") or _contiguous_strides(shape, itemsize)
        return DeviceArray(interface["data"][0], shape, tuple(strides), dtype, itemsize)
    import numpy as np

    if not isinstance(obj, np.ndarray):
        raise ArgumentError(
            f"expected {name} to be a numpy array or a device array (DLPack or "
            f"__cuda_array_interface__), got {type(obj).__name__}"
        )
    if not obj.flags.writeable:
        raise ArgumentError(
            f"expected {name} to be writeable: the kernel's results are copied back"
        )
    return DeviceArray(0, obj.shape, obj.strides, obj.dtype.name, obj.itemsize, obj)


def upload(array: DeviceArray) -> None:
    """Gives a host (numpy) array its device copy: of the span its elements cover, at the
    same strides (`DeviceArray.span`)."""
    if array.host is None or array.pointer:
        return
    low, high = array.span  # a view of a padded array: its rows and the gaps between them
    array.allocation = int(call("cuMemAlloc", max(high - low, 1)))
    array.pointer = array.allocation - low
    call("cuMemcpyHtoD", array.allocation, array.host.ctypes.data + low, high - low)


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
    raise ArgumentError(
        f"expected {name} with __cuda_array_interface__, or DLPack with CuPy or PyTorch "
        "installed to read it"
    )
