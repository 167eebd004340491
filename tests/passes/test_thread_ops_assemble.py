"""The thread-level ops of issue 31 (the math and float arith ops, `vector.insert/extract`,
`copy.ldmatrix`/`copy.stmatrix`, swizzled vector accesses): every kernel of their positive
lit tests, for each target that accepts it, through the whole pipeline to PTX that nvJitLink
assembles into a cubin and, where a `ptxas` is on PATH, that ptxas assembles too (a second
opinion on the PTX: nvJitLink and ptxas are separate front ends)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from copy_tools.universe import make_context
from passes.pipeline import compile_module, retarget
from tests.ptxas import check_ptxas

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ("sm_80", "sm_90a", "sm_100a", "sm_110a", "sm_120a")
LIT_TESTS = [
    ROOT / "lit_tests" / "passes" / "math-ptx.mlir",
    ROOT / "lit_tests" / "dialects" / "copy" / "matrix.mlir",
    ROOT / "lit_tests" / "passes" / "matrix-ptx.mlir",
    ROOT / "lit_tests" / "passes" / "swizzled-vector-ptx.mlir",
]
ELF_MAGIC = b"\x7fELF"


def kernels(path: Path) -> list[str]:
    """The `// -----` chunks of a lit test that hold a kernel."""
    return [c for c in path.read_text().split("// -----") if "gpu.kernel" in c]


def valid_for(text: str, target: str):
    """The module retargeted to `target`, or None if it does not verify there."""
    module = Parser(make_context(), text).parse_module()
    retarget(module, target)
    try:
        module.verify()
    except VerifyException:
        return None
    return module


CASES = [
    pytest.param(path, i, target, id=f"{path.stem}-{i}-{target}")
    for path in LIT_TESTS
    for i in range(len(kernels(path)))
    for target in TARGETS
]


@pytest.mark.parametrize(("path", "index", "target"), CASES)
def test_assembles(path: Path, index: int, target: str, tmp_path: Path):
    module = valid_for(kernels(path)[index], target)
    if module is None:
        pytest.skip(f"kernel {index} of {path.name} is not valid for {target}")
    compiled = compile_module(module, make_context(), target)
    assert compiled.cubin.startswith(ELF_MAGIC)
    assert ".extern .func" not in compiled.ptx
    check_ptxas(compiled.ptx, target, tmp_path)


def test_each_lit_test_has_kernels():
    for path in LIT_TESTS:
        assert kernels(path), path
