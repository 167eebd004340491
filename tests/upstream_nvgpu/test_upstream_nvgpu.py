"""Upstream MLIR's nvgpu tests as inputs nobody here wrote (issue 32, item 5): every function
of the files in SOURCES.md that holds TMA, mbarrier or device_async ops is imported, raised
by convert-nvgpu-to-copy (fragments, block of 128), verified op by op and checked by the
protocol analysis; the outcome of each is pinned, and the summary prints the table
(docs/frontends.md has the same). The files come from an llvm-project checkout named by
COPY_LLVM_PROJECT: without it the tests skip."""

from __future__ import annotations

import warnings
from collections import Counter

import pytest

from tests.upstream_nvgpu.corpus import FILES, Function, functions, llvm_project, outcome

EXPECTED: dict[str, str] = {
    # nvgpu-to-nvvm.mlir: lowering tests, one op family per function
    "nvgpu-to-nvvm.mlir::async_cp": "raise: a thread's own chunk",
    "nvgpu-to-nvvm.mlir::async_cp_i4": "raise: token used elsewhere",
    "nvgpu-to-nvvm.mlir::async_cp_zfill_f32_align4": "raise: partial copy (srcElements)",
    "nvgpu-to-nvvm.mlir::async_cp_zfill_f32_align1": "raise: partial copy (srcElements)",
    "nvgpu-to-nvvm.mlir::mbarrier": "raise: token-based test.wait",
    "nvgpu-to-nvvm.mlir::mbarrier_nocomplete": "raise: token-based test.wait",
    "nvgpu-to-nvvm.mlir::mbarrier_wait": "raise: token-based test.wait",
    "nvgpu-to-nvvm.mlir::mbarrier_txcount": "protocol: P5",
    "nvgpu-to-nvvm.mlir::mbarrier_txcount_pred": "protocol: P5",
    "nvgpu-to-nvvm.mlir::async_tma_load": "verify: C5,TR8",
    "nvgpu-to-nvvm.mlir::async_tma_load_gpu_address_space": "pass",
    "nvgpu-to-nvvm.mlir::async_tma_load_pred": "verify: C5,TR8",
    "nvgpu-to-nvvm.mlir::async_tma_load_multicast": "raise: multicast_mask",
    "nvgpu-to-nvvm.mlir::async_tma_store": "verify: C5,TR8",
    "nvgpu-to-nvvm.mlir::async_tma_store_predicate": "verify: C5,TR8",
    "nvgpu-to-nvvm.mlir::create_tensor_map": "import: memref.cast (no xDSL custom form)",
    "nvgpu-to-nvvm.mlir::tma_prefetch": "pass",
    "nvgpu-to-nvvm.mlir::tma_fence": "pass",
    "nvgpu-to-nvvm.mlir::async_tma_load#2": "import: memref.global (no xDSL custom form)",
    # roundtrip.mlir
    "roundtrip.mlir::async_cp": "raise: a thread's own chunk",
    # invalid.mlir: upstream's verifier rejects each
    "invalid.mlir::async_cp_memory_space": "raise: a thread's own chunk",
    "invalid.mlir::async_cp_memref_type": "raise: a thread's own chunk",
    "invalid.mlir::async_cp_num_src_indices": "raise: index count",
    "invalid.mlir::async_cp_num_dst_indices": "raise: index count",
    "invalid.mlir::async_cp_num_src_stride": "raise: a thread's own chunk",
    "invalid.mlir::async_cp_num_dst_stride": "raise: a thread's own chunk",
    "invalid.mlir::async_cp_zfill_f32_align1": "raise: partial copy (srcElements)",
    # optimize-shared-memory.mlir
    "optimize-shared-memory.mlir::optimize_128x32xf16_32x128xf16": "import: nvgpu.ldmatrix",
    "optimize-shared-memory.mlir::optimize_64x16xf32_16x64xf32": "import: nvgpu.ldmatrix",
    "optimize-shared-memory.mlir::small_column_size_f64": "raise: a thread's own chunk",
    "optimize-shared-memory.mlir::too_small_column_size_f16": "import: nvgpu.ldmatrix",
    "optimize-shared-memory.mlir::abort_if_subview": "import: nvgpu.ldmatrix",
    # fold-memref-alias-ops.mlir
    "fold-memref-alias-ops.mlir::fold_nvgpu_device_async_copy_zero_sub_idx": (
        "raise: a thread's own chunk"
    ),
    "fold-memref-alias-ops.mlir::fold_src_nvgpu_device_async_copy": "raise: a thread's own chunk",
    "fold-memref-alias-ops.mlir::fold_src_fold_dest_nvgpu_device_async_copy": (
        "raise: a thread's own chunk"
    ),
    # canonicalization.mlir: a gpu.func kernel
    "canonicalization.mlir::main_kernel": "import: gpu.func (no xDSL custom form)",
}
"""Each function's outcome: the first stage that rejects it and why (its rule ids where the
stage is a catalogue check), or pass."""

REASONS = {
    "at a thread's own place": "a thread's own chunk",
    "token is used by": "token used elsewhere",
    "a partial copy": "partial copy (srcElements)",
    "a test of the phase an arrival's token names": "token-based test.wait",
    "multicast_mask": "multicast_mask",
    "source indices": "index count",
    "destination indices": "index count",
    "memref.cast does not have a custom format": "memref.cast (no xDSL custom form)",
    "memref.global does not have a custom format": "memref.global (no xDSL custom form)",
    "gpu.func does not have a custom format": "gpu.func (no xDSL custom form)",
    "nvgpu.ldmatrix is not registered": "nvgpu.ldmatrix",
}
"""The reasons of the import and raise stages, by a phrase of their message."""


def label(found: str) -> str:
    """The outcome with an import or raise message put as its reason."""
    stage, _, rest = found.partition(": ")
    if stage in ("import", "raise"):
        reasons = [r for phrase, r in REASONS.items() if phrase in rest]
        return f"{stage}: {reasons[0] if reasons else rest}"
    return found


STAGES = ("import", "raise", "verify", "protocol")


def _corpus() -> list[Function]:
    root = llvm_project()
    if root is None:
        return []
    return [f for file in FILES for f in functions(root, file)]


CORPUS = _corpus()
needs_corpus = pytest.mark.skipif(
    not CORPUS, reason="COPY_LLVM_PROJECT names no llvm-project checkout (SOURCES.md)"
)


@pytest.fixture(scope="module")
def outcomes() -> dict[str, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the analysis's warnings are not outcomes
        return {f.key: label(outcome(f)) for f in CORPUS}


@needs_corpus
def test_every_function_is_found() -> None:
    assert sorted(f.key for f in CORPUS) == sorted(EXPECTED)


@needs_corpus
def test_outcomes_pinned(outcomes: dict[str, str], report) -> None:
    passed_stage = Counter()
    for found in outcomes.values():
        stage = found.partition(":")[0]
        reached = STAGES.index(stage) if stage in STAGES else len(STAGES)
        for n in range(reached):
            passed_stage[STAGES[n]] += 1
    total = len(outcomes)
    lines = [
        f"functions holding nvgpu data movement: {total}",
        f"imported {passed_stage['import']}, raised {passed_stage['raise']}, "
        f"verified op by op {passed_stage['verify']}, "
        f"passed the protocol analysis {passed_stage['protocol']}",
        "",
        f"{'outcome':<56} functions",
    ]
    lines += [f"{o:<56} {n}" for o, n in sorted(Counter(outcomes.values()).items())]
    report("upstream nvgpu corpus (convert-nvgpu-to-copy)", lines)
    assert outcomes == EXPECTED


HARNESS_INPUT = """\
// A file written here in the form of upstream's tests (aliases between functions, a
// function in a nested module, CHECK lines that name ops no input holds).
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy
func.func @no_data_movement(%x: index) -> index {
  return %x : index
}
func.func @unknown_op(%s: memref<8x8xf16, 3>, %i: index) -> vector<1x2xf16> {
  %b = nvgpu.mbarrier.create -> !bars
  %m = nvgpu.ldmatrix %s[%i, %i] {numTiles = 1 : i32, transpose = false}
      : memref<8x8xf16, 3> -> vector<1x2xf16>
  return %m : vector<1x2xf16>
}
TMAP_ALIAS
module @nested {
  func.func @token_test(%i: index) {
    %b = nvgpu.mbarrier.create -> !bars
    nvgpu.mbarrier.init %b[%i], %i : !bars
    %t = nvgpu.mbarrier.arrive %b[%i] : !bars -> !nvgpu.mbarrier.token
    %d = nvgpu.mbarrier.test.wait %b[%i], %t : !bars, !nvgpu.mbarrier.token
    return
  }
}
func.func @box_over_256(%in: !tmap, %buf: memref<512x32xf32, 3>)
    attributes { copy.note = "an attribute dictionary on its own lines" }
{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = nvgpu.mbarrier.create -> !bars
  nvgpu.mbarrier.init %b[%c0], %c1 : !bars
  nvgpu.tma.async.load %in[%c0, %c0], %b[%c0] to %buf : !tmap, !bars -> memref<512x32xf32, 3>
  return
}
func.func @never_completes() {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %false = arith.constant false
  %b = nvgpu.mbarrier.create -> !bars
  nvgpu.mbarrier.init %b[%c0], %c256 : !bars
  %t = nvgpu.mbarrier.arrive %b[%c0] : !bars -> !nvgpu.mbarrier.token
  nvgpu.mbarrier.try_wait.parity %b[%c0], %false, %c0 : !bars
  return
}
func.func @whole_slot(%x: memref<64x4xf32>, %buf: memref<2x4xf32, 3>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = nvgpu.device_async_copy %x[%c0, %c0], %buf[%c1, %c0], 4
      : memref<64x4xf32> to memref<2x4xf32, 3>
  %g = nvgpu.device_async_create_group %0
  nvgpu.device_async_wait %g {numGroups = 0 : i32}
  return
}
""".replace(
    "TMAP_ALIAS",
    "!tmap = !nvgpu.tensormap.descriptor<tensor = memref<512x32xf32, 3>, swizzle = none, "
    "l2promo = none, oob = zero, interleave = none>",
)


def test_the_harness_on_a_file_written_here(tmp_path) -> None:
    """Each stage rejects its function (an unknown op; a token-based test; a box over 256;
    a wait on a phase that 128 of the 256 threads it counts arrive on) and a function that
    gets through passes: the cutting out (aliases, a nested module, a multi-line attribute
    dictionary, CHECK lines left out) and the four stages, on input written here (this runs
    without COPY_LLVM_PROJECT)."""
    (tmp_path / "x.mlir").write_text(HARNESS_INPUT)
    found = functions(tmp_path, "x.mlir")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = {f.key: label(outcome(f)) for f in found}
    assert got == {
        "x.mlir::unknown_op": "import: nvgpu.ldmatrix",
        "x.mlir::token_test": "raise: token-based test.wait",
        "x.mlir::box_over_256": "verify: C7,TR5",
        "x.mlir::never_completes": "protocol: P6",
        "x.mlir::whole_slot": "pass",
    }
