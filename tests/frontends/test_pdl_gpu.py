"""On a GPU (sm_90+), or on the CPU under the interpreter: `kernels.pdl_chain`, the two-kernel
chain under programmatic dependent launch, computes `z = w * (2 x + 1) + w` bit for bit
(float32 multiply and add are exact to numpy's here: each op rounds once, in the kernel's
order), for each trigger and several grids; `consume` is launched with programmatic stream
serialization (its ABI says it waits), `produce` without.

On the GPU, `test_overlapped_chain` also issues the two kernels back to back on one stream,
the second while the first may still run (device arrays, no synchronization between them),
many times over with y reset to NaN in between: a `consume` that read y before `produce`
wrote it would leave NaN or an old value in z. `test_launch_guard_refuses_a_false_mark`
compiles the early-read chain whose y is falsely marked "read" (the proof trusts the mark)
with debug guards: the programmatic launch of `consume` after `produce` on the stream is
refused (copy-dialect guard GD2) before it reaches the GPU. Without a GPU both are
interpreted otherwise: `run_chain` reports the early read as a race
(tests/interpreter/test_grid_dependency.py) and the guard is tested on launch facts
(tests/runtime/test_pdl_guard.py)."""

from __future__ import annotations

import numpy as np
import pytest

from copy_tools import runtime
from frontends import kernels
from tests import device

pytestmark = device.marks()

SIZES = device.shapes([128, 4096, 128 * 132 * 4], [128, 512])


def expected(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    y = x * np.float32(2) + np.float32(1)
    return w * y + w


@pytest.mark.parametrize("trigger", kernels.PDL_TRIGGERS)
@pytest.mark.parametrize("n", SIZES)
def test_chain_result(n, trigger):
    program = runtime.compile(kernels.pdl_chain(n, trigger=trigger))
    assert program.kernel("consume").abi.grid_dependent
    assert not program.kernel("produce").abi.grid_dependent
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    w = rng.standard_normal(n).astype(np.float32)
    y = np.full(n, np.nan, dtype=np.float32)
    z = np.full(n, np.nan, dtype=np.float32)
    grid = kernels.pdl_grid(n)
    program.kernel("produce")(x, y, grid=grid)
    program.kernel("consume")(w, y, z, grid=grid)
    assert np.array_equal(y, x * np.float32(2) + np.float32(1))
    assert np.array_equal(z, expected(x, w))


@pytest.mark.not_interpreted("back-to-back launches on device arrays need the GPU")
@pytest.mark.parametrize("programmatic", [None, False])
def test_overlapped_chain(programmatic):
    torch = pytest.importorskip("torch")
    from cuda.bindings import driver

    n = 128 * 132 * 4
    program = runtime.compile(kernels.pdl_chain(n))
    rng = np.random.default_rng(34)
    x = torch.from_numpy(rng.standard_normal(n).astype(np.float32)).cuda()
    w = torch.from_numpy(rng.standard_normal(n).astype(np.float32)).cuda()
    y = torch.full((n,), float("nan"), device="cuda")
    z = torch.full((n,), float("nan"), device="cuda")
    stream = torch.cuda.Stream()
    handle = driver.CUstream(stream.cuda_stream)
    grid = kernels.pdl_grid(n)
    produce = program.kernel("produce").prepare(x, y, grid=grid, stream=handle)
    consume = program.kernel("consume").prepare(
        w, y, z, grid=grid, stream=handle, programmatic=programmatic
    )
    want = expected(x.cpu().numpy(), w.cpu().numpy())
    for _ in range(50):
        with torch.cuda.stream(stream):
            y.fill_(float("nan"))
            z.fill_(float("nan"))
        produce()
        consume()
        stream.synchronize()
        assert np.array_equal(z.cpu().numpy(), want)
    produce.release()
    consume.release()


@pytest.mark.not_interpreted("the launch guard checks launches on a device stream")
def test_launch_guard_refuses_a_false_mark():
    torch = pytest.importorskip("torch")
    from cuda.bindings import driver

    n = 128 * 132
    module = kernels.pdl_chain(n, early_read=True, output_mark="read")
    program = runtime.compile(module, debug_guards=True)
    x, w = torch.ones(n, device="cuda"), torch.ones(n, device="cuda")
    y, z = torch.zeros(n, device="cuda"), torch.zeros(n, device="cuda")
    stream = torch.cuda.Stream()
    handle = driver.CUstream(stream.cuda_stream)
    grid = kernels.pdl_grid(n)
    produce = program.kernel("produce").prepare(x, y, grid=grid, stream=handle)
    consume = program.kernel("consume").prepare(w, y, z, grid=grid, stream=handle)
    produce()
    with pytest.raises(runtime.ArgumentError, match="copy-dialect guard GD2: argument 1 of"):
        consume()
    stream.synchronize()
    assert torch.all(z == 0)  # consume never ran
    produce.release()
    consume.release()
