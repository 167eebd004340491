"""TMA stores and reductions never write past the tensor (rule TR19), on a GPU (an H200).

A TMA store clipped at the tensor's innermost extent still writes the whole 16-byte chunk
that holds the extent's end. Each kernel here stores (or reduces) into a view at the start
of a larger device buffer whose remaining elements are a sentinel: a legal store (innermost
extent a multiple of 16 bytes, but not of the box, so the boxes are clipped) leaves the
sentinel untouched and the tensor exact; an illegal one (a dynamic extent that is not a
multiple of 16 bytes) is refused with a ValueError before the launch and writes nothing.

The device buffers (`__cuda_array_interface__`, PyTorch) need a GPU. A numpy buffer runs
everywhere (without a GPU, under the interpreter): its view is copied in and back, so it
checks the tensor and the refusal, but an overrun past the view cannot show in it (the
sentinel after the tensor is checked all the same).

`test_kernels_compile` needs no GPU: it compiles every kernel the GPU tests launch.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from math import ceil, prod
from typing import Any

import numpy as np
import pytest

from copy_tools import runtime
from frontends import kernels
from runtime.driver import call, device, synchronize
from tests import device as test_device

TARGET = "sm_90a"
NUMPY = {"f32": np.float32, "f16": np.float16, "i8": np.int8}
SPARE = 256
"""Sentinel bytes after the tensor in its buffer."""

ON_DEVICE = pytest.mark.skipif(
    not test_device.GPU, reason="no CUDA driver or GPU here, and a device buffer needs one"
)
KINDS = [
    pytest.param("cuda_array_interface", marks=ON_DEVICE),
    pytest.param("torch", marks=ON_DEVICE),
    "numpy",
]


def store_1d(n: int | None, dtype: str, box: int, reduce: str | None = None) -> str:
    """`y = x` (or `y <reduce>= x`) over a 1-D array of n elements (None: dynamic), one box
    per block: a TMA load (zero-filled past n) and a TMA store (clipped at n)."""
    ref = f"memref<{'?' if n is None else n}x{dtype}>"
    tile = f"memref<{box}x{dtype}, #copy.smem>"
    reduction = f" reduce {reduce}" if reduce else ""
    kernel = "gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>"
    return f"""
builtin.module attributes {{copy.target = #copy.target<"{TARGET}">}} {{
  func.func @store_1d(%x: {ref}, %y: {ref}) attributes {{{kernel}}} {{
    %c0 = arith.constant 0 : index
    %box = arith.constant {box} : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %i = arith.muli %bx, %box : index
    %tile = copy.alloc_smem : {tile}
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%i] to %tile barrier %bar[%c0] : {ref} to {tile}, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%i]{reduction} : {tile} to {ref}
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}
"""


# (n, dtype, box): n * size a multiple of 16 bytes, not of the box (the last box is clipped).
LEGAL_1D = [(20, "f32", 16), (1000, "f32", 64), (40, "f16", 32), (200, "f16", 64), (48, "i8", 32)]
# (shape, dtype, tile): the innermost extent a multiple of 16 bytes, neither dim of the tile.
LEGAL_2D = [((70, 20), "f32", (16, 16)), ((50, 24), "f16", (32, 16)), ((33, 48), "i8", (16, 32))]
# (n, dtype): extents the H200 overran (1 to 15 bytes after the tensor).
ILLEGAL_1D = [(3, "f32"), (13, "f32"), (10, "f16"), (31, "f16"), (1, "i8"), (10, "i8")]


def random_bits(count: int, dtype: str, seed: int) -> np.ndarray:
    """Random bit patterns, none of them zero (the overrun writes the box's zero fill)."""
    width = np.dtype(NUMPY[dtype]).itemsize
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32}[width]
    rng = np.random.default_rng(seed)
    bits = rng.integers(1, 2 ** (8 * width), size=count, dtype=np.uint64).astype(unsigned)
    return bits.view(NUMPY[dtype])


def random_values(count: int, dtype: str, seed: int) -> np.ndarray:
    """Random nonzero finite values, for reductions (numpy's sum is the model)."""
    values = np.random.default_rng(seed).standard_normal(count) * 100
    return np.where(values == 0, 1.0, values).astype(NUMPY[dtype])


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32}[a.itemsize]
    return a.shape == b.shape and bool(np.array_equal(a.view(unsigned), b.view(unsigned)))


class CudaBuffer:
    """A device buffer shown to the runtime through `__cuda_array_interface__`, as CuPy or
    Numba would: a view of its first elements is passed in place, not copied."""

    def __init__(self, host: np.ndarray):
        device()
        self.dtype, self.size = host.dtype, host.size
        self.pointer = int(call("cuMemAlloc", host.nbytes))
        call("cuMemcpyHtoD", self.pointer, host.ctypes.data, host.nbytes)

    def view(self, shape: tuple[int, ...]) -> Any:
        interface = {
            "shape": shape,
            "typestr": self.dtype.str,
            "data": (self.pointer, False),
            "strides": None,
            "version": 3,
        }
        return type("View", (), {"__cuda_array_interface__": interface})()

    def read(self) -> np.ndarray:
        out = np.empty(self.size, self.dtype)
        call("cuMemcpyDtoH", out.ctypes.data, self.pointer, out.nbytes)
        return out

    def free(self) -> None:
        call("cuMemFree", self.pointer)


class TorchBuffer:
    """The same as a PyTorch CUDA tensor: the view is a slice of it (read by `data_ptr()`)."""

    def __init__(self, host: np.ndarray):
        import torch

        self.tensor = torch.from_numpy(host.copy()).cuda()

    def view(self, shape: tuple[int, ...]) -> Any:
        return self.tensor[: prod(shape)].view(*shape)

    def read(self) -> np.ndarray:
        return self.tensor.cpu().numpy()

    def free(self) -> None:
        del self.tensor


class NumpyBuffer:
    """A host buffer: the view is a numpy view of its first elements (the runtime copies it
    in and back, or the interpreter runs on it)."""

    def __init__(self, host: np.ndarray):
        self.array = host.copy()

    def view(self, shape: tuple[int, ...]) -> Any:
        return self.array[: prod(shape)].reshape(shape)

    def read(self) -> np.ndarray:
        return self.array.copy()

    def free(self) -> None:
        pass


@contextmanager
def device_buffer(kind: str, host: np.ndarray) -> Iterator[Any]:
    if kind == "torch":
        pytest.importorskip("torch")
    buffers = {"torch": TorchBuffer, "cuda_array_interface": CudaBuffer, "numpy": NumpyBuffer}
    buffer = buffers[kind](host)
    try:
        yield buffer
    finally:
        buffer.free()


def buffer_for(shape: tuple[int, ...], dtype: str, seed: int, values: bool = False) -> np.ndarray:
    """The buffer's initial contents: the tensor's elements, then SPARE bytes of sentinel."""
    count = prod(shape) + SPARE // np.dtype(NUMPY[dtype]).itemsize
    return random_values(count, dtype, seed) if values else random_bits(count, dtype, seed)


def run_and_check(program, shape, dtype, grid, kind, seed, reduce=False) -> None:
    """x (a numpy array) into a view y of the buffer's first elements; the rest must stay."""
    count = prod(shape)
    make = random_values if reduce else random_bits
    x = make(count, dtype, seed).reshape(shape)
    before = buffer_for(shape, dtype, seed + 1, values=reduce)
    with device_buffer(kind, before.copy()) as buffer:
        program(x, buffer.view(shape), grid=grid)
        after = buffer.read()
    expected = before[:count].reshape(shape) + x if reduce else x
    assert same_bits(after[:count].reshape(shape), expected), "the tensor is wrong"
    assert same_bits(after[count:], before[count:]), "the store wrote past the tensor"


def box_of(dtype: str) -> int:
    """A 64-byte box."""
    return 64 // np.dtype(NUMPY[dtype]).itemsize


def test_kernels_compile():
    """Every kernel the GPU tests launch compiles to a cubin (no GPU needed)."""
    for n, dtype, box in LEGAL_1D:
        for size in (n, None):
            assert runtime.compile(store_1d(size, dtype, box)).cubin
    assert runtime.compile(store_1d(20, "f32", 16, reduce="add")).cubin
    for shape, dtype, tile in LEGAL_2D:
        for dynamic in (False, True):
            module = kernels.tma_copy(shape, dtype, tile, dynamic=dynamic, target=TARGET)
            assert runtime.compile(module).cubin
    for _, dtype in ILLEGAL_1D:
        assert runtime.compile(store_1d(None, dtype, box_of(dtype))).cubin


@pytest.mark.gpu
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize(("n", "dtype", "box"), LEGAL_1D, ids=str)
def test_legal_1d_store_stays_inside(n, dtype, box, dynamic, kind):
    program = runtime.compile(store_1d(None if dynamic else n, dtype, box))
    seed = zlib.crc32(f"{n}{dtype}{dynamic}".encode())
    run_and_check(program, (n,), dtype, (ceil(n / box),), kind, seed)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", KINDS)
def test_legal_1d_reduction_stays_inside(kind):
    program = runtime.compile(store_1d(20, "f32", 16, reduce="add"))
    run_and_check(program, (20,), "f32", (2,), kind, seed=31, reduce=True)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize(("shape", "dtype", "tile"), LEGAL_2D, ids=str)
def test_legal_2d_store_stays_inside(shape, dtype, tile, dynamic, kind):
    program = runtime.compile(kernels.tma_copy(shape, dtype, tile, dynamic=dynamic, target=TARGET))
    seed = zlib.crc32(f"{shape}{dtype}{dynamic}".encode())
    run_and_check(program, shape, dtype, kernels.grid(shape, tile), kind, seed)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("n", "dtype"), ILLEGAL_1D, ids=str)
def test_overrunning_dynamic_store_is_refused_before_launch(n, dtype, kind):
    program = runtime.compile(store_1d(None, dtype, box_of(dtype)))
    x = random_bits(n, dtype, seed=n)
    before = buffer_for((n,), dtype, seed=n + 1)
    with device_buffer(kind, before.copy()) as buffer:
        with pytest.raises(ValueError, match=r"expected argument 1 of store_1d, which a TMA"):
            program(x, buffer.view((n,)), grid=(1,))
        if kind != "numpy":
            synchronize()
        after = buffer.read()
    assert same_bits(after, before), "the refused launch wrote to the buffer"


@pytest.mark.gpu
@pytest.mark.parametrize("kind", [KINDS[0], "numpy"])
def test_overrunning_dynamic_2d_store_is_refused_before_launch(kind):
    # 3 floats a row: the extent, not the 12-byte row stride, is what the error names.
    program = runtime.compile(kernels.tma_copy((0, 0), "f32", (16, 16), dynamic=True))
    shape = (5, 3)
    x = random_bits(20, "f32", 6).reshape(5, 4)  # a legal source: only y is wrong
    before = buffer_for(shape, "f32", seed=5)
    with device_buffer(kind, before.copy()) as buffer:
        with pytest.raises(ValueError, match=r"argument 1 .* multiple of 16 bytes, got 3 elem"):
            program(x, buffer.view(shape), grid=(1, 1))
        after = buffer.read()
    assert same_bits(after, before), "the refused launch wrote to the buffer"
