"""GMEM arguments of a strided layout, without a GPU: the ABI records the layout's strides
(format 6) and reads older records as row-major; the runtime takes exactly those strides
(views of padded arrays), says which padded array fits where they differ, passes device
views in place, encodes tensor maps from the layout's strides, and copies a numpy view in as
the span it covers and back element by element (a fake driver stands for the GPU)."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest
from xdsl.parser import Parser

from copy_tools.universe import make_context
from facts.abi import ABI_FORMAT, KernelAbi, ModuleAbi, PointerParam, TensorMapParam
from passes.pipeline import compile_module
from runtime import Program, arrays
from runtime.arrays import DeviceArray
from runtime.kernel import Kernel, describe_param, direct_parameters, padded_shape
from runtime.tensor_map import check_tensor_map_array
from tests.runtime.test_strided_arguments_gpu import KERNELS, X_PITCH, Y_PITCH


def program(source: str) -> Program:
    compiled = compile_module(Parser(make_context(), source).parse_module(), make_context())
    return Program(compiled.cubin, compiled.abi)


def kernel(name: str) -> Kernel:
    return program(KERNELS[name][0]()).kernel()


TMA_ANY_PITCH = """builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @any_pitch(%x: memref<64x60xf32, strided<[?, 1]>>)
      attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %buf = copy.alloc_smem : memref<16x60xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0]
      : memref<64x60xf32, strided<[?, 1]>> to memref<16x60xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    func.return
  }
}"""


class FakeDeviceArray:
    """A device view (`__cuda_array_interface__`) at a given address, never dereferenced."""

    def __init__(self, pointer: int, shape: tuple[int, ...], strides: tuple[int, ...] | None):
        self.__cuda_array_interface__ = {
            "data": (pointer, False),
            "shape": shape,
            "typestr": "<f4",
            "strides": strides,
            "version": 3,
        }


# -- the ABI record ------------------------------------------------------------------------


def test_the_abi_round_trips_with_strides():
    params = (
        PointerParam(0, "f32", (64, 60), 1, (64, 1)),
        PointerParam(1, "f32", (-1, -1), 4, (72, 1)),
        PointerParam(2, "f32", (64, 60), 1, (-1, 1)),
        PointerParam(3, "f32", (64, 64)),
    )
    abi = ModuleAbi("sm_90a", {"k": KernelAbi("k", params, 0, (1, 1, 1))})
    text = abi.to_json()
    assert ABI_FORMAT == 6
    assert f'"format": {ABI_FORMAT}' in text
    assert ModuleAbi.from_json(text) == abi
    entries = abi.to_dict()["kernels"]["k"]["params"]
    assert [e.get("strides") for e in entries] == [[64, 1], [72, 1], [-1, 1], None]
    assert [p.layout for p in params] == [
        "strided<[64, 1]>", "strided<[72, 1]>", "strided<[?, 1]>", "row-major",
    ]  # fmt: skip


def test_a_format_5_record_reads_as_row_major():
    old = {
        "format": 5,
        "target": "sm_80",
        "kernels": {
            "k": {
                "name": "k",
                "params": [
                    {"kind": "pointer", "arg": 0, "element": "f32", "shape": [-1, -1], "align": 4}
                ],
                "smem_bytes": 0,
                "cluster": [1, 1, 1],
            }
        },
    }
    (param,) = ModuleAbi.from_dict(old).kernels["k"].params
    assert param == PointerParam(0, "f32", (-1, -1), 4)
    assert param.strides is None


@pytest.mark.parametrize(
    ("strides", "expected"),
    [
        ([64], r"'strides' is of type list of 2 int"),
        ([64, "1"], r"'strides' is of type list of int"),
    ],
)
def test_malformed_strides_say_to_recompile(strides, expected):
    entry = {"kind": "pointer", "arg": 0, "element": "f32", "shape": [64, 60], "strides": strides}
    with pytest.raises(ValueError, match=expected + r" \(kernel ABI format 6\).*recompile"):
        PointerParam.from_dict(entry)


def test_the_compiled_kernels_record_their_layouts():
    for name in KERNELS:
        x, y = kernel(name).arguments
        assert (x.strides, y.strides) == ((X_PITCH, 1), (Y_PITCH, 1)), name
    (x,) = program(TMA_ANY_PITCH).kernel().arguments
    assert x.strides == (-1, 1)
    assert describe_param(x) == "f32[64, 60] strided<[?, 1]>"


def test_a_row_major_layout_spelled_out_records_nothing():
    source = KERNELS["threads"][0]().replace(f"strided<[{X_PITCH}, 1]>", "strided<[60, 1]>")
    x, y = program(source).kernel().arguments
    assert x.strides is None
    assert y.strides == (Y_PITCH, 1)


# -- the runtime's argument checks ---------------------------------------------------------


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_a_contiguous_array_is_refused_with_the_padded_array_that_fits(name):
    k = kernel(name)
    contiguous = np.zeros((130, 60), np.float32)
    y = np.zeros((130, Y_PITCH), np.float32)[:, :60]
    message = (
        f"expected argument 0 of {k.name} with strides ({X_PITCH}, 1) elements (its layout "
        f"strided<[{X_PITCH}, 1]>), got (60, 1) elements; pass a view of a (130, {X_PITCH}) "
        "array, e.g. padded[:, :60]"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        k.check_arguments([contiguous, y])


def test_a_view_of_another_pitch_is_refused():
    k = kernel("cp_async")
    x = np.zeros((130, 64), np.float32)[:, :60]
    y = np.zeros((130, Y_PITCH), np.float32)[:, :60]
    with pytest.raises(ValueError, match=r"strides \(68, 1\) elements .* got \(64, 1\) elements"):
        k.check_arguments([x, y])


def test_views_of_padded_arrays_are_taken_with_the_layouts_strides():
    k = kernel("tma")
    x = np.zeros((130, X_PITCH), np.float32)[:, 4:64]
    y = np.zeros((130, Y_PITCH), np.float32)[:, :60]
    described = k.check_arguments([x, y])
    assert [a.strides for a in described] == [(X_PITCH * 4, 4), (Y_PITCH * 4, 4)]
    assert [a.host is v for a, v in zip(described, (x, y), strict=True)] == [True, True]


def test_a_row_major_argument_still_takes_only_contiguous_arrays():
    source = KERNELS["threads"][0]().replace(f", strided<[{X_PITCH}, 1]>", "")
    k = program(source).kernel()
    y = np.zeros((130, Y_PITCH), np.float32)[:, :60]
    k.check_arguments([np.zeros((130, 60), np.float32), y])
    view = np.zeros((130, 64), np.float32)[:, :60]
    with pytest.raises(
        ValueError,
        match=re.escape(
            "expected argument 0 of strided_threads to be C-contiguous (row-major, the kernel's "
            "layout), got strides (256, 4) bytes; pass np.ascontiguousarray(...), or give the "
            "kernel's argument the layout strided<[64, 1]>"
        ),
    ):
        k.check_arguments([view, y])


def test_device_views_are_used_in_place():
    k = kernel("threads")
    x = FakeDeviceArray(0x10010, (130, 60), (X_PITCH * 4, 4))
    y = FakeDeviceArray(0x20000, (130, 60), (Y_PITCH * 4, 4))
    described = k.check_arguments([x, y])
    assert direct_parameters(k.abi, described) == {
        0: (0x10010, ctypes.c_void_p),
        1: (0x20000, ctypes.c_void_p),
    }
    contiguous = FakeDeviceArray(0x10000, (130, 60), None)
    with pytest.raises(ValueError, match=r"argument 0 of strided_threads with strides \(68, 1\)"):
        k.check_arguments([contiguous, y])


def test_dims_of_size_one_take_any_stride_and_get_the_layouts():
    source = KERNELS["tma"][0]().replace("130x60", "1x60")
    k = program(source).kernel()
    x = FakeDeviceArray(0x10000, (1, 60), (240, 4))  # a contiguous row: no other row
    y = FakeDeviceArray(0x20000, (1, 60), (999, 4))
    described = k.check_arguments([x, y])
    assert [a.strides for a in described] == [(X_PITCH * 4, 4), (Y_PITCH * 4, 4)]


def test_a_question_mark_stride_takes_the_arrays_own_for_its_tensor_map():
    k = program(TMA_ANY_PITCH).kernel()
    (described,) = k.check_arguments([FakeDeviceArray(0x10000, (64, 60), (288, 4))])
    assert described.strides == (288, 4)
    (map_param,) = k.abi.tensor_maps
    check_tensor_map_array(described, map_param, "x")
    with pytest.raises(ValueError, match=r"multiples of 16 below 2\*\*40 for TMA, got 248"):
        k.check_arguments([np.zeros((64, 62), np.float32)[:, :60]])
    with pytest.raises(ValueError, match=r"strides \(\?, 1\) elements .* got \(120, 2\)"):
        k.check_arguments([np.zeros((64, 120), np.float32)[:, ::2]])


def test_a_tensor_map_of_a_negative_stride_is_refused():
    array = DeviceArray(0x10000, (64, 60), (-288, 4), "float32", 4)
    entry = TensorMapParam(0, (16, 60), 16, "zeros", "FLOAT32", False)
    with pytest.raises(ValueError, match=r"non-negative multiples of 16 .* got -288 at dim 0"):
        check_tensor_map_array(array, entry, "x")


@pytest.mark.parametrize(
    ("shape", "strides", "expected"),
    [
        ((64, 60), (64, 1), (64, 64)),
        ((4, 5, 6), (80, 8, 1), (4, 10, 8)),
        ((64, 60), (64, 2), None),  # no unit innermost stride
        ((64, 60), (62, 4), None),  # 62 is no multiple of 4
        ((64, 60), (50, 1), None),  # rows overlap
    ],
)
def test_the_padded_array_a_layout_is_the_corner_of(shape, strides, expected):
    assert padded_shape(shape, strides) == expected


# -- a numpy view's device copy, with a fake driver ----------------------------------------


class FakeDriver:
    """Device memory in host buffers: cuMemAlloc, the copies both ways and cuMemFree."""

    def __init__(self):
        self.buffers: dict[int, ctypes.Array] = {}

    def __call__(self, name: str, *args):
        if name == "cuMemAlloc":
            buffer = ctypes.create_string_buffer(args[0])
            self.buffers[ctypes.addressof(buffer)] = buffer
            return ctypes.addressof(buffer)
        if name in ("cuMemcpyHtoD", "cuMemcpyDtoH"):
            destination, source, size = args
            ctypes.memmove(destination, source, size)
            return None
        if name == "cuMemFree":
            del self.buffers[args[0]]
            return None
        raise AssertionError(f"unexpected driver call {name}")


@pytest.mark.parametrize("start", [0, 3])
def test_a_numpy_view_is_copied_in_as_its_span_and_back_element_by_element(monkeypatch, start):
    driver = FakeDriver()
    monkeypatch.setattr(arrays, "call", driver)
    padded = np.arange(6 * 10, dtype=np.float32).reshape(6, 10)
    before = padded.copy()
    view = padded[1:5, start : start + 6]
    (array,) = kernel_array(view)
    arrays.upload(array)
    ((allocation, buffer),) = driver.buffers.items()
    assert len(buffer) == (3 * 10 + 6) * 4  # from view[0, 0] to view[-1, -1]: rows and gaps
    device = np.frombuffer(buffer, np.float32)
    assert np.array_equal(device, before.ravel()[10 + start : 10 + start + 36])
    assert array.pointer == allocation
    device[:] = -1.0  # the kernel writes the view, and (a stray) the gaps between its rows
    array.release()
    assert not driver.buffers
    assert (view == -1.0).all()
    outside = np.ones(padded.shape, bool)
    outside[1:5, start : start + 6] = False
    assert np.array_equal(padded[outside], before[outside])


def test_a_contiguous_numpy_array_is_copied_whole(monkeypatch):
    driver = FakeDriver()
    monkeypatch.setattr(arrays, "call", driver)
    host = np.zeros((4, 6), np.float32)
    (array,) = kernel_array(host)
    arrays.upload(array)
    ((_, buffer),) = driver.buffers.items()
    assert len(buffer) == host.nbytes
    np.frombuffer(buffer, np.float32)[:] = 2.0
    array.release()
    assert (host == 2.0).all()


def kernel_array(host: np.ndarray) -> list[DeviceArray]:
    """`host` described as the runtime describes an argument (no checks against an ABI)."""
    return [arrays.device_array(host, "argument 0")]
