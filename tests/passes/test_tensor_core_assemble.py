"""The tensor-core operand ops of issue 31 (`copy.matrix_descriptor`, the `nvvm.wgmma.*` ops):
every kernel of their positive lit tests, for each target it is meant for, through the whole
pipeline to PTX that nvJitLink assembles into a cubin and, where a `ptxas` is on PATH, that
ptxas assembles too (`ptxas -v` also says whether a wgmma was serialized).

A descriptor is integer arithmetic, so its kernels assemble for every target; `wgmma` is
sm_90a only (PTX: `wgmma` needs `sm_90a`); `tcgen05.mma` and `tcgen05.commit` assemble for
every tcgen05 target (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f), kind::i8 for sm_100a and
sm_110a alone; an MMA with a scale-input-d for sm_100a/f and sm_103a: for sm_110a/f, where
ptxas 13.0 refuses the immediate and LLVM 22 cannot select it, the verifier rejects it before
the lowering (the kernel rule MI8, docs/targets.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from copy_dialect.errors import CopyDiagnosticError
from copy_dialect.instruction_descriptor import MMA_I8
from copy_tools.universe import make_context
from facts.target import MMA_SCALE_INPUT_D, TCGEN05, target_named
from passes import backend
from passes.pipeline import compile_module
from tests.passes.test_thread_ops_assemble import ELF_MAGIC, TARGETS, kernels, valid_for

ROOT = Path(__file__).resolve().parents[2]
LIT_TESTS = {
    ROOT / "lit_tests" / "passes" / "descriptor-ptx.mlir": TARGETS,
    ROOT / "lit_tests" / "dialects" / "copy" / "descriptor.mlir": TARGETS,
    ROOT / "lit_tests" / "passes" / "wgmma-ptx.mlir": ("sm_90a",),
    ROOT / "lit_tests" / "passes" / "tcgen05-mma-ptx.mlir": TCGEN05.targets,
    ROOT / "lit_tests" / "passes" / "tcgen05-mma-i8-ptx.mlir": MMA_I8.targets,
}

CASES = [
    pytest.param(path, i, target, id=f"{path.stem}-{i}-{target}")
    for path, targets in LIT_TESTS.items()
    for i in range(len(kernels(path)))
    for target in targets
]


@pytest.mark.parametrize(("path", "index", "target"), CASES)
def test_assembles(path: Path, index: int, target: str, tmp_path: Path):
    text = kernels(path)[index]
    module = valid_for(text, target)
    assert module is not None, f"kernel {index} of {path.name} does not verify for {target}"
    if " scale = " in text and not MMA_SCALE_INPUT_D.has(target_named(target)):
        with pytest.raises(CopyDiagnosticError, match="scale-input-d") as exc:
            compile_module(module, make_context(), target)
        assert exc.value.rules == ("MI8",)
        return
    compiled = compile_module(module, make_context(), target)
    assert compiled.cubin.startswith(ELF_MAGIC)
    assert ".extern .func" not in compiled.ptx
    if not backend.ptxas_available():
        return
    source = tmp_path / "k.ptx"
    source.write_text(compiled.ptx)
    out = subprocess.run(
        ["ptxas", "-v", f"-arch={target}", str(source), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert "serialized" not in out.stderr, out.stderr
    assert "spill" not in out.stderr or " 0 bytes spill stores" in out.stderr, out.stderr
