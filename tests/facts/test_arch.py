"""PTX for one target assembled for a later GPU (`arch`): which pairs the target table
allows, the cubin's SASS, the ABI that records it and the device check that reads it. No GPU
needed (nvJitLink assembles; the device check runs on recorded facts)."""

from __future__ import annotations

import pytest

from copy_tools import runtime
from copy_tools.universe import make_context
from facts.abi import ModuleAbi
from facts.target import TARGETS, check_arch
from frontends import kernels
from passes import backend
from passes.legalize import CopyLegalizePass
from runtime.driver import DeviceFacts
from runtime.kernel import check_device


def elf_sm(cubin: bytes) -> int:
    """The SM a CUDA ELF's SASS is for: bits 8-15 of e_flags."""
    return (int.from_bytes(cubin[0x30:0x34], "little") >> 8) & 0xFF


@pytest.mark.parametrize(
    ("target", "arch", "runs"),
    [
        ("sm_80", "sm_80", True),
        ("sm_80", "sm_86", True),
        ("sm_80", "sm_90", True),
        ("sm_80", "sm_90a", True),
        ("sm_86", "sm_80", False),
        ("sm_90", "sm_100a", True),
        ("sm_90a", "sm_90", False),  # arch-specific: its own GPU only
        ("sm_90a", "sm_100a", False),
        ("sm_100f", "sm_103a", True),  # family-specific: later GPUs of its family
        ("sm_100f", "sm_120", False),
        ("sm_100f", "sm_110a", False),  # Thor (11.0) is a family of its own, not sm_100f's
        ("sm_110f", "sm_110a", True),
        ("sm_110a", "sm_120a", False),
        ("sm_90", "sm_110a", True),
    ],
)
def test_which_gpus_run_which_ptx(target, arch, runs):
    assert TARGETS[target].assembles_for(TARGETS[arch]) is runs
    if runs:
        check_arch(TARGETS[target], TARGETS[arch])
    else:
        with pytest.raises(ValueError, match=f"expected an arch that runs {target} PTX"):
            check_arch(TARGETS[target], TARGETS[arch])


def legalized_copy():
    module = kernels.tma_copy((300, 200), "f32", (64, 64))
    CopyLegalizePass(target="sm_80").apply(make_context(), module)
    return module


def test_sm80_code_assembled_for_sm90():
    program = runtime.compile(legalized_copy(), "sm_80", arch="sm_90")
    assert elf_sm(program.cubin) == 90
    assert (program.abi.target, program.abi.arch, program.abi.runs_on) == (
        "sm_80",
        "sm_90",
        "sm_90",
    )
    assert "arch=sm_90" in repr(program)
    again = ModuleAbi.from_json(program.abi.to_json())
    assert again == program.abi
    # Without arch: the target's own SASS, and no arch in the record.
    own = runtime.compile(legalized_copy(), "sm_80")
    assert elf_sm(own.cubin) == 80
    assert own.abi.arch is None
    assert "arch" not in own.abi.to_dict()


def test_the_ptx_is_the_targets():
    ptx, cubin = backend.compile_ptx_and_cubin(backend_ir(), "sm_80", arch="sm_90")
    assert ".target sm_80" in ptx
    assert elf_sm(cubin) == 90
    assert elf_sm(backend.compile_cubin(ptx, "sm_80", "sm_86")) == 86


def backend_ir() -> str:
    from passes import translate_llvm
    from passes.pipeline import LowerCopyToLLVMPass

    module = legalized_copy()
    LowerCopyToLLVMPass(target="sm_80").apply(make_context(), module)
    return translate_llvm.translate_module(module)


def test_a_gpu_that_cannot_run_the_ptx_is_refused_before_compiling():
    with pytest.raises(ValueError, match="arch-specific PTX assembles for its own GPU only"):
        runtime.compile(kernels.tma_copy((300, 200), "f32", (64, 64)), arch="sm_90")
    with pytest.raises(backend.BackendError, match="PTX assembles for its own GPU or a later"):
        backend.compile_cubin(".version 8.0\n.target sm_90\n", "sm_90", "sm_80")


def test_the_device_check_reads_the_arch():
    h200 = DeviceFacts(name="NVIDIA H200", compute_capability=(9, 0), max_smem_optin=232448)
    with pytest.raises(ValueError, match="expected a GPU that runs sm_80 code"):
        check_device("sm_80", 1024, h200)
    check_device(ModuleAbi("sm_80", {}, "sm_90").runs_on, 1024, h200)
