"""Rule TR19 without a GPU: a TMA store or reduction into a tensor whose innermost extent is
not a multiple of 16 bytes overwrites the bytes after it, so the verifier rejects static
extents, the ABI says which tensor maps are written, and the runtime refuses such arrays
before the launch (the GPU side is tests/dialect/test_store_overrun_gpu.py)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from facts.abi import ABI_FORMAT, TensorMapParam
from frontends import kernels
from passes.pipeline import compile_module
from runtime import Program
from runtime.arrays import DeviceArray
from runtime.tensor_map import check_tensor_map_array, check_written_extent

ITEMSIZE = {"f32": 4, "f16": 2, "i8": 1}

# Measured on an H200 (1-D tensors of n elements at the start of a larger buffer, one 64-byte
# box stored at 0): elements overwritten after the tensor.
OVERRUN = {
    ("f32", 1): 3,
    ("f32", 3): 1,
    ("f32", 5): 3,
    ("f32", 10): 2,
    ("f32", 13): 3,
    ("f16", 1): 7,
    ("f16", 10): 6,
    ("f16", 31): 1,
    ("i8", 1): 15,
    ("i8", 10): 6,
    ("i8", 31): 1,
}


def copy_kernel(gmem: str, smem: str, indices: str, direction: str, extra: str = "") -> str:
    """One TMA copy between GMEM `gmem` and an SMEM tile `smem` (a store unless
    `direction` is "load")."""
    load = direction == "load"
    bar = "%bar = copy.barrier_init arrivals 1 : !copy.barrier<1>" if load else ""
    copy = (
        f"copy.async_copy %x[{indices}] to %buf barrier %bar[%c0]{extra} : {gmem} to {smem}, "
        "!copy.barrier<1>"
        if load
        else f"copy.async_copy %buf to %x[{indices}]{extra} : {smem} to {gmem}"
    )
    return f"""
func.func @k(%x: {gmem}) attributes {{copy.target = #copy.target<"sm_90a">}} {{
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : {smem}
  {bar}
  {copy}
  func.return
}}
"""


def verify(text: str) -> CopyVerifyException | None:
    module = Parser(make_context(), text).parse_module()
    try:
        module.verify()
    except CopyVerifyException as error:
        return error
    return None


def error_of(text: str) -> tuple[str, str]:
    """The message and note of the error the module must give."""
    error = verify(text)
    if error is None:
        pytest.fail("the module verifies")
    return str(error), str(error.note)


# Stores of every measured case, and reductions where the type takes one (i8 takes none).
CASES = [(d, n, r) for d, n in sorted(OVERRUN) for r in ["", " reduce add"][: 1 + (d != "i8")]]


@pytest.mark.parametrize(("dtype", "n", "reduce"), CASES, ids=str)
def test_verifier_rejects_what_the_h200_overran(dtype, n, reduce):
    box = 64 // ITEMSIZE[dtype]
    smem = f"memref<{box}x{dtype}, #copy.smem>"
    message, note = error_of(copy_kernel(f"memref<{n}x{dtype}>", smem, "%c0", "store", reduce))
    over = OVERRUN[dtype, n] * ITEMSIZE[dtype]
    assert f"got {n} elements of {dtype} ({n * ITEMSIZE[dtype]} bytes)" in message
    assert f"which overwrites {over} bytes after each innermost row" in message
    assert f"pad the innermost dimension to a multiple of {16 // ITEMSIZE[dtype]}" in note


@pytest.mark.parametrize("dtype", sorted(ITEMSIZE))
def test_extents_of_whole_chunks_store_and_everything_loads(dtype):
    box = 64 // ITEMSIZE[dtype]
    smem = f"memref<{box}x{dtype}, #copy.smem>"
    for chunks in (1, 3, 5):  # not multiples of the box: the stores are clipped
        n = chunks * 16 // ITEMSIZE[dtype]
        assert verify(copy_kernel(f"memref<{n}x{dtype}>", smem, "%c0", "store")) is None
    for n in (1, 3, 31):  # reading past the extent is harmless: loads zero-fill it
        assert verify(copy_kernel(f"memref<{n}x{dtype}>", smem, "%c0", "load")) is None


def test_every_rank_and_one_error_per_mistake():
    smem = "memref<8x16x4xf32, #copy.smem>"
    # A view of 3 columns of a 4-column array: rows 16 bytes apart (C1 holds), each row's
    # chunk overwrites the column after the view.
    view = "memref<8x16x3xf32, strided<[64, 4, 1]>>"
    message, _ = error_of(copy_kernel(view, smem, "%c0, %c0, %c0", "store", " reduce add"))
    assert "got 3 elements of f32 (12 bytes)" in message
    # Contiguous 12-byte rows also break C1; TR19 is reported, and its fix mends both.
    message, _ = error_of(copy_kernel("memref<8x16x3xf32>", smem, "%c0, %c0, %c0", "store"))
    assert "whole 16-byte chunks" in message
    assert verify(copy_kernel("memref<8x16x4xf32>", smem, "%c0, %c0, %c0", "store")) is None
    # A row stride that is not 16 bytes with a legal extent is C1 alone.
    strided = "memref<8x4xf32, strided<[5, 1]>>"
    message, _ = error_of(copy_kernel(strided, "memref<8x4xf32, #copy.smem>", "%c0, %c0", "store"))
    assert message.startswith("async_copy requires all GMEM strides except the last one")
    # Dynamic extents are the runtime's.
    dynamic = copy_kernel("memref<?xf32>", "memref<16xf32, #copy.smem>", "%c0", "store")
    assert verify(dynamic) is None


def program(module) -> Program:
    compiled = compile_module(module, make_context())
    return Program(compiled.cubin, compiled.abi)


def test_the_abi_says_which_maps_are_written():
    for reduce in (None, "add"):
        abi = program(kernels.tma_copy((0, 0), "f32", dynamic=True, reduce=reduce)).kernel().abi
        maps = [p for p in abi.params if p.kind == "tensor_map"]
        assert [(m.arg, m.written) for m in maps] == [(0, False), (1, True)]


def array(shape: tuple[int, ...], itemsize: int = 4) -> DeviceArray:
    strides, stride = [], itemsize
    for d in reversed(shape):
        strides.insert(0, stride)
        stride *= d
    return DeviceArray(0x1000, shape, tuple(strides), "float32", itemsize)


@pytest.mark.parametrize(("dtype", "n"), sorted(OVERRUN), ids=str)
def test_runtime_refuses_arrays_a_store_would_overrun(dtype, n):
    itemsize = ITEMSIZE[dtype]
    with pytest.raises(ValueError, match="TMA store or reduction writes") as info:
        check_written_extent(array((n,), itemsize), "y")
    message = str(info.value)
    assert message.startswith("expected y")
    assert f"got {n} elements of {itemsize} bytes" in message
    assert f"overwrite the {OVERRUN[dtype, n] * itemsize} bytes after" in message
    assert "fix: pad the innermost dimension" in message
    check_written_extent(array((n + OVERRUN[dtype, n],), itemsize), "y")  # the padded array


def test_runtime_checks_only_written_maps_and_the_extent_before_the_strides():
    read = TensorMapParam(0, (16,), 16, "zeros", "FLOAT32", written=False)
    written = TensorMapParam(1, (16,), 16, "zeros", "FLOAT32", written=True)
    check_tensor_map_array(array((3,)), read, "x")
    with pytest.raises(ValueError, match="got 3 elements"):
        check_tensor_map_array(array((3,)), written, "y")
    # (5, 3) f32: 12-byte rows break the stride rule too, but the extent is named (padding
    # it mends both).
    written_2d = TensorMapParam(1, (16, 16), 16, "zeros", "FLOAT32", written=True)
    with pytest.raises(ValueError, match="innermost extent of a multiple of 16 bytes, got 3"):
        check_tensor_map_array(array((5, 3)), written_2d, "y")
    check_tensor_map_array(array((5, 4)), written_2d, "y")


def test_launch_arguments_are_checked_against_the_written_map():
    kernel = program(kernels.tma_copy((0, 0), "f32", dynamic=True)).kernel()
    kernel.check_arguments([np.zeros((5, 4), np.float32), np.zeros((7, 8), np.float32)])
    with pytest.raises(ValueError, match=r"expected argument 1 of tma_copy, which a TMA store"):
        kernel.check_arguments([np.zeros((5, 4), np.float32), np.zeros((5, 3), np.float32)])


def test_an_abi_without_written_is_refused():
    entry = {"kind": "tensor_map", "arg": 1, "box": [64], "swizzle": 16, "oob": "zeros"}
    entry["dtype"] = "FLOAT32"
    written = rf"'written' is of type bool \(kernel ABI format {ABI_FORMAT}\)"
    with pytest.raises(ValueError, match=written):
        TensorMapParam.from_dict(entry)
    assert TensorMapParam.from_dict({**entry, "written": True}).written is True
