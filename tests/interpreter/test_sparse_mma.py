"""The structured-sparse MMA (`nvvm.tcgen05.mma.sp`, kind::f16 2:4, sm_100a) of
lit_tests/passes/sparse-mma-ptx.mlir: A's kept elements, B and the metadata loaded on one
barrier, the metadata copied into TMEM (tcgen05.cp), four MMAs of 32 elements of K (the
selector 0, 1, then the metadata pointer 2 columns on), a commit every thread waits on.

- Under the interpreter, under every schedule, D is bit-exact against numpy's product of the
  dense A (the kept elements at the metadata's positions) and B: the inputs are small
  integers, so every f32 sum is exact in any order. The metadata are written as Mosaic GPU's
  `format_tcgen05_sparse_metadata` lays out 16-bit operands' (PTX ISA 9.7.16.10.8.4), so the
  interpreter's reading of them (`interpreter.ops_tcgen05.sparse_a`) is that layout's.
- The kernel is proven by the protocol analysis and links with nvJitLink for every target
  with tcgen05 (and assembles with ptxas, where on PATH).
- The metadata written into TMEM by another role (lit_tests/dialects/copy/
  protocol-sparse-mma.mlir: the epilogue warps' tcgen05.st, fenced before their arrival; the
  MMA warp's wait, then the after fence): proven and bit-exact under every schedule; without
  either fence (invalid-protocol-sparse-mma.mlir), P14 at the sparse MMA in the analysis and
  in the interpreter (the MMA's read of the metadata is a TMEM access, as an A's in TMEM is).
- A descriptor whose sparse bit disagrees with the op is MI9 (the kernel rule); metadata
  naming one element twice in a group (PTX ISA: undefined) leave their row of D NaN.
Not run on a GPU: the project's is an H200, with no TMEM."""

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
from passes.pipeline import compile_module
from tests.corpus import format_sparse_metadata, pack_i2, small_ints, sparse_operand
from tests.ptxas import check_ptxas

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "lit_tests" / "passes" / "sparse-mma-ptx.mlir"
TEXT = LIT.read_text()
ELF_MAGIC = b"\x7fELF"
SCHEDULES = ("round_robin", "random", "adversarial")
M, N, K = 128, 64, 128


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def case(seed: int):
    """Compressed A (M, K / 2), B (N, K), the packed metadata and the dense product."""
    rng = np.random.default_rng(seed)
    kept, pick, dense = sparse_operand(rng, M, K)
    b = small_ints(rng, (N, K))
    [[layout]] = format_sparse_metadata(pick)
    return kept, b, pack_i2(layout), dense @ b.astype(np.float32).T


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_the_sparse_product_is_bit_exact(schedule: str):
    module = parse(TEXT)
    verify_module(module)  # valid, and proven
    kept, b, meta, want = case(3)
    out = np.zeros((M, N), np.float32)
    run = interpreter.run(module, kept, b, meta, out, schedule=schedule, seed=1)
    assert run.violations == [], [str(v) for v in run.violations]
    np.testing.assert_array_equal(run.arrays[3], want)
    assert np.abs(want).max() > 8  # (not a product of zeros)


def test_each_metadata_position_matters():
    """Moving one kept element (another index, still distinct from its pair's) changes D's
    row 37 alone: lane 37's byte 5 holds fields 20-23 of its column 1, the first two of them
    row 37's (m1 = 0) group of elements 8 k1 + k2 = 4, 5 (k1 = 0, lane 37 = 16 * 2 + 5)."""
    kept, b, meta, want = case(4)
    moved = meta.copy()
    first, second = moved[37, 5] & 3, moved[37, 5] >> 2 & 3
    other = min({0, 1, 2, 3} - {int(first), int(second)})
    moved[37, 5] = moved[37, 5] & ~np.uint8(3) | np.uint8(other)
    out = np.zeros((M, N), np.float32)
    run = interpreter.run(parse(TEXT), kept, b, moved, out, seed=1)
    assert run.violations == [], [str(v) for v in run.violations]
    changed = np.nonzero((run.arrays[3] != want).any(axis=1))[0]
    assert changed.tolist() == [37]


def test_metadata_naming_an_element_twice_leave_the_row_undefined():
    """Two equal indices in a group are undefined (PTX ISA): the interpreter leaves that row
    of D NaN, every other row exact, and the run goes on (a fault of the data, not of the
    protocol)."""
    kept, b, meta, want = case(5)
    bad = meta.copy()
    bad[0, 0] = 0  # lane 0's first two fields: row 0's group 0 names element 0 twice
    out = np.zeros((M, N), np.float32)
    run = interpreter.run(parse(TEXT), kept, b, bad, out, seed=1)
    assert run.violations == [], [str(v) for v in run.violations]
    assert np.isnan(run.arrays[3][0]).all()
    np.testing.assert_array_equal(run.arrays[3][1:], want[1:])


@pytest.mark.parametrize("target", TCGEN05.targets)
def test_the_sparse_kernel_assembles(target: str, tmp_path: Path):
    module = parse(TEXT.replace('"sm_100a"', f'"{target}"'))
    compiled = compile_module(module, make_context(), target)
    assert compiled.cubin.startswith(ELF_MAGIC)
    assert "tcgen05.mma.sp.cta_group::1.kind::f16" in compiled.ptx
    check_ptxas(compiled.ptx, target, tmp_path)


HANDOFF = (ROOT / "lit_tests/dialects/copy/protocol-sparse-mma.mlir").read_text()
INVALID = ROOT / "lit_tests/dialects/copy/invalid-protocol-sparse-mma.mlir"
UNFENCED = INVALID.read_text().split("// -----")
"""The metadata stored into TMEM by the epilogue role and read by the MMA warp's sparse MMAs:
fenced (proven), and without the before or the after fence (P14)."""


def handoff_args(seed: int) -> tuple[list[np.ndarray], np.ndarray]:
    kept, b, meta, want = case(seed)
    return [kept, b, meta.view("<u4").view(np.int32), np.zeros((M, N), np.float32)], want


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_metadata_handed_between_roles_run_bit_exact(schedule: str):
    module = parse(HANDOFF)
    verify_module(module)
    args, want = handoff_args(6)
    run = interpreter.run(module, *args, schedule=schedule, seed=2)
    assert run.violations == [], [str(v) for v in run.violations]
    np.testing.assert_array_equal(run.arrays[3], want)


@pytest.mark.parametrize("chunk", UNFENCED, ids=["no_before_fence", "no_after_fence"])
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_metadata_handed_without_a_fence_is_p14_in_both(chunk: str, schedule: str):
    with pytest.raises(CopyDiagnosticError) as exc:
        verify_module(parse(chunk))
    assert exc.value.rules[0] == "P14", str(exc.value)
    args, _ = handoff_args(7)
    run = interpreter.run(parse(chunk), *args, schedule=schedule, seed=3)
    assert [v.rule for v in run.violations][:1] == ["P14"], [str(v) for v in run.violations]
    assert run.violations[0].op.name == "nvvm.tcgen05.mma.sp"


def test_a_dense_descriptor_under_the_sparse_mma_is_mi9():
    dense = TEXT.replace(" sparse selector 0 : i32", " : i32")
    with pytest.raises(CopyDiagnosticError) as exc:
        verify_module(parse(dense))
    assert exc.value.rules == ("MI9",), str(exc.value)
