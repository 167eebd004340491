"""A sparse MMA's metadata (`copy.smem_to_tmem ... metadata`, J13: i2 values, tcgen05.cp
128x128b) from GMEM to TMEM: the lit kernel (lit_tests/passes/sparse-metadata-ptx.mlir: a bulk
copy into an unswizzled SMEM tile, the tile copied into TMEM at column 4, committed to an
mbarrier every thread waits on) is proven by the protocol analysis, links with nvJitLink for
every target with tcgen05 (and assembles with ptxas, where on PATH), and runs under the
interpreter with the metadata's bytes in TMEM bit-exact against numpy (row r's 16 bytes in
lane r's 4 columns, little-endian) under every schedule. The copy issued before the bulk
copy's wait is rejected by the analysis and caught by the interpreter at the same op. Not run
on a GPU (the project's is an H200, with no TMEM); the ISA gives the layout of metadata in
TMEM per MMA kind (PTX ISA 9.7.16.10.8, sparsity selector), which the copy does not
interpret: it moves bits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_dialect.errors import CopyDiagnosticError
from copy_tools.universe import make_context
from facts.target import TCGEN05
from interpreter import ops_tmem
from passes.pipeline import compile_module
from tests.ptxas import check_ptxas

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "lit_tests" / "passes" / "sparse-metadata-ptx.mlir"
ELF_MAGIC = b"\x7fELF"
SCHEDULES = ("round_robin", "random", "adversarial")
WAIT = "    copy.barrier_wait %full[%c0], %false : !copy.barrier<1>\n"
EARLY = LIT.read_text().replace(WAIT, "")
"""The copy to TMEM issued before the metadata arrived: the wait moved after it."""
EARLY = EARLY.replace("    scf.if %leader {\n", WAIT + "    scf.if %leader {\n", 1)


def parse(text: str):
    return Parser(make_context(), text).parse_module()


@pytest.mark.parametrize("target", TCGEN05.targets)
def test_the_metadata_copy_assembles(target: str, tmp_path: Path):
    module = parse(LIT.read_text().replace('"sm_100a"', f'"{target}"'))
    compiled = compile_module(module, make_context(), target)
    assert compiled.cubin.startswith(ELF_MAGIC)
    assert "tcgen05.cp.cta_group::1.128x128b" in compiled.ptx
    check_ptxas(compiled.ptx, target, tmp_path)


def tmems(monkeypatch: pytest.MonkeyPatch) -> list[ops_tmem.Tmem]:
    """Every CTA's TMEM the interpreter creates from now on (its cells outlive the
    dealloc)."""
    made: list[ops_tmem.Tmem] = []
    init = ops_tmem.Tmem.__init__

    def record(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(ops_tmem.Tmem, "__init__", record)
    return made


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_the_metadata_lands_in_the_lanes_bit_exact(schedule: str, monkeypatch):
    module = parse(LIT.read_text())
    verify_module(module)  # valid, and proven
    made = tmems(monkeypatch)
    meta = np.random.default_rng(7).integers(0, 256, (128, 16), np.uint8)  # 64 i2 a row
    run = interpreter.run(module, meta, schedule=schedule, seed=1)
    assert run.violations == [], [str(v) for v in run.violations]
    [tmem] = made
    words = meta.view("<u4")  # row r's bytes 4c .. 4c + 3 in column c
    np.testing.assert_array_equal(tmem.cells[:, 4:8], words)
    assert not tmem.cells[:, :4].any()
    assert not tmem.cells[:, 8:32].any()


def test_the_copy_before_the_metadata_arrived_is_caught_by_both():
    with pytest.raises(CopyDiagnosticError) as found:
        verify_module(parse(EARLY))
    rules = found.value.rules
    assert found.value.message.split("'")[1] == "copy.smem_to_tmem", found.value.message
    meta = np.zeros((128, 16), np.uint8)
    for schedule in SCHEDULES:
        run = interpreter.run(parse(EARLY), meta, schedule=schedule, seed=0)
        hits = [v for v in run.violations if v.rule in rules]
        assert hits, (schedule, rules, [str(v) for v in run.violations])
        assert hits[0].op.name == "copy.smem_to_tmem"
