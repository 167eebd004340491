"""cp.async copies and thread accesses of dynamic-shape GMEM refs, on the CPU: they verify
(a dynamic stride of a strided layout is still H8), lower to PTX and cubins for sm_80, sm_86
and sm_90a with one i64 size parameter per size they read (convert_copy_to_nvvm.dynamic_shapes), the
chunk size picked at run time where the row pitch is dynamic; the ABI records the sizes and
the alignment the runtime checks, round trips, and reads the older formats; the runtime
packs the sizes from the arrays it is given. test_runtime_gpu.py and test_legalize_gpu.py
run the kernels."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.parser import Parser

from analysis.verify import verify_module
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from facts.abi import (
    ABI_FORMAT,
    KernelAbi,
    ModuleAbi,
    PointerParam,
    ScalarParam,
    SizeParam,
    TensorMapParam,
)
from frontends import kernels
from passes.convert_copy_to_nvvm.dynamic_shapes import kernel_shapes
from passes.legalize import CopyLegalizePass
from passes.pipeline import compile_module
from runtime import Program
from runtime.arrays import DeviceArray
from runtime.kernel import direct_parameters

TARGETS = ["sm_80", "sm_86", "sm_90a"]


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def copy_kernel(gmem: str, *, target: str = "sm_80", oob: str = "zeros", more: str = "") -> str:
    """A kernel that cp.async-loads a 16x64 f32 box (f16 for an f16 ref) of `gmem`."""
    element = "f16" if "f16" in gmem else "f32"
    rank = gmem.count("x")
    origin = ", ".join(["%c0"] * rank)
    return f"""builtin.module attributes {{copy.target = #copy.target<"{target}">}} {{
      func.func @k(%x: {gmem}) attributes {{gpu.known_block_size = array<i32: 128, 1, 1>}} {{
        %c0 = arith.constant 0 : index
        %buf = copy.alloc_smem : memref<16x64x{element}, #copy.smem>
        copy.async_copy %x[{origin}] to %buf impl cp_async oob {oob} {more}
            : {gmem} to memref<16x64x{element}, #copy.smem>
        copy.commit_group cp_async
        copy.wait_group cp_async 0
        func.return
      }}
    }}"""


def kernel_fn(module) -> func.FuncOp:
    return next(op for op in module.walk() if isinstance(op, func.FuncOp))


def compiled(module, arch: str | None = None):
    return compile_module(module, make_context(), arch=arch)


# -- verification ----------------------------------------------------------------------


DYNAMIC_REFS = [
    "memref<?x?xf32>",
    "memref<?x64xf32>",
    "memref<64x?xf32>",
    "memref<?x?x?xf16>",
    "memref<?x?xf32, strided<[1024, 1]>>",
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("gmem", DYNAMIC_REFS)
def test_cp_async_of_a_dynamic_ref_verifies(gmem, target):
    verify_module(parse(copy_kernel(gmem, target=target)))


def test_a_dynamic_layout_stride_is_still_h8():
    module = parse(copy_kernel("memref<?x?xf32, strided<[?, 1]>>"))
    with pytest.raises(CopyVerifyException) as info:
        verify_module(module)
    assert info.value.rules == ("H8",)
    assert "drop the strided layout" in str(info.value.note)


# -- what the kernel needs (convert_copy_to_nvvm.dynamic_shapes) -----------------------------------


@pytest.mark.parametrize(
    ("gmem", "oob", "sizes", "align"),
    [
        # Zero fill reads every size; the pitch (size 1) is dynamic: picked at run time.
        ("memref<?x?xf32>", "zeros", ((0, 0), (0, 1)), {0: 4}),
        # In bounds by promise: only the pitch.
        ("memref<?x?xf32>", "promise_in_bounds", ((0, 1),), {0: 4}),
        # A static pitch: the rows' count only; the array aligned to the one chunk (16 bytes).
        ("memref<?x64xf32>", "zeros", ((0, 0),), {0: 16}),
        ("memref<?x64xf32>", "promise_in_bounds", (), {0: 16}),
        ("memref<64x?xf32>", "promise_in_bounds", ((0, 1),), {0: 4}),
        # Static strides in the layout: the sizes bound the zero fill only.
        ("memref<?x?xf32, strided<[1024, 1]>>", "zeros", ((0, 0), (0, 1)), {0: 16}),
        ("memref<?x?xf32, strided<[1024, 1]>>", "promise_in_bounds", (), {0: 16}),
        # Two dynamic strides, the inner of which (size 2) is f16 rows: 4-byte chunks at least.
        ("memref<?x?x?xf16>", "promise_in_bounds", ((0, 1), (0, 2)), {0: 4}),
    ],
)
def test_only_the_sizes_the_kernel_reads_are_parameters(gmem, oob, sizes, align):
    module = parse(copy_kernel(gmem, oob=oob))
    shapes = kernel_shapes(kernel_fn(module))
    assert shapes.sizes == sizes
    assert dict(shapes.align) == align


def test_cache_cg_asks_for_16_byte_rows():
    module = parse(copy_kernel("memref<?x?xf32>", more="cache cg "))
    assert dict(kernel_shapes(kernel_fn(module)).align) == {0: 16}
    ptx = compiled(module).ptx
    assert {
        int(n) for n in re.findall(r"cp\.async\.c[ag]\.shared\.global \[.*?\], \[.*?\], (\d+)", ptx)
    } == {16}


def test_a_tma_copy_of_a_dynamic_ref_needs_no_size():
    module = kernels.tma_copy((0, 0), "f32", dynamic=True)
    assert kernel_shapes(kernel_fn(module)).sizes == ()
    abi = compiled(module).abi.kernels["tma_copy"]
    assert not any(isinstance(p, SizeParam) for p in abi.params)
    assert all(p.align == 1 for p in abi.params if isinstance(p, PointerParam))


# -- lowering to PTX and cubins ----------------------------------------------------------


def chunk_sizes(ptx: str) -> set[int]:
    return {
        int(n) for n in re.findall(r"cp\.async\.c[ag]\.shared\.global \[.*?\], \[.*?\], (\d+)", ptx)
    }


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_dynamic_cp_async_copy_compiles(dtype, target):
    """One kernel for every shape: each size it reads is a `.param .u64` after the
    pointers, the row pitch picks 16-, 8- or 4-byte chunks at run time, and the thread
    stores are addressed and clipped with the sizes."""
    result = compiled(kernels.cp_async_copy((0, 0), dtype, dynamic=True, target=target))
    assert f".target {target}" in result.ptx
    assert result.cubin
    abi = result.abi.kernels["cp_async_copy"]
    assert [type(p) for p in abi.params] == [PointerParam] * 2 + [SizeParam] * 4
    assert [(p.arg, p.dim) for p in abi.params[2:]] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [p.align for p in abi.params[:2]] == [4, 1]  # x is read by cp.async, y stored
    params = re.findall(r"\.param \.u64(?: \.ptr \.global \.align \d+)? (\w+)", result.ptx)
    assert params == [f"cp_async_copy_param_{i}" for i in range(6)]
    assert chunk_sizes(result.ptx) == {16, 8, 4}
    assert "cp.async.mbarrier" not in result.ptx


@pytest.mark.parametrize("target", ["sm_80", "sm_86"])
def test_the_sm80_ptx_assembles_for_the_h200(target):
    """What test_runtime_gpu.py launches: sm_80 and sm_86 PTX assembled for sm_90."""
    module = kernels.cp_async_copy((0, 0), "f32", dynamic=True, target=target)
    result = compiled(module, arch="sm_90")
    assert f".target {target}" in result.ptx
    assert result.abi.arch == "sm_90"
    assert result.cubin


def test_a_static_kernel_is_unchanged():
    """Static shapes take no size parameter and one chunk size, as before; the array the
    cp.async copy reads is asked to be aligned to it (a device view that starts mid-chunk
    would fault)."""
    result = compiled(kernels.cp_async_copy((1000, 1000), "f32"))
    abi = result.abi.kernels["cp_async_copy"]
    assert [type(p) for p in abi.params] == [PointerParam] * 2
    assert [p.align for p in abi.params if isinstance(p, PointerParam)] == [16, 1]
    assert chunk_sizes(result.ptx) == {16}


@pytest.mark.parametrize("target", ["sm_80", "sm_86"])
@pytest.mark.parametrize("reduce", [None, "add"])
def test_legalized_dynamic_tma_copy_reads_every_size(target, reduce):
    """tma_copy(dynamic=True) legalized: the cp.async load reads x's sizes (zero fill and
    pitch), the thread stores or atomics y's (clipping and pitch)."""
    module = kernels.tma_copy((0, 0), "f32", dynamic=True, reduce=reduce)
    CopyLegalizePass(target=target).apply(make_context(), module)
    verify_module(module)
    result = compiled(module)
    abi = next(iter(result.abi.kernels.values()))
    assert [(p.arg, p.dim) for p in abi.params if isinstance(p, SizeParam)] == [
        (0, 0), (0, 1), (1, 0), (1, 1),
    ]  # fmt: skip
    assert not any(isinstance(p, TensorMapParam) for p in abi.params)
    assert chunk_sizes(result.ptx) == {16, 8, 4}
    assert bool(re.search(r"\bred\.global\.add\.f32", result.ptx)) == (reduce == "add")


# -- the ABI record ------------------------------------------------------------------------


def test_the_abi_round_trips():
    abi = ModuleAbi(
        "sm_80",
        {
            "k": KernelAbi(
                "k",
                (
                    PointerParam(0, "f16", (-1, -1), 4),
                    ScalarParam("f32"),
                    SizeParam(0, 0),
                    SizeParam(0, 1),
                    TensorMapParam(0, (64, 64), 16, "zeros", "FLOAT16", False),
                ),
                4096,
                (1, 1, 1),
                (128, 1, 1),
            )
        },
        "sm_90",
    )
    text = abi.to_json()
    assert f'"format": {ABI_FORMAT}' in text
    assert ABI_FORMAT == 6
    assert ModuleAbi.from_json(text) == abi
    assert abi.kernels["k"].sizes == {(0, 0): 2, (0, 1): 3}
    assert abi.kernels["k"].arguments == (PointerParam(0, "f16", (-1, -1), 4), ScalarParam("f32"))


def test_an_older_record_reads_with_no_sizes_and_no_alignment():
    """A format 4 record (no `size` parameters, no `align`) still loads."""
    old = {
        "format": 4,
        "target": "sm_90a",
        "kernels": {
            "k": {
                "name": "k",
                "params": [{"kind": "pointer", "arg": 0, "element": "f32", "shape": [-1, 64]}],
                "smem_bytes": 0,
                "cluster": [1, 1, 1],
            }
        },
    }
    kernel = ModuleAbi.from_dict(old).kernels["k"]
    assert kernel.params == (PointerParam(0, "f32", (-1, 64), 1),)
    assert kernel.sizes == {}


def test_a_malformed_size_parameter_says_to_recompile():
    entry = {"kind": "size", "arg": 0, "dim": "1"}
    with pytest.raises(ValueError, match=r"size parameter whose 'dim' is of type int .*recompile"):
        SizeParam.from_dict(entry)


# -- the runtime, without a GPU -----------------------------------------------------------


def program(module, arch: str | None = None) -> Program:
    result = compiled(module, arch)
    return Program(result.cubin, result.abi)


def test_one_program_takes_every_shape_and_packs_its_sizes():
    kernel = program(kernels.cp_async_copy((0, 0), "f32", dynamic=True), "sm_90").kernel()
    for shape in [(1, 1), (999, 997), (130, 258), (3, 4097), (64, 64)]:
        x, y = np.zeros(shape, np.float32), np.zeros(shape, np.float32)
        described = kernel.check_arguments([x, y])
        direct = direct_parameters(kernel.abi, described)
        assert direct == {
            0: (0, ctypes.c_void_p),  # host arrays get their device copy at launch
            1: (0, ctypes.c_void_p),
            2: (shape[0], ctypes.c_int64),
            3: (shape[1], ctypes.c_int64),
            4: (shape[0], ctypes.c_int64),
            5: (shape[1], ctypes.c_int64),
        }


def test_parameters_keep_the_signature_order():
    abi = KernelAbi(
        "k",
        (
            PointerParam(0, "f32", (-1, -1)),
            ScalarParam("f32"),
            PointerParam(2, "f32", (8, -1)),
            SizeParam(0, 1),
            SizeParam(2, 1),
            TensorMapParam(0, (8, 8), 16, "zeros", "FLOAT32", False),
        ),
        0,
        (1, 1, 1),
    )
    a = DeviceArray(0x1000, (5, 12), (48, 4), "float32", 4)
    b = DeviceArray(0x2000, (8, 20), (80, 4), "float32", 4)
    assert direct_parameters(abi, [a, 1.5, b]) == {
        0: (0x1000, ctypes.c_void_p),
        1: (1.5, ctypes.c_float),
        2: (0x2000, ctypes.c_void_p),
        3: (12, ctypes.c_int64),
        4: (20, ctypes.c_int64),
    }


def test_rows_no_chunk_can_read_are_refused():
    """f16 rows of an odd length are 2 bytes off the 4-byte chunks cp.async needs."""
    kernel = program(kernels.cp_async_copy((0, 0), "f16", dynamic=True)).kernel()
    kernel.check_arguments([np.zeros((7, 98), np.float16)] * 2)
    with pytest.raises(ValueError, match="multiple of 4 bytes apart") as info:
        kernel.check_arguments([np.zeros((7, 97), np.float16)] * 2)
    message = str(info.value)
    assert (
        "expected argument 0 of cp_async_copy whose rows are a multiple of 4 bytes apart" in message
    )
    assert "got strides of [194] bytes (97 elements of float16 a row)" in message
    assert "pad the innermost dimension to 98 elements" in message
    # y is only stored by threads: no alignment asked of it.
    kernel.check_arguments([np.zeros((7, 98), np.float16), np.zeros((7, 98), np.float16)])


class FakeDeviceArray:
    """A device array at a given address (`__cuda_array_interface__`), never dereferenced."""

    def __init__(self, pointer: int, shape: tuple[int, ...], typestr: str = "<f4"):
        self.__cuda_array_interface__ = {
            "data": (pointer, False),
            "shape": shape,
            "typestr": typestr,
            "strides": None,
            "version": 3,
        }


def test_a_device_array_off_the_smallest_chunk_is_refused():
    kernel = program(kernels.cp_async_copy((0, 0), "f32", dynamic=True)).kernel()
    y = FakeDeviceArray(0x10000, (9, 12))
    kernel.check_arguments([FakeDeviceArray(0x20008, (9, 12)), y])  # 8-byte aligned: fine
    with pytest.raises(
        ValueError,
        match=r"argument 0 of cp_async_copy at an address aligned to 4 bytes .* got 0x20002",
    ):
        kernel.check_arguments([FakeDeviceArray(0x20002, (9, 12)), y])


def test_the_gpu_cases_compile_for_the_h200():
    """Every kernel test_runtime_gpu.py and test_legalize_gpu.py build for dynamic shapes
    compiles as they launch it."""
    from tests.passes.test_legalize_gpu import DYNAMIC, LEGAL_TARGETS
    from tests.passes.test_legalize_gpu import legalized as gpu_legalized
    from tests.runtime.test_runtime_gpu import DYNAMIC_CP_ASYNC

    for target, dtype in DYNAMIC_CP_ASYNC:
        module = kernels.cp_async_copy((0, 0), dtype, dynamic=True, target=target)
        assert compiled(module, None if target == "sm_90a" else "sm_90").cubin
    for dtype, tile, reduce, _ in DYNAMIC.values():
        assert compiled(kernels.tma_copy((0, 0), dtype, tile, dynamic=True, reduce=reduce)).cubin
        for target in LEGAL_TARGETS:
            build = kernels.tma_copy((0, 0), dtype, tile, dynamic=True, reduce=reduce)
            result = compiled(gpu_legalized(build, target), "sm_90")
            assert "cp.async.bulk" not in result.ptx
            assert result.cubin
