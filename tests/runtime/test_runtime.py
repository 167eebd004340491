"""The runtime's checks that need no GPU: device fit, launch shapes, array shapes, dtypes,
strides and TMA alignment, each a ValueError saying what was expected and what was found."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.verify import verify_module
from copy_tools.universe import make_context
from frontends import kernels
from passes.pipeline import compile_module
from runtime import Program, check_device
from runtime.arrays import DeviceArray
from runtime.driver import DeviceFacts
from runtime.tensor_map import TensorMapParam, check_tensor_map_array

H200 = DeviceFacts("NVIDIA H200", (9, 0), 232_448)
A100 = DeviceFacts("NVIDIA A100", (8, 0), 166_912)


def program(module) -> Program:
    compiled = compile_module(module, make_context())
    return Program(compiled.cubin, compiled.abi)


def test_target_must_match_the_device():
    check_device("sm_90a", 1024, H200)
    check_device("sm_80", 1024, H200.__class__("NVIDIA A10", (8, 6), 101_376))
    with pytest.raises(ValueError, match=r"runs sm_90a code .* got NVIDIA A100"):
        check_device("sm_90a", 1024, A100)
    with pytest.raises(ValueError, match=r"compute capability 8.0 or a later minor"):
        check_device("sm_80", 1024, H200)  # an sm_80 cubin does not run on sm_90


def test_shared_memory_limit():
    with pytest.raises(ValueError, match="expected at most 166912 bytes of shared memory"):
        check_device("sm_80", 200_000, A100)


def test_array_shape_dtype_and_layout_checks():
    kernel = program(kernels.tma_copy((256, 256), "f32")).kernel()
    with pytest.raises(ValueError, match=r"expected 2 arguments for kernel tma_copy, got 1"):
        kernel.check_arguments([np.zeros((256, 256), np.float32)])
    with pytest.raises(ValueError, match=r"of shape \(256, 256\), got \(256, 128\)"):
        kernel.check_arguments([np.zeros((256, 128), np.float32)] * 2)
    with pytest.raises(ValueError, match=r"of dtype float32 \(the kernel's f32\), got int32"):
        kernel.check_arguments([np.zeros((256, 256), np.int32)] * 2)
    with pytest.raises(ValueError, match="to be C-contiguous"):
        kernel.check_arguments([np.zeros((256, 512), np.float32)[:, ::2]] * 2)
    with pytest.raises(ValueError, match="expected argument 0 of tma_copy to be a numpy array"):
        kernel.check_arguments([[1.0], [2.0]])


def test_signless_integers_take_either_sign():
    kernel = program(kernels.tma_copy((64, 64), "i32")).kernel()
    kernel.check_arguments([np.zeros((64, 64), np.int32), np.zeros((64, 64), np.uint32)])


def test_launch_shape_checks():
    kernel = program(kernels.multicast_copy((256, 256), "f32")).kernel()
    with pytest.raises(ValueError, match=r"expected block \(128, 1, 1\)"):
        kernel.check_launch((8, 4), (256, 1, 1))
    with pytest.raises(ValueError, match=r"a multiple of the cluster \(2, 1, 1\), got \(7, 4, 1\)"):
        kernel.check_launch((7, 4), None)
    # Grid y is at most 65535 (the H200 refused 65536 with CUDA_ERROR_INVALID_VALUE).
    with pytest.raises(ValueError, match=r"at most \(2147483647, 65535, 65535\) blocks"):
        kernel.check_launch((2, 65536), None)


def tma_array(pointer=0x1000, strides=(1024, 4)) -> DeviceArray:
    return DeviceArray(pointer, (64, 256), strides, "float32", 4)


def tensor_map(box=(64, 64), written=False) -> TensorMapParam:
    return TensorMapParam(1, tuple(box), 16, "zeros", "FLOAT32", written)


def test_tensor_map_alignment_and_strides():
    entry = tensor_map()
    check_tensor_map_array(tma_array(), entry, "x")
    with pytest.raises(ValueError, match=r"16-byte aligned for TMA, got 0x1008"):
        check_tensor_map_array(tma_array(pointer=0x1008), entry, "x")
    with pytest.raises(ValueError, match=r"multiples of 16 below 2\*\*40 for TMA, got 1028"):
        check_tensor_map_array(tma_array(strides=(1028, 4)), entry, "x")
    with pytest.raises(ValueError, match="innermost stride to be one element"):
        check_tensor_map_array(tma_array(strides=(1024, 8)), entry, "x")


def test_program_kernel_lookup():
    p = program(kernels.tma_copy((64, 64), "f32"))
    assert p.kernel().name == "tma_copy"
    with pytest.raises(ValueError, match=r"expected one of the kernels \['tma_copy'\], got 'x'"):
        p.kernel("x")


def test_load_missing_files(tmp_path):
    from runtime import load

    with pytest.raises(ValueError, match="expected a cubin and its ABI"):
        load(tmp_path / "nothing.cubin")


def test_dynamic_shapes_take_any_size_of_the_right_rank():
    kernel = program(kernels.tma_copy((0, 0), "f32", dynamic=True)).kernel()
    assert kernel.params[0].shape == (-1, -1)
    kernel.check_arguments([np.zeros((100, 64), np.float32)] * 2)
    kernel.check_arguments([np.zeros((7, 4096), np.float32)] * 2)
    with pytest.raises(ValueError, match=r"of shape \('\?', '\?'\), got \(100,\)"):
        kernel.check_arguments([np.zeros(100, np.float32)] * 2)
    # The tensor map's needs are checked on the actual array: 10 floats are 40-byte rows.
    with pytest.raises(ValueError, match="multiples of 16 below 2\\*\\*40 for TMA, got 40"):
        kernel.check_arguments([np.zeros((10, 10), np.float32)] * 2)


@pytest.mark.parametrize("spare", [0, 8, 1024])
def test_a_kernel_that_verifies_fits_the_device_it_targets(spare):
    # The verifier (TR6) counts the arena's 1024-byte alignment pad that the kernel launches
    # with: a kernel within 1024 bytes of the limit used to verify and then fail at launch.
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import VerifyException

    def kernel(buffer: int):
        text = f"""builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
          func.func @k() attributes {{gpu.kernel}} {{
            %buf = copy.alloc_smem : memref<{buffer}xi8, #copy.smem>
            %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
            func.return
          }}
        }}"""
        return Parser(make_context(), text).parse_module()

    # The buffer, one 8-byte barrier right after it and the pad: `spare` bytes under the limit.
    buffer = H200.max_smem_optin - 1024 - 8 - spare
    fits = kernel(buffer)
    verify_module(fits)
    smem = program(fits).abi.kernels["k"].smem_bytes
    assert smem == H200.max_smem_optin - spare
    check_device("sm_90a", smem, H200)
    with pytest.raises(VerifyException, match="alignment pad of the arena"):
        verify_module(kernel(buffer + spare + 8))


def test_the_repr_of_programs_and_kernels_is_short():
    p = program(kernels.tma_copy((64, 64), "f32"))
    shown = repr(p)
    assert shown.startswith("<Program target=sm_90a kernels=['tma_copy'] cubin=")
    assert f"cubin={len(p.cubin)} bytes>" in shown
    kernel = repr(p.kernel())
    assert kernel.startswith("<Kernel tma_copy target=sm_90a params=(f32[64, 64], f32[64, 64], ")
    assert "tensor_map(arg 0, FLOAT32, box 64x64)" in kernel
    assert "block=(128, 1, 1)" in kernel
    assert len(shown) < 200
    assert len(kernel) < 300
    assert "cluster=(2, 1, 1)" in repr(program(kernels.multicast_copy((256, 256), "f32")).kernel())


def test_dynamic_shapes_show_as_question_marks():
    kernel = program(kernels.tma_copy((0, 0), "f32", dynamic=True)).kernel()
    assert "f32[?, ?]" in repr(kernel)


def no_driver(*args, **kwargs):
    from runtime.driver import NoDriverError

    raise NoDriverError("cuInit: no CUDA driver on this machine (test)")


def test_a_launch_without_a_gpu_raises_one_clear_error(monkeypatch):
    import traceback

    import runtime
    from runtime import driver

    monkeypatch.setattr(driver, "device", no_driver)
    assert not runtime.gpu_available()
    p = program(kernels.tma_copy((64, 64), "f32"))
    x = np.zeros((64, 64), np.float32)
    with pytest.raises(runtime.NoDriverError) as info:
        p(x, x.copy(), grid=(1, 1))
    message = str(info.value)
    assert message.startswith("no CUDA driver or GPU found: cuInit: no CUDA driver")
    assert "runtime.gpu_available()" in message
    assert "python -m copy_dialect" in message
    assert message.count("gpu_available") == 1
    # Raised at the boundary (the call, and the launch it makes): no frame of the driver
    # calls, nor a chained cause.
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert frames[-2:] == ["__call__", "launch"]
    assert not {"prepare", "_prepare", "facts", "device", "call"} & set(frames)
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__
    with pytest.raises(runtime.NoDriverError, match="no CUDA driver or GPU found"):
        p.kernel().prepare(x, x.copy(), grid=(1, 1))
    assert issubclass(runtime.NoDriverError, runtime.CudaError)


def test_no_device_answers_are_no_driver_errors(monkeypatch):
    from runtime import driver

    class Fake:
        class CUresult:
            CUDA_SUCCESS = 0

        @staticmethod
        def cuInit(flags):  # noqa: N802
            return (100,)

        @staticmethod
        def cuGetErrorName(err):  # noqa: N802
            return 0, b"CUDA_ERROR_NO_DEVICE"

        @staticmethod
        def cuGetErrorString(err):  # noqa: N802
            return 0, b"no CUDA-capable device is detected"

    monkeypatch.setattr(driver, "_driver", lambda: Fake)
    with pytest.raises(driver.NoDriverError, match="CUDA_ERROR_NO_DEVICE"):
        driver.call("cuInit", 0)


def test_packed_parameters_hold_each_value_at_the_address_the_driver_reads():
    """kernelParams is an array of pointers, one per parameter, each to that parameter's
    bytes: read back through it as the driver does, every value arrives, in order."""
    import ctypes
    import struct

    from runtime.kernel import Parameters

    tensor_map = bytes(range(128))
    storage = [
        ctypes.c_void_p(0x7F00_1234_5600),
        ctypes.c_float(1.5),
        ctypes.c_int64(-10008),
        ctypes.create_string_buffer(tensor_map, 128),
        ctypes.c_bool(True),
    ]
    packed = Parameters(storage)
    pointers = ctypes.cast(packed.address, ctypes.POINTER(ctypes.c_void_p))
    expected = [
        struct.pack("<Q", 0x7F00_1234_5600),
        struct.pack("<f", 1.5),
        struct.pack("<q", -10008),
        tensor_map,
        b"\x01",
    ]
    for i, want in enumerate(expected):
        assert ctypes.string_at(pointers[i], len(want)) == want
    assert Parameters([]).address != 0  # a kernel without parameters still gets an array
