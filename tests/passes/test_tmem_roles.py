"""TMEM ops inside the roles of `copy.warp_specialize` (issue 33 item 4), lowered and assembled:
the MMA warp and the epilogue warps of lit_tests/dialects/copy/protocol-tmem.mlir (the
epilogue's tcgen05.st of a bias and tcgen05.ld of the accumulator, the MMA warp's
tcgen05.mma and commit, the tcgen05 fences at each hand-off) and a role that copies its SMEM
tile into TMEM (tcgen05.cp by the role's elected thread, a lane of its first warp: not the
block's thread 0, which is in the other role), commits the copy and loads it back. Each is
proven by the protocol analysis, links with nvJitLink into a cubin for every target with
tcgen05, and `ptxas` assembles it where it is on PATH; and the file's CTA pair, whose leader's
MMA warp commits to both CTAs' barriers (`.multicast::cluster`, mask 3). TMEM alloc and
dealloc stay the block's (W8), before and after the roles, as CUTLASS's allocation by one
warp and its address handed through SMEM is one SSA value here."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_tools.universe import make_context
from facts.target import TCGEN05
from passes.pipeline import compile_module
from tests.ptxas import check_ptxas

ROOT = Path(__file__).resolve().parents[2]
HANDOFF, PAIR, LATER = (
    (ROOT / "lit_tests/dialects/copy/protocol-tmem.mlir").read_text().split("// -----")
)
ELF_MAGIC = b"\x7fELF"

ROLE_COPY = """
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @role_copy(%x: memref<128x4xi32>, %y: memref<128x4xi32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %false = arith.constant false
    %tile = copy.alloc_smem : memref<128x4xi32, #copy.smem>
    %copied = copy.barrier_init arrivals 2 : !copy.barrier<1>
    %copied_ptr = builtin.unrealized_conversion_cast %copied : !copy.barrier<1> to !llvm.ptr<3>
    %acc = copy.tmem_alloc : memref<128x32xi32, #copy.tmem>
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      copy.barrier_arrive %copied[%c0] issuer elected : !copy.barrier<1>
    }, {
    ^bb0(%t: index):
      %v = vector.load %x[%t, %c0] : memref<128x4xi32>, vector<4xi32>
      vector.store %v, %tile[%t, %c0] : memref<128x4xi32, #copy.smem>, vector<4xi32>
      copy.fence_async_shared
      copy.smem_to_tmem %tile to %acc[%c0] shape shape_128x128b
        : memref<128x4xi32, #copy.smem>, memref<128x32xi32, #copy.tmem>
      %first = arith.cmpi ult, %t, %c1 : index
      scf.if %first {
        nvvm.tcgen05.commit %copied_ptr : !llvm.ptr<3>
      }
      copy.barrier_wait %copied[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 4
        : memref<128x32xi32, #copy.tmem> -> vector<4xi32>
      copy.tmem_wait load
      vector.store %w, %y[%t, %c0] : memref<128x4xi32>, vector<4xi32>
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %acc : memref<128x32xi32, #copy.tmem>
    func.return
  }
}
"""
"""Role 1 copies its SMEM tile into TMEM, commits the copy to an mbarrier (role 0 arrives on
it too), waits, fences and loads it back."""


def compiled(text: str, target: str):
    text = text.replace('"sm_100a"', f'"{target}"')
    module = Parser(make_context(), text).parse_module()
    verify_module(module)  # proven by the protocol analysis, with no finding
    return compile_module(module, make_context(), target)


@pytest.mark.parametrize("target", TCGEN05.targets)
def test_handoff_between_roles_assembles(target: str, tmp_path: Path):
    out = compiled(HANDOFF, target)
    assert out.cubin.startswith(ELF_MAGIC)
    ptx = out.ptx
    order = [
        "tcgen05.alloc",
        "tcgen05.fence::after_thread_sync",
        "tcgen05.mma",
        "tcgen05.commit",
        "tcgen05.st",
        "tcgen05.fence::before_thread_sync",
        "mbarrier.arrive",
        "tcgen05.fence::after_thread_sync",
        "tcgen05.ld",
        "tcgen05.dealloc",
    ]
    at = 0
    for text in order:
        found = ptx.find(text, at)
        assert found >= 0, f"{text} after offset {at}"
        at = found
    check_ptxas(ptx, target, tmp_path)


@pytest.mark.parametrize("target", TCGEN05.targets)
def test_copy_inside_a_role_assembles(target: str, tmp_path: Path):
    out = compiled(ROLE_COPY, target)
    assert out.cubin.startswith(ELF_MAGIC)
    ptx = out.ptx
    assert re.search(r"tcgen05\.cp\.cta_group::1\.128x128b", ptx), ptx
    # Issued under the role's elected thread: elect.sync in the role's body, not tid == 0.
    cp = ptx.index("tcgen05.cp")
    assert "elect.sync" in ptx[ptx.index("tcgen05.alloc") : cp]
    check_ptxas(ptx, target, tmp_path)


@pytest.mark.parametrize("schedule", ["random", "adversarial", "round_robin"])
def test_copy_inside_a_role_interpreted(schedule: str):
    """Under the interpreter the role's copy lands in TMEM lane by lane, the load reads each
    warp's quarter back (row t of the role: lane 32 ((1 + t // 32) % 4) + t % 32), race-free."""
    module = Parser(make_context(), ROLE_COPY).parse_module()
    x = np.arange(128 * 4, dtype=np.int32).reshape(128, 4)
    run = interpreter.run(module, x, np.zeros_like(x), schedule=schedule, seed=3)
    assert run.violations == [], [str(v) for v in run.violations]
    lanes = [((1 + t // 32) % 4) * 32 + t % 32 for t in range(128)]
    assert np.array_equal(run.arrays[1], x[lanes])


@pytest.mark.parametrize("target", TCGEN05.targets)
def test_pair_commit_multicast_assembles(target: str, tmp_path: Path):
    out = compiled(PAIR, target)
    assert out.cubin.startswith(ELF_MAGIC)
    assert "tcgen05.mma.cta_group::2" in out.ptx
    assert "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast" in out.ptx
    check_ptxas(out.ptx, target, tmp_path)


@pytest.mark.parametrize("target", TCGEN05.targets)
def test_pv_mma_with_a_from_tmem_assembles(target: str, tmp_path: Path):
    """The file's S and P kernel: an MMA whose A is in TMEM (P over S's columns) after an
    MMA known done through a later commit, that commit's barrier named by a constant
    `llvm.getelementptr` (8 bytes past the group's first barrier)."""
    out = compiled(LATER, target)
    assert out.cubin.startswith(ELF_MAGIC)
    a_in_tmem = r"tcgen05\.mma\.cta_group::1\.kind::f16\S* \[%r\d+\], \[%r\d+\]"
    assert re.search(a_in_tmem, out.ptx), out.ptx
    assert out.ptx.count("tcgen05.commit") == 3
    check_ptxas(out.ptx, target, tmp_path)


@pytest.mark.parametrize("target", TCGEN05.targets)
def test_alloc_and_dealloc_hand_offs_are_fenced(target: str):
    """The lowering's alloc hands the TMEM address to the block fenced as P14 asks of any
    tcgen05 hand-off (warp 0's before fence, the block barrier, every thread's after fence),
    and the dealloc fences the block's accesses before its barrier and after it."""
    ptx = compiled(HANDOFF, target).ptx
    lines = [line.strip() for line in ptx.splitlines() if line.strip()]
    alloc = next(i for i, line in enumerate(lines) if line.startswith("tcgen05.alloc"))
    after_alloc = [line.split()[0] for line in lines[alloc + 1 : alloc + 8]]
    fences = [x for x in after_alloc if x.startswith(("tcgen05.fence", "bar.sync"))]
    assert fences[:3] == [
        "tcgen05.fence::before_thread_sync;",
        "bar.sync",
        "tcgen05.fence::after_thread_sync;",
    ], after_alloc
    dealloc = next(i for i, line in enumerate(lines) if line.startswith("tcgen05.dealloc"))
    before = [line.split()[0] for line in lines[max(0, dealloc - 12) : dealloc]]
    assert "tcgen05.fence::after_thread_sync;" in before, before
    assert "tcgen05.fence::before_thread_sync;" in before, before
