"""The interpreter behind the runtime: `runtime.interpret` on MLIR text, a module or a
program, and `COPY_INTERPRET=1`, under which a program's call runs on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import interpreter
from copy_tools import runtime
from frontends import kernels

SHAPE = (130, 72)


def data() -> np.ndarray:
    return np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)


def test_interpret_text_module_and_program():
    module = kernels.tma_copy(SHAPE, "f32")
    text = str(module)
    x = data()
    grid = kernels.grid(SHAPE, (64, 64))
    for source in (text, kernels.tma_copy(SHAPE, "f32"), runtime.compile(text)):
        out = runtime.interpret(source, x, np.zeros_like(x), grid=grid, schedules=3)
        assert np.array_equal(out[1], x)


def test_a_call_runs_on_the_cpu_under_copy_interpret(monkeypatch):
    monkeypatch.setenv(runtime.INTERPRET_ENV, "1")
    program = runtime.compile(kernels.tma_copy(SHAPE, "f32"))
    x = data()
    y = np.zeros_like(x)
    program(x, y, grid=kernels.grid(SHAPE, (64, 64)))
    assert np.array_equal(y, x)
    # The launch is checked as on the GPU.
    with pytest.raises(ValueError, match="expected argument 0 of tma_copy of dtype float32"):
        program(x.astype(np.float16), y, grid=(2, 3))


def test_a_program_loaded_from_a_cubin_cannot_be_interpreted(monkeypatch, tmp_path):
    monkeypatch.setenv(runtime.INTERPRET_ENV, "1")
    program = runtime.compile(kernels.tma_copy(SHAPE, "f32"))
    loaded = runtime.Program(program.cubin, program.abi)
    x = data()
    with pytest.raises(ValueError, match="expected a program with its IR to interpret"):
        loaded(x, np.zeros_like(x), grid=(2, 3))


def test_a_violation_is_raised_with_its_rule(monkeypatch):
    text = str(kernels.tma_copy(SHAPE, "f32")).replace("copy.wait_group bulk 0", "")
    x = data()
    with pytest.raises(interpreter.KernelViolation, match=r"\[P7\]"):
        runtime.interpret(text, x, np.zeros_like(x), grid=kernels.grid(SHAPE, (64, 64)))


@pytest.mark.parametrize("gpu_wrong", [False, True])
def test_compare_runs_both_and_names_where_they_differ(monkeypatch, gpu_wrong):
    """`COPY_INTERPRET=compare` launches, then interprets copies of the same inputs, and
    compares every array bit for bit. The GPU stands in here as a numpy copy (`launch`),
    right or with one element's bits flipped."""

    def launch(self, x, y, **_):
        y[...] = x
        if gpu_wrong:
            y.view(np.uint32)[5, 7] ^= 1

    monkeypatch.setenv(runtime.INTERPRET_ENV, "compare")
    monkeypatch.setattr(runtime.Kernel, "launch", launch)
    program = runtime.compile(kernels.tma_copy(SHAPE, "f32"))
    x = data()
    y = np.zeros_like(x)
    grid = kernels.grid(SHAPE, (64, 64))
    if not gpu_wrong:
        program(x, y, grid=grid)
        assert np.array_equal(y, x)
        return
    with pytest.raises(
        runtime.InterpreterMismatch,
        match=r"argument 1 .* differ at 1 bytes, the "
        r"first at byte 1468",
    ):
        program(x, y, grid=grid)


def test_compare_copies_a_view_with_its_strides():
    """The interpreter's inputs keep the caller's layout: a view into a padded array is
    copied with the array it views, not made contiguous."""
    from runtime.interpreting import twin

    padded = np.arange(130 * 68, dtype=np.float32).reshape(130, 68)
    view = padded[:, 4:64]
    copied = twin(view)
    assert copied.strides == view.strides
    assert np.array_equal(copied, view)
    assert not np.shares_memory(copied, padded)
    assert np.array_equal(twin(padded.T), padded.T)


@pytest.mark.parametrize("error", ["one ulp", "a wrong element"])
def test_compare_takes_a_tensor_core_kernel_within_its_tolerance(monkeypatch, error):
    """A kernel with a wgmma (`kernels.gemm`) is compared within the MMA tolerance, not bit
    for bit: the tensor core's accumulation order is not the interpreter's (on the H100, 1-ulp
    flips of bf16 C; benchmarks/RESULTS.md, run 78). The GPU stands in as the interpreter
    itself, then C moved by one ulp at one element (accepted) or doubled there (rejected)."""
    import ml_dtypes

    def launch(self, a, b, c, grid, block=None, stream=None):
        self.interpret(a, b, c, grid=grid, block=block)
        flat = c.reshape(-1)
        x = np.float32(flat[3])
        if error == "one ulp":
            flat[3] = ml_dtypes.bfloat16(x + np.float32(np.spacing(flat[3:4])[0]))
        else:
            flat[3] = ml_dtypes.bfloat16(2 * x + 1)

    monkeypatch.setenv(runtime.INTERPRET_ENV, "compare")
    monkeypatch.setattr(runtime.Kernel, "launch", launch)
    program = runtime.compile(kernels.gemm(128, 128, 64), verify=False)
    assert program.mma_kernels == {"gemm_cooperative"}
    rng = np.random.default_rng(3)
    a = rng.standard_normal((128, 64)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((128, 64)).astype(ml_dtypes.bfloat16)
    c = np.zeros((128, 128), ml_dtypes.bfloat16)
    grid = kernels.gemm_grid(128, 128)
    if error == "one ulp":
        program(a, b, c, grid=grid)
        return
    with pytest.raises(runtime.InterpreterMismatch, match=r"beyond the tensor core's tolerance"):
        program(a, b, c, grid=grid)
