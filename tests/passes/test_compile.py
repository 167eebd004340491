"""Everything compiles: each example, and each op configuration of the positive lit tests,
for each target that accepts it, through the whole pipeline to a cubin that nvJitLink
assembled (no GPU needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from copy_tools.universe import make_context
from passes.pipeline import compile_module, retarget

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
TARGETS = ("sm_80", "sm_90a", "sm_100a", "sm_103a", "sm_110a")
POSITIVE_LIT_TESTS = [
    ROOT / "lit_tests" / "dialects" / "copy" / "ops.mlir",
    ROOT / "lit_tests" / "passes" / "convert-copy-to-nvvm.mlir",
    ROOT / "lit_tests" / "passes" / "ptx.mlir",
]
ELF_MAGIC = b"\x7fELF"


def chunks(path: Path) -> list[str]:
    return [c for c in path.read_text().split("// -----") if "copy." in c]


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def valid_for(module, target: str) -> bool:
    """Retargets the module; False if its copy ops are not valid for `target`."""
    retarget(module, target)
    try:
        module.verify()
    except VerifyException:
        return False
    return True


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_compiles_for_its_target(path: Path):
    module = parse(path.read_text())
    compiled = compile_module(module, make_context())
    assert compiled.cubin.startswith(ELF_MAGIC)
    assert ".extern .func" not in compiled.ptx
    (kernel,) = compiled.abi.kernels.values()
    assert kernel.params


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("target", TARGETS)
def test_example_compiles_for_every_target_it_allows(path: Path, target: str):
    module = parse(path.read_text())
    if not valid_for(module, target):
        pytest.skip(f"{path.name} is not valid for {target}")
    compiled = compile_module(module, make_context(), target)
    assert compiled.cubin.startswith(ELF_MAGIC)


@pytest.mark.parametrize("path", POSITIVE_LIT_TESTS, ids=lambda p: p.stem)
def test_lit_configurations_compile(path: Path):
    compiled = 0
    for chunk in chunks(path):
        for target in TARGETS:
            module = parse(chunk)
            if not valid_for(module, target):
                continue
            result = compile_module(module, make_context(), target)
            assert result.cubin.startswith(ELF_MAGIC), f"{path.name} on {target}"
            compiled += 1
    assert compiled > 0
