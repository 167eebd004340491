"""The debug guards on a GPU (an H200): each guard (K4, TR12, TR13, P9, P6) fires with its rule id
and the op's location where its check fails, and stays silent where it holds (the result
equals numpy's); a kernel that waits on a phase nothing completes ends with P6's message
within a second of its launch instead of hanging.

One kernel serves every case: a TMA load of a 64x64 tile at (li, lj) on barrier `slot` of a
group of 2, a wait on it (parity 0), a second wait with parity `parity` (0: the phase it saw,
returns at once; 1: the next phase, which nothing completes), and a TMA store of the tile at
(si, sj); all six values are kernel arguments, so the verifier cannot check them and the
guards do. A guard
that fires traps, which leaves the CUDA context unusable: each launch runs in a fresh child
process (`python -c CHILD`) under a wall-clock limit, and the test reads the child's stdout
(where the device's printf lands) and its verdict. The kernels are compiled here, without a
GPU (`test_kernels_compile`), so that only the launches need one; the interpreter, which
runs the IR and not the cubin, cannot stand in for them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from copy_tools import runtime
from tests import device

ROOT = Path(__file__).resolve().parents[2]
SHAPE = (256, 256)
TILE = 64
SOURCE = "guards.mlir"
LOAD_LINE, WAIT_LINE, STORE_LINE = 6, 7, 8
"""The locations the kernel gives its copies and its wait (explicit `loc`s)."""

X, T, B = "memref<256x256xf32>", "memref<64x64xf32, #copy.smem>", "!copy.barrier<2>"
KERNEL = f"""
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @guarded(%x: {X}, %y: {X}, %li: index, %lj: index, %si: index, %sj: index,
                     %slot: index, %parity: i1)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>}} {{
    %buf = copy.alloc_smem : {T}
    %bars = copy.barrier_init arrivals 1 : {B}
    copy.async_copy %x[%li, %lj] to %buf barrier %bars[%slot] : {X} to {T}, {B}
        loc("{SOURCE}":{LOAD_LINE}:5)
    %false = arith.constant false
    copy.barrier_wait %bars[%slot], %false : {B} loc("{SOURCE}":{WAIT_LINE}:5)
    copy.barrier_wait %bars[%slot], %parity : {B} loc("{SOURCE}":{WAIT_LINE}:5)
    copy.async_copy %buf to %y[%si, %sj] : {T} to {X} loc("{SOURCE}":{STORE_LINE}:5)
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}
"""

VALID = {"li": 64, "lj": 128, "si": 0, "sj": 64, "slot": 0, "parity": False}
"""Arguments every check holds for: the tile at (64, 128) of x stored at (0, 64) of y."""

SILENT = {
    # rule: arguments at the edge of what its check allows
    "K4": {"li": 2**31 - 1},  # the last row a .s32 coordinate names (out of x: zero-filled)
    "TR12": {"lj": 4},  # 16 bytes
    "TR13": {"li": -32, "si": 0, "sj": 0},  # a load may start out of bounds (zero-filled)
    "P9": {"slot": 1},  # the group's last barrier
    "P6": {"parity": False},  # the phase the first wait saw complete
}

FIRING = {
    # rule: (the arguments that break it, what its message says, the lines it may name)
    # Row 2^32 + 64: without the guard the load's .s32 coordinate is 64, and it reads row 64.
    "K4": (
        {"li": 2**32 + 64},
        "the TMA coordinate 4294967360 at index 0 is outside the signed 32-bit range "
        "[-2147483648, 2147483647]: the instruction would address 64",
        (LOAD_LINE,),
    ),
    "TR12": (
        {"lj": 1},
        "the innermost TMA coordinate must be a multiple of 16 bytes, got 1 (4 bytes)",
        (LOAD_LINE,),
    ),
    "TR13": ({"si": -64}, "TMA store coordinates must be >= 0, got -64 at index 0", (STORE_LINE,)),
    # The elected thread checks the load's index, every thread the wait's: whichever traps
    # first ends the kernel.
    "P9": (
        {"slot": 2},
        "barrier index 2 is out of bounds of !copy.barrier<2> (barriers 0 to 1)",
        (LOAD_LINE, WAIT_LINE),
    ),
    # The first wait sees phase 0 complete; parity 1 then names phase 1, which nothing
    # completes (parity 0, the phase before, returns at once).
    "P6": (
        {"parity": True},
        "barrier_wait on barrier 0 of !copy.barrier<2> with parity 1 did not complete within "
        "250 ms",
        (WAIT_LINE,),
    ),
}

CHILD_TIMEOUT_S = 60.0
"""A fresh interpreter importing numpy and the runtime, one launch; a hang is killed here."""
TRAP_BOUND_S = 5.0
"""The generous bound on a guarded deadlock's launch-to-error time (the guard waits 250 ms)."""
HANG_S = 10.0
"""How long the unguarded deadlock runs before the test kills it, to show that it hangs."""

# The child: launch the cubin on the arrays, print its verdict as the last line of stdout
# (the device's printf output comes before, flushed at the synchronization).
CHILD = """
import json, sys, time
import numpy as np
import runtime
from runtime.driver import synchronize

cubin, x_path, y_path, scalars = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
x, y = np.load(x_path), np.load(y_path)
launch = runtime.load(cubin).kernel().prepare(x, y, *scalars, grid=(1,))
start = time.monotonic()
try:
    launch()
    synchronize()
    error = None
except Exception as exc:
    error = f"{type(exc).__name__}: {exc}"
seconds = time.monotonic() - start
if error is None:
    launch.release()
    np.save(y_path, y)
sys.stdout.flush()
print(json.dumps({"error": error, "seconds": seconds}), flush=True)
"""

needs_gpu = pytest.mark.skipif(
    not device.GPU,
    reason="no CUDA driver or GPU here, and the interpreter cannot run the guards: they are "
    "device-side checks compiled into the cubin (printf, then trap), launched in a child",
)


@cache
def compiled(debug_guards: bool) -> runtime.Program:
    return runtime.compile(KERNEL, debug_guards=debug_guards)


def scalars(**changes: int | bool) -> list[int | bool]:
    """The kernel's scalar arguments: VALID's with `changes`."""
    values = {**VALID, **changes}
    return [values[name] for name in ("li", "lj", "si", "sj", "slot", "parity")]


def source() -> np.ndarray:
    return np.random.default_rng(5).standard_normal(SHAPE).astype(np.float32)


def expected(x: np.ndarray, args: dict[str, int | bool]) -> np.ndarray:
    """y after the kernel: the tile at (li, lj) of x (zero outside x) stored at (si, sj)
    (inside y), zeros elsewhere."""
    li, lj, si, sj = (int(args[k]) for k in ("li", "lj", "si", "sj"))
    rows, cols = np.arange(li, li + TILE), np.arange(lj, lj + TILE)
    r, c = (rows >= 0) & (rows < SHAPE[0]), (cols >= 0) & (cols < SHAPE[1])
    tile = np.zeros((TILE, TILE), x.dtype)
    tile[np.ix_(r, c)] = x[np.ix_(rows[r], cols[c])]
    y = np.zeros_like(x)
    y[si : si + TILE, sj : sj + TILE] = tile
    return y


def launch_in_child(
    tmp_path: Path, program: runtime.Program, x: np.ndarray, args: list[int | bool], timeout: float
) -> tuple[dict, str, np.ndarray]:
    """One launch in a fresh process: its verdict (`error`, `seconds`), its stdout, and y."""
    cubin = tmp_path / "guarded.cubin"
    cubin.write_bytes(program.cubin)
    Path(f"{cubin}.json").write_text(program.abi.to_json())
    x_path, y_path = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(x_path, x)
    np.save(y_path, np.zeros_like(x))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(cubin), str(x_path), str(y_path), json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0, f"the child failed:\n{done.stdout}\n{done.stderr}"
    assert lines, f"the child printed no verdict:\n{done.stderr}"
    return json.loads(lines[-1]), done.stdout, np.load(y_path)


def test_kernels_compile():
    """Without a GPU: the kernel compiles with and without guards; only the guarded cubin
    carries the messages (the PTX's format strings are byte arrays, so the check is on the
    cubin's printf strings)."""
    guarded, plain = compiled(True), compiled(False)
    for rule in FIRING:
        assert f"copy-dialect guard {rule}: ".encode() in guarded.cubin
    assert b"copy-dialect guard" not in plain.cubin


@pytest.mark.parametrize("rule", FIRING)
@pytest.mark.parametrize("broken", [False, True], ids=["silent", "fires"])
@pytest.mark.gpu
@needs_gpu
def test_guard(tmp_path, report, rule, broken):
    """`broken`: the guard fires (the launch fails, stdout has its message at its op's
    location); else it stays silent and y is numpy's."""
    changes, message, lines = FIRING[rule]
    if not broken:
        changes = SILENT[rule]
    args = {**VALID, **changes}
    x = source()
    verdict, stdout, y = launch_in_child(
        tmp_path, compiled(True), x, scalars(**changes), CHILD_TIMEOUT_S
    )
    if not broken:
        assert verdict["error"] is None, f"{rule} fired on valid arguments:\n{stdout}"
        assert "copy-dialect guard" not in stdout
        np.testing.assert_array_equal(y, expected(x, args))
        return
    assert verdict["error"] is not None, f"the launch with {changes} succeeded"
    assert any(
        f"copy-dialect guard {rule}: {message}" in row and f" at {SOURCE}:{line}:5" in row
        for row in stdout.splitlines()
        for line in lines
    ), stdout
    report(
        f"debug guard {rule} fires",
        [f"{changes}: {verdict['error']} after {verdict['seconds']:.3f} s"],
    )
    if rule == "P6":
        assert verdict["seconds"] < TRAP_BOUND_S


@pytest.mark.gpu
@needs_gpu
def test_unguarded_deadlock_hangs(tmp_path):
    """The control of P6's test: the same launch without guards does not end by itself."""
    changes, _, _ = FIRING["P6"]
    with pytest.raises(subprocess.TimeoutExpired):
        launch_in_child(tmp_path, compiled(False), source(), scalars(**changes), HANG_S)
