"""Cluster launch control (`copy.try_cancel`, `copy.query_cancel`), compiled: every kernel of
their positive lit tests, for each target of the table, verifies exactly where the PTX ISA
has the instructions (sm_100 and newer; `.multicast::cluster::all` on the arch- and
family-specific ones: sm_100a/f, sm_103a, sm_120a) and there goes through the whole pipeline
to PTX that nvJitLink assembles into a cubin and, where `ptxas` is on PATH, that ptxas
assembles too (each test as written, its requests multicast, and with every request
unicast); the PTX holds the instructions the lowering promises. A multicast request
retargeted to sm_120 is refused by the verifier (LC2), which is also where LLVM 22 cannot
select it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from analysis.verify import verify_module
from copy_dialect import ops as copy
from copy_tools.universe import make_context
from facts.target import TARGETS
from passes import backend
from passes.pipeline import compile_module, retarget

ROOT = Path(__file__).resolve().parents[2]
LIT_TESTS = [
    ROOT / "lit_tests" / "dialects" / "copy" / "cluster-launch-control.mlir",
    ROOT / "lit_tests" / "passes" / "clusterlaunchcontrol-ptx.mlir",
]
TRY_CANCEL = "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes"
MULTICAST = ".multicast::cluster::all.b128"


def valid_for(text: str, target: str):
    """The module retargeted to `target`, or None if it does not verify there."""
    module = Parser(make_context(), text).parse_module()
    retarget(module, target)
    try:
        verify_module(module)
    except VerifyException:
        return None
    return module


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("multicast", [True, False], ids=["multicast", "unicast"])
@pytest.mark.parametrize("path", LIT_TESTS, ids=lambda p: p.stem)
def test_assembles(path: Path, multicast: bool, target: str, tmp_path: Path):
    """Each lit test as written (its requests multicast) and with every request unicast."""
    text = path.read_text()
    assert " multicast :" in text
    if not multicast:  # every CTA requests for itself: the condition on its rank always holds
        text = text.replace(" multicast :", " :")
        text = text.replace("arith.cmpi eq, %rank, %c0 :", "arith.cmpi eq, %rank, %rank :")
    needs = copy.CLC_MULTICAST if multicast else copy.CLUSTER_LAUNCH_CONTROL
    module = valid_for(text, target)
    assert (module is not None) == (target in needs.targets)
    if module is None:
        pytest.skip(f"{path.name} is not valid for {target}")
    compiled = compile_module(module, make_context(), target)
    assert compiled.cubin.startswith(b"\x7fELF")
    assert TRY_CANCEL in compiled.ptx
    assert (MULTICAST in compiled.ptx) == multicast
    assert "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128" in compiled.ptx
    if backend.ptxas_available():
        source = tmp_path / "k.ptx"
        source.write_text(compiled.ptx)
        out = subprocess.run(
            ["ptxas", f"-arch={target}", str(source), "-o", str(tmp_path / "k.cubin")],
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, out.stderr


def test_gates():
    assert copy.CLUSTER_LAUNCH_CONTROL.targets == (
        "sm_100a",
        "sm_100f",
        "sm_103a",
        "sm_120",
        "sm_120a",
    )
    assert copy.CLC_MULTICAST.targets == ("sm_100a", "sm_100f", "sm_103a", "sm_120a")
