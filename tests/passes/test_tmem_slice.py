"""`copy.tmem_slice` assembled: the lit kernel (lit_tests/passes/tmem-slice-ptx.mlir) through
the whole pipeline to PTX that nvJitLink links for each target with tcgen05 and ptxas (where
on PATH) assembles; and a grid of slices (start, width, element type, lanes): every one the
verifier accepts, loaded from (32-bit elements) or copied into (the 8-bit scale layout),
assembles for sm_100a, and the rejections are counted by rule id. Never run: the project's
GPU is an H200."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest
from xdsl.parser import Parser

from analysis.verify import verify_module
from copy_dialect.errors import CopyDiagnosticError
from copy_tools.universe import make_context
from facts.target import TCGEN05
from passes.pipeline import compile_module
from tests.ptxas import check_ptxas

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "lit_tests" / "passes" / "tmem-slice-ptx.mlir"
ELF_MAGIC = b"\x7fELF"
BITS = {"f32": 32, "f16": 16, "i8": 8}


@pytest.mark.parametrize("target", TCGEN05.targets)
def test_slice_kernel_assembles(target: str, tmp_path: Path):
    text = LIT.read_text().replace('"sm_100a"', f'"{target}"')
    module = Parser(make_context(), text).parse_module()
    compiled = compile_module(module, make_context(), target)
    assert compiled.cubin.startswith(ELF_MAGIC)
    assert "tcgen05.ld.sync.aligned.32x32b.x4.b32" in compiled.ptx
    check_ptxas(compiled.ptx, target, tmp_path)


def kernel(name: str, start: int, width: int, element: str, lanes: int) -> str:
    """A 128-column allocation of `element`s per lane, its slice, and an access of it."""
    per_lane = 128 * 32 // BITS[element]
    parent = f"memref<128x{per_lane}x{element}, #copy.tmem>"
    view = f"memref<{lanes}x{width}x{element}, #copy.tmem>"
    if element == "f32":
        use = (
            f"    %v = copy.tmem_load %s[%c0] shape shape_32x32b num 1 : {view} -> vector<1xf32>\n"
            "    copy.tmem_wait load\n"
        )
    elif element == "i8":
        src = "memref<128x16xi8, #copy.smem>"
        use = (
            f"    %b = copy.alloc_smem : {src}\n"
            f"    copy.smem_to_tmem %b to %s[%c0] shape shape_128x128b : {src}, {view}\n"
        )
    else:
        use = ""
    return (
        f"  func.func @{name}() attributes {{gpu.kernel, "
        "gpu.known_block_size = array<i32: 128, 1, 1>} {\n"
        "    %c0 = arith.constant 0 : index\n"
        f"    %t = copy.tmem_alloc : {parent}\n"
        f"    %s = copy.tmem_slice %t[{start}] : {parent} -> {view}\n"
        + use
        + f"    copy.tmem_dealloc %t : {parent}\n    func.return\n  }}\n"
    )


def module_text(kernels: list[str]) -> str:
    body = "".join(kernels)
    return f'builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{\n{body}}}'


def verdict(config: tuple[int, int, str, int]) -> str:
    module = Parser(make_context(), module_text([kernel("k", *config)])).parse_module()
    try:
        verify_module(module, protocol=False)
    except CopyDiagnosticError as exc:
        return " ".join(exc.rules) or "?"
    return "ok"


def test_accepted_slices_assemble_and_rejections_are_counted(tmp_path: Path):
    grid = itertools.product(
        (0, 1, 3, 32, 96, 200), (1, 8, 16, 32, 64, 256), tuple(BITS), (128, 64)
    )
    counts: Counter[str] = Counter()
    accepted = []
    for config in grid:
        got = verdict(config)
        counts[got] += 1
        if got == "ok":
            accepted.append(config)
    # 56 accepted; rejected: J7 156, J23 4
    print(dict(counts))
    kernels = [kernel(f"k{n}", *c) for n, c in enumerate(accepted)]
    module = Parser(make_context(), module_text(kernels)).parse_module()
    compiled = compile_module(module, make_context(), "sm_100a", verify_protocol=False)
    assert compiled.cubin.startswith(ELF_MAGIC)
    check_ptxas(compiled.ptx, "sm_100a", tmp_path)
    assert counts["ok"] >= 10, counts
    assert set(counts) - {"ok"} == {"J7", "J23"}, counts
