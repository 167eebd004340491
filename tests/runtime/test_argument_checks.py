"""A Program checks its arguments before it touches CUDA (issue 32, item 2): every mistake
gives its own `ArgumentError` (expected, got, fix) with or without a GPU, never
`NoDriverError` or a Python error from inside the runtime. One test per kind of mistake;
the checks run before any driver call, so these tests hold on a machine with a GPU too
(`test_good_arguments_reach_the_driver` is the one that differs)."""

from __future__ import annotations

import numpy as np
import pytest

import runtime
from copy_tools import runtime as compiler
from frontends import kernels
from runtime import ArgumentError, NoDriverError

SCALAR_KERNEL = """
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @fill(%x: memref<?x?xf32>, %n: i32)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    copy.async_copy %x[%c0, %c0] to %buf oob zeros
        : memref<?x?xf32> to memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}
"""


@pytest.fixture(scope="module")
def tma():
    return compiler.compile(kernels.tma_copy((256, 256), "f32"))


@pytest.fixture(scope="module")
def cluster():
    return compiler.compile(kernels.multicast_copy((256, 256), "f32"))


@pytest.fixture(scope="module")
def cp_async():
    return compiler.compile(kernels.cp_async_copy((256, 256), "f16", dynamic=True))


@pytest.fixture(scope="module")
def scalar():
    return compiler.compile(SCALAR_KERNEL)


def f32(*shape):
    return np.zeros(shape, np.float32)


class DeviceView:
    """A device array (`__cuda_array_interface__`) at an address, never dereferenced."""

    def __init__(self, pointer, shape=(256, 256), strides=None, typestr="<f4"):
        self.__cuda_array_interface__ = {
            "data": (pointer, False),
            "shape": shape,
            "typestr": typestr,
            "strides": strides,
            "version": 3,
        }


def rejects(program, *values, match, **launch):
    launch.setdefault("grid", (4, 4))
    with pytest.raises(ArgumentError, match=match) as info:
        program(*values, **launch)
    assert not isinstance(info.value, NoDriverError)
    assert "expected" in str(info.value)
    return info.value


# --- the arrays ------------------------------------------------------------------------------


def test_wrong_dtype(tma):
    error = rejects(tma, f32(256, 256).astype(np.float64), f32(256, 256), match="of dtype float32")
    assert "got float64" in str(error)
    assert "astype('float32')" in str(error)


def test_wrong_shape(tma):
    rejects(tma, f32(128, 256), f32(256, 256), match=r"of shape \(256, 256\), got \(128, 256\)")


def test_wrong_rank(tma):
    rejects(tma, f32(256 * 256), f32(256, 256), match=r"of shape \(256, 256\), got \(65536,\)")


def test_wrong_number_of_arguments(tma):
    rejects(tma, f32(256, 256), match="expected 2 arguments for kernel tma_copy, got 1; fix: pass")


def test_not_an_array(tma):
    rejects(tma, [[0.0] * 256] * 256, f32(256, 256), match="to be a numpy array or a device array")


def test_a_read_only_array(tma):
    x = f32(256, 256)
    x.flags.writeable = False
    rejects(tma, f32(256, 256), x, match="to be writeable")


def test_not_row_major(tma):
    rejects(tma, f32(256, 256).T, f32(256, 256), match="to be C-contiguous")


def test_device_array_strides(tma):
    view = DeviceView(0x1000, strides=(2048, 8))
    rejects(tma, view, DeviceView(0x2000), match="C-contiguous")


def test_device_array_dtype(tma):
    rejects(tma, DeviceView(0x1000, typestr="<c8"), DeviceView(0x2000), match="numeric dtype")


def test_tma_alignment(tma):
    rejects(tma, DeviceView(0x1004), DeviceView(0x2000), match="16-byte aligned for TMA")


def test_cp_async_row_alignment(cp_async):
    x = np.zeros((64, 63), np.float16)
    rejects(cp_async, x, x.copy(), match="a multiple of 4 bytes apart", grid=(2, 2))


# --- the scalars -----------------------------------------------------------------------------


def test_a_scalar_of_the_wrong_kind(scalar):
    rejects(scalar, f32(16, 64), "3", match="to be a i32 scalar", grid=1)
    rejects(scalar, f32(16, 64), 2.5, match="to be a i32 scalar", grid=1)


def test_a_scalar_out_of_range(scalar):
    rejects(scalar, f32(16, 64), 2**31, match="signed 32-bit range", grid=1)


# --- the launch -----------------------------------------------------------------------------


@pytest.mark.parametrize("grid", ["ab", 2.5, (1, "x"), (1, 2, 3, 4), (), None, True, {}])
def test_a_grid_that_is_no_grid(tma, grid):
    error = rejects(tma, f32(256, 256), f32(256, 256), grid=grid, match="1 to 3 positive ints")
    assert "fix: pass e.g. grid=(64, 64)" in str(error)


@pytest.mark.parametrize("grid", [(0, 4), (4, -1), -3])
def test_a_grid_dimension_below_one(tma, grid):
    rejects(tma, f32(256, 256), f32(256, 256), grid=grid, match="to be at least 1")


def test_a_grid_too_large(tma):
    rejects(tma, f32(256, 256), f32(256, 256), grid=(1, 65536), match="CUDA limits")


def test_a_block_other_than_the_kernels(tma):
    rejects(tma, f32(256, 256), f32(256, 256), block=(64, 1, 1), match=r"expected block \(128")


def test_a_block_that_is_no_block(tma):
    rejects(tma, f32(256, 256), f32(256, 256), block="x", match="block for kernel tma_copy")


def test_a_grid_off_the_cluster(cluster):
    rejects(cluster, f32(256, 256), f32(256, 256), grid=(3, 4), match="multiple of the cluster")


def test_the_checks_come_before_the_interpreter_too(tma, monkeypatch):
    monkeypatch.setenv(runtime.INTERPRET_ENV, "1")
    rejects(tma, f32(256, 256), f32(256, 256), grid="ab", match="1 to 3 positive ints")


def test_good_arguments_reach_the_driver(tma):
    if runtime.gpu_available():
        pytest.skip("a GPU is here: the launch runs")
    with pytest.raises(NoDriverError, match="gpu_available"):
        tma(f32(256, 256), f32(256, 256), grid=(4, 4))


def test_the_occupancy_query_needs_the_driver_and_checks_its_block(cluster):
    """`max_active_clusters` (a cluster kernel's co-resident clusters): a block the kernel
    was not compiled for is an ArgumentError before the driver is asked; without a GPU, the
    one NoDriverError."""
    with pytest.raises(ArgumentError, match="block"):
        cluster.kernel().max_active_clusters(block=(64, 1, 1))
    if runtime.gpu_available():
        pytest.skip("a GPU is here: the query runs (tests/frontends/test_gemm_gpu.py)")
    with pytest.raises(NoDriverError, match="gpu_available"):
        cluster.kernel().max_active_clusters()


# --- compile's own arguments -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((42,), {}, "expected MLIR text"),
        ((SCALAR_KERNEL,), {"target": "sm_99"}, "expected target to be one of"),
        ((SCALAR_KERNEL,), {"arch": 90}, "expected arch to be one of"),
        ((SCALAR_KERNEL,), {"name": ""}, "expected name to be a file name"),
    ],
)
def test_compile_checks_its_arguments(args, kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        compiler.compile(*args, **kwargs)


def test_verify_module_takes_a_module():
    with pytest.raises(ArgumentError, match="expected an xDSL builtin.ModuleOp"):
        compiler.verify_module(SCALAR_KERNEL)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"grid": "ab"}, "1 to 3 positive ints"),
        ({"grid": (0, 1)}, "at least 1"),
        ({"block": 1.5}, "block for kernel"),
        ({"schedule": "fastest"}, "expected schedule to be one of"),
        ({"seed": -1}, "expected seed to be an int of at least 0"),
        ({"schedules": 0}, "expected schedules to be an int of at least 1"),
        ({"kernel": 3}, "expected kernel to be a kernel's name"),
    ],
)
def test_interpret_checks_its_arguments(kwargs, match):
    x = f32(256, 256)
    with pytest.raises(ArgumentError, match=match):
        compiler.interpret(kernels.tma_copy((256, 256), "f32"), x, x.copy(), **kwargs)
