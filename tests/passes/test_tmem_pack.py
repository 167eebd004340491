"""`pack` / `unpack` (tcgen05.ld .pack::16b, tcgen05.st .unpack::16b) assembled: every shape
at several repeat counts, with each 16-bit element type and 32-bit ref type, through the whole
pipeline to PTX that nvJitLink links into a cubin for each target with tcgen05 and, where a
`ptxas` is on PATH, that ptxas assembles too. A grid of configurations, good and bad, is
verified: each one the verifier accepts is among those assembled, and the rejections are
counted by rule id."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from copy_dialect.attributes import TmemShape
from copy_dialect.errors import CopyVerifyException
from copy_dialect.tmem import TMEM_REGS_PER_NUM
from copy_tools.universe import make_context
from facts.target import TCGEN05
from passes.pipeline import compile_module
from tests.ptxas import check_ptxas

ROOT = Path(__file__).resolve().parents[2]
ELF_MAGIC = b"\x7fELF"
COLS = 256
NUMS = (1, 2, 4, 8)
ELEMENTS = ("f16", "bf16", "i16")
REFS = ("i32", "f32")


def kernel(name: str, shape: str, num: int, element: str, ref: str) -> str:
    """A kernel that loads with pack and stores back with unpack at column 0."""
    n = 2 * num * TMEM_REGS_PER_NUM[TmemShape(shape)]
    offset = f" {{offset = {2 * num} : i64}}" if shape == "shape_16x32bx2" else ""
    t = f"memref<128x{COLS}x{ref}, #copy.tmem>"
    v = f"vector<{n}x{element}>"
    return f"""
  func.func @{name}() attributes {{gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %acc = copy.tmem_alloc : {t}
    %v = copy.tmem_load %acc[%c0] shape {shape} num {num} pack{offset} : {t} -> {v}
    copy.tmem_wait load
    copy.tmem_store %v, %acc[%c0] shape {shape} num {num} unpack{offset} : {v}, {t}
    copy.tmem_wait store
    copy.tmem_dealloc %acc : {t}
    func.return
  }}"""


CONFIGS = [
    (shape.value, num, ELEMENTS[i % 3], REFS[i % 2])
    for i, (shape, num) in enumerate(itertools.product(TmemShape, NUMS))
]


def module_text(target: str, configs: list[tuple[str, int, str, str]]) -> str:
    body = "".join(kernel(f"k{i}", *c) for i, c in enumerate(configs))
    return f'builtin.module attributes {{copy.target = #copy.target<"{target}">}} {{{body}\n}}'


@pytest.mark.parametrize("target", TCGEN05.targets)
def test_every_shape_assembles_packed(target: str, tmp_path: Path):
    assemble(CONFIGS, target, tmp_path)


def assemble(configs: list[tuple[str, int, str, str]], target: str, tmp_path: Path) -> None:
    module = Parser(make_context(), module_text(target, configs)).parse_module()
    module.verify()
    compiled = compile_module(module, make_context(), target)
    assert compiled.cubin.startswith(ELF_MAGIC)
    for shape, num, _, _ in configs:
        ptx_shape = shape.removeprefix("shape_")
        assert f"tcgen05.ld.sync.aligned.{ptx_shape}.x{num}.pack::16b.b32" in compiled.ptx
        assert f"tcgen05.st.sync.aligned.{ptx_shape}.x{num}.unpack::16b.b32" in compiled.ptx
    check_ptxas(compiled.ptx, target, tmp_path)


def verdict(shape: str, num: int, element: str, ref: str, target: str = "sm_100a") -> str:
    """'ok', or the rule id of the verifier's error."""
    text = f'builtin.module attributes {{copy.target = #copy.target<"{target}">}} {{'
    text += kernel("k", shape, num, element, ref) + "\n}"
    module = Parser(make_context(), text).parse_module()
    try:
        module.verify()
    except CopyVerifyException as exc:
        return " ".join(exc.rules) or "?"
    except VerifyException as exc:
        cause = exc.__cause__
        return " ".join(cause.rules) if isinstance(cause, CopyVerifyException) else "?"
    return "ok"


def test_every_accepted_configuration_assembles_and_the_rest_are_counted(tmp_path: Path):
    grid = itertools.product(
        [s.value for s in TmemShape], (1, 8, 64), ("f16", "f32", "i8"), ("i32", "f16")
    )
    counts: Counter[str] = Counter()
    accepted = []
    for config in grid:
        got = verdict(*config)
        counts[got] += 1
        if got == "ok":
            accepted.append(config)
    print(dict(counts))  # 13 accepted; rejected: J25 59, J23 9, J4 6, J18 3
    assemble(accepted, "sm_100a", tmp_path)
    assert counts["ok"]
    assert counts["J25"]
    assert set(counts) <= {"ok", "J4", "J18", "J23", "J25"}, counts
    assert verdict("shape_32x32b", 2, "f16", "i32", "sm_120a") == "A14"
