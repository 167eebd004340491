"""Encoding a `CUtensorMap` for a tensor-map parameter of the ABI: `cuTensorMapEncodeTiled`, or
`cuTensorMapEncodeIm2col` for an im2col map; and the image of a tensor-map workspace (the map
in each of its slots)."""

from __future__ import annotations

import ctypes
import struct
from typing import Any

from facts import hardware as hw
from facts.abi import Im2colMapParam, TensorMapParam, TensorMapWorkspaceParam
from runtime.arrays import DeviceArray
from runtime.driver import DeviceFacts, call
from runtime.errors import ArgumentError

SWIZZLES = {16: "NONE", 32: "32B", 64: "64B", 128: "128B"}

PACKED_BITS = {"16U4": 4, "16U6": 6}
"""The bits of a packed map type's values, by its name's start."""
ALIGN16_BYTES = 32
"""cuda.h: an ALIGN16B map's global address is 32-byte aligned, its strides multiples of 32."""


def swizzle_name(param: TensorMapParam) -> str:
    """The `CU_TENSOR_MAP_SWIZZLE_*` name (without its prefix) of a map's swizzle: its span,
    and sm_100's larger atoms of the 128-byte span (`128B_ATOM_32B`, `128B_ATOM_32B_FLIP_8B`,
    `128B_ATOM_64B`; cuda.h 12.8)."""
    name = SWIZZLES[param.swizzle]
    if param.swizzle_atom != 16:
        name += f"_ATOM_{param.swizzle_atom}B"
    return name + ("_FLIP_8B" if param.swizzle_flip else "")


L2_PROMOTIONS = {0: "NONE", 64: "L2_64B", 128: "L2_128B", 256: "L2_256B"}
"""`CU_TENSOR_MAP_L2_PROMOTION_*` of the ABI's `l2_promotion` (bytes; 0: none)."""


def check_written_extent(array: DeviceArray, name: str) -> None:
    """A TMA store or reduction writes whole 16-byte chunks of the innermost dim (rule TR19,
    measured on an H200): into an array whose innermost extent is not a multiple of 16 bytes
    it would also write the bytes after each innermost row, which are not the array's."""
    extent = array.shape[-1]
    row = extent * array.itemsize
    if row % hw.STORE_CHUNK_BYTES:
        chunk = max(1, hw.STORE_CHUNK_BYTES // array.itemsize)
        padded = -(-extent // chunk) * chunk
        raise ArgumentError(
            f"expected {name}, which a TMA store or reduction writes, to have an innermost "
            f"extent of a multiple of 16 bytes, got {extent} elements of {array.itemsize} "
            f"bytes ({row} bytes): TMA writes whole 16-byte chunks and would overwrite the "
            f"{padded * array.itemsize - row} bytes after each innermost row; fix: pad the "
            f"innermost dimension to a multiple of {chunk} elements ({padded} here) and pass "
            "the padded array"
        )


def check_tensor_map_array(array: DeviceArray, param: TensorMapParam, name: str) -> None:
    """What TMA needs of the array (docs/hardware.md, TR4): a 16-byte aligned base, strides that
    are multiples of 16 bytes below 2**40, a unit innermost stride, 1..5 dims of at most
    2**32 elements; and, where a store or reduction writes through the map, an innermost
    extent of a multiple of 16 bytes (checked before the strides: its fix mends them too)."""
    rank = param.rank
    if len(array.shape) != rank:
        raise ArgumentError(f"expected {name} of rank {rank} for its tensor map, got {array.shape}")
    if array.pointer % hw.GLOBAL_ADDRESS_ALIGNMENT:
        raise ArgumentError(
            f"expected {name}'s address to be 16-byte aligned for TMA, got {array.pointer:#x}"
        )
    if param.dtype.endswith("ALIGN16B") and (
        array.pointer % ALIGN16_BYTES or any(s % ALIGN16_BYTES for s in array.strides[:-1])
    ):
        raise ArgumentError(
            f"expected {name}'s address and row strides to be multiples of 32 bytes for its "
            f"{param.dtype} tensor map (cuda.h), got {array.pointer:#x} and {array.strides}"
        )
    if array.strides[-1] != array.itemsize:
        raise ArgumentError(
            f"expected {name}'s innermost stride to be one element ({array.itemsize} bytes) "
            f"for TMA, got {array.strides[-1]} bytes"
        )
    if param.written:
        check_written_extent(array, name)
    for i, stride in enumerate(array.strides[:-1]):
        if stride % hw.GLOBAL_STRIDE_MULTIPLE or not 0 <= stride < hw.MAX_GLOBAL_STRIDE:
            raise ArgumentError(
                f"expected {name}'s byte strides to be non-negative multiples of 16 below "
                f"2**40 for TMA, got {stride} at dim {i} (strides {array.strides})"
            )
    for i, size in enumerate(array.shape):
        if not 1 <= size <= hw.MAX_GLOBAL_DIM:
            raise ArgumentError(f"expected {name}'s dims in [1, 2**32] for TMA, got {size} at {i}")


def encode(array: DeviceArray, param: TensorMapParam) -> Any:
    """The `CUtensorMap` of `array` for one ABI tensor-map entry (box, swizzle, oob, dtype,
    L2 promotion; an im2col map's corners, channels, pixels and traversal strides). Every
    list goes to the driver innermost dim first."""
    from cuda.bindings import driver

    rank = len(array.shape)
    # A packed map's dims count its 4- or 6-bit values (cuda.h), the array's innermost dim
    # bytes.
    bits = PACKED_BITS.get(param.dtype[:4], 8)
    elements = (*array.shape[:-1], array.shape[-1] * 8 // bits)
    dims = [driver.cuuint64_t(d) for d in reversed(elements)]
    # The driver wants rank - 1 strides; for rank 1 it still rejects NULL (TR1,
    # docs/hardware.md).
    strides = [driver.cuuint64_t(s) for s in reversed(array.strides[:-1])] or [
        driver.cuuint64_t(array.nbytes)
    ]
    dtype = getattr(driver.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{param.dtype}")
    swizzle = getattr(driver.CUtensorMapSwizzle, f"CU_TENSOR_MAP_SWIZZLE_{swizzle_name(param)}")
    promotion = getattr(
        driver.CUtensorMapL2promotion,
        f"CU_TENSOR_MAP_L2_PROMOTION_{L2_PROMOTIONS[param.l2_promotion]}",
    )
    fill = driver.CUtensorMapFloatOOBfill
    oob = (
        fill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
        if param.oob == "nan"
        else fill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
    )
    interleave = driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE
    if isinstance(param, Im2colMapParam):
        return call(
            "cuTensorMapEncodeIm2col",
            dtype,
            rank,
            array.pointer,
            dims,
            strides,
            [*reversed(param.lower)],
            [*reversed(param.upper)],
            param.channels,
            param.pixels,
            [driver.cuuint32_t(s) for s in reversed(param.element_strides)],
            interleave,
            swizzle,
            promotion,
            oob,
        )
    return call(
        "cuTensorMapEncodeTiled",
        dtype,
        rank,
        array.pointer,
        dims,
        strides,
        [driver.cuuint32_t(b) for b in reversed(param.box)],
        [driver.cuuint32_t(1)] * rank,
        interleave,
        swizzle,
        promotion,
        oob,
    )


TENSOR_MAP_BYTES = 128
"""A `CUtensorMap`: 128 bytes (16 64-bit words), 64-byte aligned."""


def map_bytes(tensor_map: Any) -> bytes:
    """The 128 bytes of an encoded `CUtensorMap` (its opaque words)."""
    words = getattr(tensor_map, "opaque", None)
    if words is not None:
        return struct.pack(f"<{TENSOR_MAP_BYTES // 8}Q", *(int(w) for w in words))
    return ctypes.string_at(tensor_map.getPtr(), TENSOR_MAP_BYTES)


SMALL_MAP_SPAN = 128 * 1024
"""A map over fewer bytes than this may be misencoded by an affected driver (below)."""
SMALL_MAP_FIXED_DRIVER = 13020
"""The first driver version that CUTLASS and Triton no longer patch (CUDA 13.2)."""
SMALL_MAP_WORD, SMALL_MAP_BIT = 1, 21
"""The bit to clear: bit 21 of the map's 64-bit word 1 (bit 85 of the 128 bytes)."""
BLACKWELL_MAJORS = (10, 11, 12)
"""Compute capabilities of Blackwell GPUs (sm_100/sm_103, sm_110, sm_120/sm_121)."""


def small_map_fix(device: DeviceFacts) -> bool:
    """Whether maps encoded for `device` need the small-tensor driver workaround: NVIDIA's
    data-center driver release notes (595.71.05, Known Issues) say `cuTensorMapEncodeTiled`
    and `cuTensorMapEncodeIm2col*` on Blackwell GPUs may misconfigure the map of a tensor
    whose memory is under 128 KiB (sporadic illegal memory accesses or MMU faults), and that
    clearing bit 85 of the encoded map works around it. CUTLASS and Triton (triton#9235) clear
    it where `cuDriverGetVersion` is at most 13010 (CUDA 13.1); the bit belongs to Blackwell's
    map layout, so only Blackwell devices are patched. A device whose driver version was not
    asked (facts made by hand) is not patched."""
    version = device.driver_version
    return (
        device.compute_capability[0] in BLACKWELL_MAJORS
        and version is not None
        and version < SMALL_MAP_FIXED_DRIVER
    )


def map_image(array: DeviceArray, param: TensorMapParam, fix: bool) -> bytes:
    """The 128 bytes of `array`'s map for `param` (`encode`); where `fix` (`small_map_fix` of
    the device, derived once per launch) and the array's elements span fewer than 128 KiB
    (from the lowest to one past the highest byte, as Triton measures it), with bit 85
    cleared."""
    image = map_bytes(encode(array, param))
    low, high = array.span
    if not fix or high - low >= SMALL_MAP_SPAN:
        return image
    words = list(struct.unpack(f"<{TENSOR_MAP_BYTES // 8}Q", image))
    words[SMALL_MAP_WORD] &= ~(1 << SMALL_MAP_BIT)
    return struct.pack(f"<{TENSOR_MAP_BYTES // 8}Q", *words)


def workspace_image(initial: bytes, param: TensorMapWorkspaceParam) -> bytes:
    """What a workspace holds at launch: the initial map in each of its slots."""
    if len(initial) != TENSOR_MAP_BYTES:
        raise ArgumentError(
            f"expected a tensor map of {TENSOR_MAP_BYTES} bytes, got {len(initial)} bytes"
        )
    if param.slots < 1:
        raise ArgumentError(f"expected a workspace of at least one slot, got {param.slots}")
    return initial * param.slots
