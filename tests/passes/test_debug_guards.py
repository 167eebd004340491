"""The debug guards without a GPU: how they are asked for (copy-opt's flag, the pass option,
`runtime.compile`), that every builder kernel and example compiles with them, where they are
emitted (dynamic values only, every wait bounded; LLVM drops those it proves) and what their
messages say. The launches
are in test_debug_guards_gpu.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects import test
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr

from copy_tools import runtime
from copy_tools.universe import make_context
from frontends import kernels
from passes.convert_copy_to_nvvm.guards import source_location
from passes.pipeline import compile_module

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
COPY_OPT = [sys.executable, "-m", "copy_tools.copy_opt"]


def copy_opt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COPY_OPT, *args], capture_output=True, text=True, timeout=120, cwd=ROOT
    )


def guards_in(code: bytes) -> set[str]:
    """The rule ids of the guard messages that LLVM IR or a cubin holds."""
    return {chunk.split(b":", 1)[0].decode() for chunk in code.split(b"copy-dialect guard ")[1:]}


@pytest.mark.parametrize(
    "pipeline",
    [["-p", "canonicalize"], []],
    ids=["pipeline-without-the-pass", "no-pipeline"],
)
def test_flag_without_the_lowering_is_a_usage_error(pipeline):
    example = str(ROOT / "examples" / "tma_tile_copy.mlir")
    result = copy_opt(example, "--debug-guards", *pipeline)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "--debug-guards sets the debug-guards option of convert-copy-to-nvvm, but" in (
        result.stderr
    )


def test_flag_sets_the_pass_option_wherever_the_pass_runs():
    example = str(ROOT / "examples" / "tma_tile_copy.mlir")
    by_flag = copy_opt(example, "--debug-guards", "-p", "convert-copy-to-nvvm")
    by_option = copy_opt(example, "-p", "convert-copy-to-nvvm{debug-guards=true}")
    plain = copy_opt(example, "-p", "convert-copy-to-nvvm")
    assert by_flag.returncode == by_option.returncode == plain.returncode == 0
    assert by_flag.stdout == by_option.stdout
    assert "copy-dialect guard P6" in by_flag.stdout
    assert "copy-dialect guard" not in plain.stdout
    whole = copy_opt(example, "--debug-guards", "-p", "lower-copy-to-llvm")
    assert "llvm.call @vprintf" in whole.stdout
    ptx = copy_opt(example, "--debug-guards", "-t", "ptx")
    assert ptx.returncode == 0, ptx.stderr
    assert "vprintf" in ptx.stdout
    assert "%globaltimer" in ptx.stdout


def test_builder_kernel_guards_only_its_dynamic_values():
    """kernels.tma_copy: coordinates from the block index (K4 on each coordinate of the
    load and the store, TR12 on their innermost, TR13 on the store's), barrier index 0 (a
    constant: no P9), one bounded wait (P6). LLVM proves TR12 and TR13 (`block_id * 64` is a
    non-negative multiple of 16 bytes) and drops them, but not K4 (`block_id * 64` may pass
    2^31): the wait's guard and the coordinates' range are left in the cubin."""
    ctx = make_context()
    guarded = compile_module(kernels.tma_copy((256, 256), "f32"), ctx, debug_guards=True)
    assert guards_in(guarded.llvm_ir.encode()) == {"K4", "TR12", "TR13", "P6"}
    assert guards_in(guarded.cubin) == {"K4", "P6"}
    plain = compile_module(kernels.tma_copy((256, 256), "f32"), ctx)
    assert guards_in(plain.llvm_ir.encode()) == set()


TMA = {"K4", "TR12", "TR13", "P6"}
"""A TMA load and store at coordinates computed at run time, one wait on barrier 0."""
BUILDERS = {
    # name: (the kernel, the guards its LLVM IR has)
    "tma_copy": (lambda: kernels.tma_copy((1000, 1000), "f16"), TMA),
    "tma_reduce": (lambda: kernels.tma_copy((256, 256), "f32", reduce="add"), TMA),
    "swizzled": (lambda: kernels.tma_copy((256, 256), "bf16", (64, 64), swizzle=128), TMA),
    "cp_async": (lambda: kernels.cp_async_copy((256, 256), "f32", target="sm_80"), set()),
    "multicast": (lambda: kernels.multicast_copy((256, 256), "f32"), TMA),
    # The im2col load's channel block (IC13) and filter tap (its offsets, IC11: 8 bits for an
    # NHWC map) come from the loops; its output is a TMA store.
    "im2col": (
        lambda: kernels.im2col_gather(kernels.conv2d((2, 9, 7, 64), 3, padding=1), "f16"),
        TMA | {"IC13", "IC11"},
    ),
    # The persistent ring indexes its barriers with the loop's slot: P9 too.
    **{
        f"pipelined_s{s}": (
            lambda s=s: kernels.tma_copy_pipelined((1600, 864), "i16", (64, 48), stages=s),
            TMA | {"P9"},
        )
        for s in (1, 2, 6)
    },
}


@pytest.mark.parametrize("name", BUILDERS)
def test_every_builder_kernel_compiles_with_guards(name):
    build, rules = BUILDERS[name]
    compiled = compile_module(build(), make_context(), debug_guards=True)
    assert guards_in(compiled.llvm_ir.encode()) == rules
    assert compiled.cubin


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_compiles_with_guards(path):
    program = runtime.compile(path.read_text(), debug_guards=True)
    # cp.async copies have no barrier and no TMA coordinates: nothing to guard. The TMA
    # examples' coordinates come from the block index, which may pass 2^31 (K4).
    assert guards_in(program.cubin) == (set() if path.stem == "cp_async_copy" else {"K4", "P6"})


def test_message_location():
    op = test.TestOp()
    assert source_location(op) == "'test.op' (no source location)"
    op.location = FileLineColLoc(StringAttr("100%.mlir"), IntAttr(3), IntAttr(7))
    assert source_location(op) == "100%%.mlir:3:7"  # a printf format: % doubled
