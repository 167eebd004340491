"""On a GPU (an H200 here): `kernels.tma_copy_pipelined` copies bit for bit for 1 to 6 stages,
over shapes, dtypes and tiles (among them the 1600x864 i16 ring that deadlocked with one
stage) and grids from one block to more blocks than tiles.

Each launch runs in a child process under a watchdog: a kernel that hangs fails its test
after LAUNCH_TIMEOUT_S (the child, and the GPU context with it, is killed; the next test gets
a fresh child) instead of stalling the suite. Every kernel is also compiled here without a
GPU (`test_every_case_compiles`), so that only the launches are left to the GPU.

Without a GPU, the launches run in this process under the interpreter (a hang is its P6
violation, not a stall), on smaller shapes of the same tiles (SMALL_KERNELS: 4 to 20 tiles,
so that one block walks several laps of the smaller rings) and 1, 2, 3 and 6 stages."""

from __future__ import annotations

import multiprocessing
import operator
import time
import zlib
from functools import cache
from typing import Any

import numpy as np
import pytest

from copy_tools import runtime
from facts.abi import ModuleAbi
from frontends import kernels
from tests import device

LAUNCH_TIMEOUT_S = 20.0
"""A correct launch takes milliseconds; the first in a child also loads the module."""
START_TIMEOUT_S = 120.0
"""Starting a child: a fresh interpreter importing numpy, xDSL and the project."""

KERNELS = {
    # name: (shape, dtype, tile, grids); the grids run one block, a few, 183 (blocks with one
    # or two tiles, fewer than the stages) and more blocks than tiles (blocks with none).
    "i16-1600x864-100x48": ((1600, 864), "i16", (100, 48), (1, 183)),
    "i16-1600x864-64x48": ((1600, 864), "i16", (64, 48), (1, 183)),
    "i16-1600x896-100x64": ((1600, 896), "i16", (100, 64), (1, 183, 300)),
    "f32-512x384-64x32": ((512, 384), "f32", (64, 32), (1, 5)),
    "f16-256x512-32x64": ((256, 512), "f16", (32, 64), (3, 100)),
    "bf16-192x256-64x64": ((192, 256), "bf16", (64, 64), (1, 13)),
}
SMALL_KERNELS = {
    # The interpreted twins: the same tiles on a few of them, grids of one block, a few, and
    # more blocks than tiles.
    "i16-300x192-100x48": ((300, 192), "i16", (100, 48), (1, 5)),
    "i16-320x192-64x48": ((320, 192), "i16", (64, 48), (1, 7)),
    "i16-300x256-100x64": ((300, 256), "i16", (100, 64), (1, 5, 16)),
    "f32-128x96-64x32": ((128, 96), "f32", (64, 32), (1, 5)),
    "f16-96x128-32x64": ((96, 128), "f16", (32, 64), (3, 8)),
    "bf16-128x128-64x64": ((128, 128), "bf16", (64, 64), (1, 3)),
}
STAGES = range(1, 7)
CASES = [
    pytest.param(name, stages, grid, id=f"{name}-s{stages}-g{grid}")
    for name, (_, _, _, grids) in device.shapes(KERNELS, SMALL_KERNELS).items()
    for stages in device.shapes(STAGES, [1, 2, 3, 6])
    for grid in grids
]


@cache
def compiled(name: str, stages: int) -> runtime.Program:
    shape, dtype, tile, _ = {**KERNELS, **SMALL_KERNELS}[name]
    return runtime.compile(kernels.tma_copy_pipelined(shape, dtype, tile, stages=stages))


def numpy_dtype(name: str) -> Any:
    if name == "bf16":
        return pytest.importorskip("ml_dtypes").bfloat16
    return {"f32": np.float32, "f16": np.float16, "i16": np.int16}[name]


def random_bits(shape, dtype: str, seed: int) -> np.ndarray:
    """Fresh random bit patterns of `dtype` (any float bits, NaNs included: copies move bits)."""
    t = np.dtype(numpy_dtype(dtype))
    bits = np.random.default_rng(seed).integers(0, 256, size=(*shape, t.itemsize), dtype=np.uint8)
    return bits.view(t).reshape(shape)


def unsigned(a: np.ndarray) -> np.ndarray:
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def launch(cubin: bytes, abi: ModuleAbi, x: np.ndarray, y: np.ndarray, grid: tuple) -> np.ndarray:
    """In the child: one launch of the module's kernel on host arrays; y comes back."""
    runtime.Program(cubin, abi)(x, y, grid=grid)
    return y


def serve(conn: Any) -> None:
    """The child's loop: runs each `(function, args)` it receives and sends back
    `("ok", result)` or `("error", text)`, until the parent closes the pipe."""
    conn.send(("ok", "ready"))
    while True:
        try:
            fn, args = conn.recv()
        except EOFError:
            return
        try:
            reply = ("ok", fn(*args))
        except Exception as exc:
            reply = ("error", f"{type(exc).__name__}: {exc}")
        conn.send(reply)


class Hung(Exception):
    """The child gave no answer in time: it was killed."""


class Watchdog:
    """Runs module-level functions in a child process ('spawn': a fresh CUDA context)."""

    def __init__(self) -> None:
        self._process: Any = None
        self._conn: Any = None

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=serve, args=(child,), daemon=True)
        self._process.start()
        child.close()
        self._answer(START_TIMEOUT_S, "to start")

    def _answer(self, timeout: float, what: str) -> Any:
        if not self._conn.poll(timeout):
            self.close()
            raise Hung(f"no answer from the child after {timeout:g} s {what}: killed it")
        try:
            status, value = self._conn.recv()
        except EOFError:
            code = self._process.exitcode
            self.close()
            raise Hung(f"the child died {what} (exit code {code})") from None
        if status != "ok":
            raise RuntimeError(value)
        return value

    def call(self, fn: Any, *args: Any, timeout: float = LAUNCH_TIMEOUT_S) -> Any:
        if self._process is None:
            self._start()
        self._conn.send((fn, args))
        return self._answer(timeout, f"running {fn.__name__}")

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join()
            self._conn.close()
        self._process = self._conn = None


@pytest.fixture(scope="module")
def watchdog():
    dog = Watchdog()
    yield dog
    dog.close()


def test_watchdog_kills_a_hang_and_starts_afresh(watchdog):
    """The harness itself (no GPU needed): a call that never returns fails in time."""
    assert watchdog.call(operator.add, 2, 3) == 5
    start = time.monotonic()
    with pytest.raises(Hung, match=r"no answer from the child after 1 s running sleep"):
        watchdog.call(time.sleep, 600, timeout=1.0)
    assert time.monotonic() - start < 30
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        watchdog.call(operator.truediv, 1, 0)
    assert watchdog.call(operator.mul, 6, 7) == 42


@pytest.mark.parametrize("stages", STAGES)
@pytest.mark.parametrize("name", KERNELS)
def test_every_case_compiles(name, stages):
    """Without a GPU: each kernel the GPU test launches verifies and compiles to a cubin."""
    program = compiled(name, stages)
    assert program.cubin
    assert program.target == "sm_90a"


@pytest.mark.parametrize(("name", "stages", "grid"), CASES)
@pytest.mark.gpu
def test_pipelined_copy_is_bit_exact(watchdog, name, stages, grid):
    shape, dtype, _, _ = {**KERNELS, **SMALL_KERNELS}[name]
    x = random_bits(shape, dtype, seed=zlib.crc32(f"{name}-{stages}-{grid}".encode()))
    y = x.copy()
    unsigned(y)[...] = ~unsigned(x)  # poisoned: every element differs from x
    program = compiled(name, stages)
    if device.INTERPRETED:
        program(x, y, grid=(grid,))  # interpreted: a hang is a P6 KernelViolation
    else:
        try:
            y = watchdog.call(launch, program.cubin, program.abi, x, y, (grid,))
        except Hung as exc:
            pytest.fail(f"{name} with {stages} stages on {grid} blocks hangs: {exc}")
    wrong = int(np.count_nonzero(unsigned(y) != unsigned(x)))
    assert wrong == 0, f"{wrong} of {x.size} elements differ"
