"""Programmatic dependent launch, compiled: `kernels.pdl_chain` (both triggers) lowers to
`griddepcontrol.launch_dependents;` / `griddepcontrol.wait;`, compiles through LLVM 22 and
nvJitLink for every target with griddepcontrol and, where `ptxas` is on PATH, assembles
with it; its ABI marks the kernel that waits, which the runtime reads back from the cubin's
record; for a target without griddepcontrol the builder refuses, and copy-legalize removes
the ops (lit_tests/passes/copy-legalize-griddepcontrol.mlir)."""

from __future__ import annotations

from pathlib import Path

import pytest

from copy_tools.universe import make_context
from facts.abi import KernelAbi
from facts.errors import ArgumentError
from facts.target import GRID_DEPENDENCY
from frontends import kernels
from passes.pipeline import compile_module
from tests.ptxas import check_ptxas


@pytest.mark.parametrize("trigger", kernels.PDL_TRIGGERS)
@pytest.mark.parametrize("target", GRID_DEPENDENCY.targets)
def test_chain_assembles(target: str, trigger: str, tmp_path: Path):
    module = kernels.pdl_chain(256, trigger=trigger, target=target)
    compiled = compile_module(module, make_context(), target)
    assert compiled.cubin.startswith(b"\x7fELF")
    produce, consume = (compiled.ptx.split(f".entry {name}(")[1] for name in ("produce", "consume"))
    produce = produce.split(".entry")[0]
    assert "griddepcontrol.launch_dependents;" in produce
    assert "griddepcontrol.wait;" not in produce
    assert consume.count("griddepcontrol.wait;") == 1
    assert "griddepcontrol.launch_dependents;" not in consume
    # The wait comes between the weights' load and the predecessor's output's.
    body = consume.split("griddepcontrol.wait;")
    assert body[0].count("ld.global") == 1
    assert body[1].count("ld.global") == 1
    assert compiled.abi.kernels["consume"].grid_dependent
    assert not compiled.abi.kernels["produce"].grid_dependent
    check_ptxas(compiled.ptx, target, tmp_path)


def test_abi_record_round_trip():
    abi = KernelAbi("k", (), 0, (1, 1, 1), None, True)
    assert abi.to_dict()["grid_dependent"] is True
    assert KernelAbi.from_dict(abi.to_dict()) == abi
    plain = KernelAbi("k", (), 0, (1, 1, 1))
    assert "grid_dependent" not in plain.to_dict()  # records of older compiles read the same
    assert KernelAbi.from_dict(plain.to_dict()) == plain
    with pytest.raises(ValueError, match="grid_dependent"):
        KernelAbi.from_dict({**abi.to_dict(), "grid_dependent": 1})


@pytest.mark.parametrize("target", ["sm_80", "sm_86", "sm_89"])
def test_builder_refuses_targets_without_griddepcontrol(target: str):
    with pytest.raises(ArgumentError, match=f"griddepcontrol .*the target is {target}"):
        kernels.pdl_chain(256, target=target)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"n": 100}, "multiple of block"),
        ({"n": 0}, "multiple of block"),
        ({"n": 256, "block": 48}, "multiple of 32"),
        ({"n": 256, "block": 2048}, "32 to 1024"),
        ({"n": 256, "dtype": "i32"}, "float element type"),
        ({"n": 256, "trigger": "middle"}, "trigger"),
        ({"n": 256, "early_read": 1}, "early_read to be a bool"),
        ({"n": True}, "multiple of block"),
    ],
)
def test_builder_argument_errors(arguments, message):
    with pytest.raises(ArgumentError, match=message):
        kernels.pdl_chain(**arguments)


def upstream_chain(early: bool = False) -> str:
    """`kernels.pdl_chain` as a frontend that emits NVVM writes it: `nvvm.griddepcontrol`
    in place of the copy ops (`early`: the wait after the read of the predecessor's output)."""
    text = str(kernels.pdl_chain(256, target="sm_90a"))
    text = text.replace("copy.launch_dependents", "nvvm.griddepcontrol launch_dependents")
    text = text.replace("copy.grid_dependency_wait", "nvvm.griddepcontrol wait")
    if early:
        read = "    %9 = memref.load %1[%7] : memref<256xf32>\n"
        wait = "    nvvm.griddepcontrol wait\n"
        assert wait + read in text
        text = text.replace(wait + read, read + wait)
    return text


def test_an_upstream_griddepcontrol_wait_is_the_kernel_s_wait():
    """The kernel rules and the ABI take `nvvm.griddepcontrol wait` as they take
    copy.grid_dependency_wait: the consumer is launched with programmatic stream
    serialization, and a read of the predecessor's output before the wait is GD2."""
    from xdsl.parser import Parser

    from analysis.verify import check_module
    from copy_dialect.errors import CopyVerifyException

    module = Parser(make_context(), upstream_chain()).parse_module()
    check_module(module)
    compiled = compile_module(module, make_context(), "sm_90a")
    assert compiled.abi.kernels["consume"].grid_dependent
    assert not compiled.abi.kernels["produce"].grid_dependent  # (a kernel with no copy op)
    assert compiled.ptx.count("griddepcontrol.wait;") == 1
    assert compiled.ptx.count("griddepcontrol.launch_dependents;") == 1
    early = Parser(make_context(), upstream_chain(early=True)).parse_module()
    with pytest.raises(CopyVerifyException) as caught:
        check_module(early)
    assert "GD2" in caught.value.rules


def test_a_kernel_with_no_copy_op_is_a_kernel_of_the_program():
    """A `gpu.kernel` function of thread code only (pdl_chain's, its ops removed by
    copy-legalize on sm_80) has an ABI record: the runtime can launch it by name."""
    from copy_tools import runtime

    text = str(kernels.pdl_chain(256, target="sm_90a"))
    for op in ("copy.launch_dependents", "copy.grid_dependency_wait"):
        text = text.replace(f"    {op}\n", "")
    text = text.replace('"sm_90a"', '"sm_80"')
    program = runtime.compile(text)
    assert sorted(program.kernels) == ["consume", "produce"]
    assert not any(k.grid_dependent for k in program.abi.kernels.values())
