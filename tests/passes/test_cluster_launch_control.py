"""Cluster launch control (`copy.try_cancel`, `copy.query_cancel`), compiled: every kernel of
their positive lit tests, for each target of the table, verifies exactly where the PTX ISA
has the instructions (sm_100 and newer; `.multicast::cluster::all` on the arch- and
family-specific ones: sm_100a/f, sm_103a, sm_110a/f, sm_120a) and there goes through the
whole pipeline to PTX that nvJitLink assembles into a cubin and, where `ptxas` is on PATH,
that ptxas assembles too (each test as written, its requests multicast, and with every
request unicast); the PTX holds the instructions the lowering promises. A multicast request
retargeted to sm_120 is refused by the verifier (LC2), which is also where LLVM 22 cannot
select it. A fuzz over 400 configurations (target, multicast from CTA 0 of a pair or a CTA
alone, the response buffer's element type, shape, memory space, swizzle and indices): every
one the verifier accepts assembles (133 with seed 33), the rejections counted by rule id
(printed; LC1, LC2 and LC3 among them)."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from analysis.verify import verify_module
from copy_dialect import ops as copy
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from facts.target import TARGETS
from passes.pipeline import compile_module, retarget
from tests.ptxas import check_ptxas

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
    check_ptxas(compiled.ptx, target, tmp_path)


def test_gates():
    assert copy.CLUSTER_LAUNCH_CONTROL.targets == (
        "sm_100a",
        "sm_100f",
        "sm_103a",
        "sm_110a",
        "sm_110f",
        "sm_120",
        "sm_120a",
    )
    assert copy.CLC_MULTICAST.targets == (
        "sm_100a",
        "sm_100f",
        "sm_103a",
        "sm_110a",
        "sm_110f",
        "sm_120a",
    )


# --- fuzz ----------------------------------------------------------------------------------

ELEMENTS = {"i8": 1, "i16": 2, "f16": 2, "i32": 4, "f32": 4, "i64": 8}

FUZZ_KERNEL = """builtin.module attributes {{copy.target = #copy.target<"{target}">}} {{
  func.func @k(%out: memref<128xi32>{arg}) attributes {{gpu.kernel,
      gpu.known_block_size = array<i32: 128, 1, 1>{cluster}}} {{
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %false = arith.constant false
{alloc}    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
{prologue}    copy.barrier_arrive_expect_tx %bar[%c0], 16 : !copy.barrier<1>
{request}    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    %ok, %x, %y, %z = copy.query_cancel %resp{index} : {type}
    %t = gpu.thread_id x
    memref.store %x, %out[%t] : memref<128xi32>
    func.return
  }}
}}
"""


def fuzz_kernel(rng: random.Random) -> tuple[str, str, bool]:
    """A random kernel with one request and its query: target, multicast (CTA 0 of a pair
    requesting for both, or a CTA alone), the response buffer's element type, shape, memory
    space and swizzle, and how many of its dims the ops index."""
    target = rng.choice([*TARGETS, *copy.CLUSTER_LAUNCH_CONTROL.targets * 3])
    multicast = rng.random() < 0.4
    pair = multicast and rng.random() < 0.7
    element = rng.choice(list(ELEMENTS))
    # Mostly a slot of 16 bytes, sometimes any size.
    inner = 16 // ELEMENTS[element] if rng.random() < 0.7 else rng.choice([1, 2, 4, 8, 16, 32])
    shape = [rng.choice([1, 2, 4]) for _ in range(rng.choice([0, 0, 1, 2]))] + [inner]
    indices = rng.choice(range(len(shape) + 1)) if rng.random() < 0.3 else len(shape) - 1
    where = rng.choice(["smem"] * 6 + ["swizzled", "gmem"])
    space = {"smem": ", #copy.smem", "swizzled": ", #copy.smem<swizzle = 128>", "gmem": ""}
    t = f"memref<{'x'.join(map(str, shape))}x{element}{space[where]}>"
    arg, alloc = "", f"    %resp = copy.alloc_smem : {t}\n"
    if where == "gmem":
        arg, alloc = f", %resp: {t}", ""
    prologue, request = (
        "",
        "copy.try_cancel %resp{index} barrier %bar[%c0]{mc} : {t}, !copy.barrier<1>",
    )
    index = f"[{', '.join(['%c0'] * indices)}]" if indices else ""
    request = "    " + request.format(index=index, mc=" multicast" if multicast else "", t=t) + "\n"
    if pair:
        prologue = (
            "    copy.cluster_sync\n    %bx = gpu.block_id x\n"
            "    %rank = arith.remui %bx, %c2 : index\n"
            "    %lead = arith.cmpi eq, %rank, %c0 : index\n"
        )
        request = f"    scf.if %lead {{\n  {request}    }}\n"
    cluster = ", copy.cluster = array<i32: 2, 1, 1>" if pair else ""
    text = FUZZ_KERNEL.format(
        target=target, arg=arg, cluster=cluster, alloc=alloc, prologue=prologue,
        request=request, index=index, type=t,
    )  # fmt: skip
    return text, target, multicast


def rejection(err: VerifyException) -> str:
    if isinstance(err, CopyVerifyException):
        return "/".join(err.rules) or "untagged"
    return "xdsl"


def test_fuzz_accepted_configurations_assemble(tmp_path: Path):
    """Every configuration the verifier accepts assembles (nvJitLink; ptxas where on PATH)
    and holds its request; the rejections, counted by rule id (printed), reach LC1-LC3."""
    rng = random.Random(33)
    rejected: Counter[str] = Counter()
    accepted: Counter[str] = Counter()
    for _ in range(400):
        text, target, multicast = fuzz_kernel(rng)
        module = Parser(make_context(), text).parse_module()
        try:
            verify_module(module)
        except VerifyException as err:
            rejected[rejection(err)] += 1
            continue
        accepted[f"{'multicast' if multicast else 'unicast'} {target}"] += 1
        compiled = compile_module(module, make_context(), target)
        assert compiled.cubin.startswith(b"\x7fELF"), text
        assert TRY_CANCEL in compiled.ptx, text
        assert (MULTICAST in compiled.ptx) == multicast, text
        check_ptxas(compiled.ptx, target, tmp_path, context=text)
    print(f"\naccepted {sum(accepted.values())}: {dict(sorted(accepted.items()))}")
    print(f"rejected {sum(rejected.values())} by rule: {dict(rejected.most_common())}")
    reached = {r for key in rejected for r in key.split("/")}
    assert {"LC1", "LC2", "LC3"} <= reached, {"LC1", "LC2", "LC3"} - reached
    assert "untagged" not in rejected
    assert "xdsl" not in rejected
    assert sum(accepted.values()) >= 100
