"""TMEM of a CTA pair (`cta_group 2`) assembled: the pair's allocation, relinquish, copy and
release (lit_tests/passes/tmem-pair-ptx.mlir) through the whole pipeline to PTX that
nvJitLink links into a cubin for each target with tcgen05 and, where a `ptxas` is on PATH,
that ptxas assembles too, with `.cta_group::2` on every tcgen05 instruction; on a target
without tcgen05 the verifier refuses it (A14). Never run: the project's GPU is an H200."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.parser import Parser

from copy_dialect.errors import CopyDiagnosticError
from copy_tools.universe import make_context
from facts.target import TCGEN05
from passes.pipeline import compile_module
from tests.ptxas import check_ptxas

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "lit_tests" / "passes" / "tmem-pair-ptx.mlir"
ELF_MAGIC = b"\x7fELF"
PAIR_INSTRUCTIONS = (
    "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32",
    "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned",
    "tcgen05.cp.cta_group::2.32x128b.warpx4",
    "tcgen05.dealloc.cta_group::2.sync.aligned.b32",
)


def lit_module(target: str):
    text = LIT.read_text().replace('"sm_100a"', f'"{target}"')
    return Parser(make_context(), text).parse_module()


@pytest.mark.parametrize("target", TCGEN05.targets)
def test_pair_kernel_assembles(target: str, tmp_path: Path):
    compiled = compile_module(lit_module(target), make_context(), target)
    assert compiled.cubin.startswith(ELF_MAGIC)
    for instruction in PAIR_INSTRUCTIONS:
        assert instruction in compiled.ptx, instruction
    assert "cta_group::1" not in compiled.ptx
    check_ptxas(compiled.ptx, target, tmp_path)


def test_pair_kernel_needs_tcgen05():
    with pytest.raises(CopyDiagnosticError, match="needs a target with tcgen05"):
        compile_module(lit_module("sm_120a"), make_context(), "sm_120a")
