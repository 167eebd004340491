"""`runtime.compile(..., verify=False)`, `compile_module(..., verify_protocol=False)` and
copy-opt's `--no-verify-protocol` skip the protocol analysis (rules P1-P13, TU10-TU12), and
only it: a kernel the protocol rejects compiles to a cubin with the switch off and raises
with the default; an op that breaks its verifier raises either way. copy-opt's flag holds for
`-t ptx` and `-t cubin` too (the lowering verifies after each pass)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

from copy_tools import runtime
from copy_tools.universe import make_context
from passes.pipeline import compile_module

ROOT = Path(__file__).resolve().parents[2]

# The threads read the tile before the barrier_wait that says it landed (P1).
UNPROVEN = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @early_read(%x: memref<256x256xf32>, %y: memref<256xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0]
      : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    %v = memref.load %buf[%c0, %c0] : memref<64x64xf32, #copy.smem>
    memref.store %v, %y[%t] : memref<256xf32>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    func.return
  }
}
"""
INVALID_OP = UNPROVEN.replace(
    "copy.async_copy %x[%c0, %c0]", "copy.async_copy %x[%c0, %big]"
).replace(
    "%false = arith.constant false",
    "%false = arith.constant false\n    %big = arith.constant 4294967296 : index",
)


def test_runtime_compile_raises_on_a_kernel_the_protocol_rejects_by_default():
    early = r"reads %buf\[0, 0\] before the copy that fills %buf completes"
    with pytest.raises(DiagnosticException, match=early):
        runtime.compile(UNPROVEN)


def test_runtime_compile_without_verify_skips_the_protocol():
    program = runtime.compile(UNPROVEN, verify=False)
    assert program.cubin
    assert [k.name for k in program.abi.kernels.values()] == ["early_read"]


def test_runtime_compile_without_verify_still_runs_the_op_verifiers():
    with pytest.raises(DiagnosticException, match="signed 32-bit range"):
        runtime.compile(INVALID_OP, verify=False)


def test_compile_module_has_the_same_switch():
    def module():
        return Parser(make_context(), UNPROVEN).parse_module()

    with pytest.raises(DiagnosticException):
        compile_module(module(), make_context())
    assert compile_module(module(), make_context(), verify_protocol=False).cubin


@pytest.mark.parametrize("output", ["ptx", "cubin"])
def test_copy_opt_no_verify_protocol_holds_for_gpu_outputs(tmp_path, output):
    source = tmp_path / "early_read.mlir"
    source.write_text(UNPROVEN)
    args = [sys.executable, "-m", "copy_tools.copy_opt", str(source), "-t", output]
    if output == "cubin":
        args += ["-o", str(tmp_path / "k.cubin")]
    run = lambda *extra: subprocess.run(  # noqa: E731
        [*args, *extra], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    checked = run()
    assert checked.returncode == 1
    assert "P1" in checked.stderr or "before" in checked.stderr, checked.stderr
    skipped = run("--no-verify-protocol")
    assert skipped.returncode == 0, skipped.stderr
    assert "error" not in skipped.stderr
