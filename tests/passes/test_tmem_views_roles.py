"""tcgen05.shift and TMEM slices inside the roles of `copy.warp_specialize`, lowered and
assembled: a role other than the one holding the block's thread 0 shifts its own stores (its
tcgen05.shift issued by the role's elected thread, a lane of its first warp that elect.sync
picks), commits the shift, waits and loads the rows back; and the proven kernels of
lit_tests/dialects/copy/protocol-tmem-views.mlir (a shift handed between roles, two
accumulators as slices, an MMA into one slice). Each is proven by the protocol analysis,
links with nvJitLink into a cubin for every target that has its instructions (tcgen05.shift:
`TCGEN05_SHIFT`), and `ptxas` assembles it where it is on PATH; the role's shift also runs
bit-exact under the interpreter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from copy_tools.universe import make_context
from facts.target import TCGEN05, TCGEN05_SHIFT
from tests.passes.test_tmem_roles import compiled
from tests.ptxas import check_ptxas

ROOT = Path(__file__).resolve().parents[2]
VIEWS = (ROOT / "lit_tests/dialects/copy/protocol-tmem-views.mlir").read_text().split("// -----")
HANDED_SHIFT, TWO_ACCUMULATORS, DISJOINT = VIEWS[:3]
ELF_MAGIC = b"\x7fELF"

ROLE_SHIFT = """
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @role_shift(%x: memref<128x32xi32>, %y: memref<128x32xi32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %false = arith.constant false
    %stored = copy.barrier_init arrivals 4 : !copy.barrier<1>
    %shifted = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %shifted_ptr = builtin.unrealized_conversion_cast %shifted : !copy.barrier<1> to !llvm.ptr<3>
    %acc = copy.tmem_alloc : memref<128x32xi32, #copy.tmem>
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      %r = arith.addi %t, %c0 : index
    }, {
    ^bb0(%t: index):
      %lead = arith.cmpi eq, %t, %c0 : index
      %v = vector.load %x[%t, %c0] : memref<128x32xi32>, vector<32xi32>
      copy.tmem_store %v, %acc[%c0] shape shape_32x32b num 32
        : vector<32xi32>, memref<128x32xi32, #copy.tmem>
      copy.tmem_wait store
      nvvm.tcgen05.fence <before>
      copy.barrier_arrive %stored[%c0] issuer warps : !copy.barrier<1>
      copy.barrier_wait %stored[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      copy.tmem_shift %acc[%c16] : memref<128x32xi32, #copy.tmem>
      scf.if %lead {
        nvvm.tcgen05.commit %shifted_ptr : !llvm.ptr<3>
      }
      copy.barrier_wait %shifted[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 32
        : memref<128x32xi32, #copy.tmem> -> vector<32xi32>
      copy.tmem_wait load
      vector.store %w, %y[%t, %c0] : memref<128x32xi32>, vector<32xi32>
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %acc : memref<128x32xi32, #copy.tmem>
    func.return
  }
}
"""
"""Role 1 (block warps 1-4; the block's thread 0 is role 0's) stores its rows into TMEM,
hands them to its first warp through an mbarrier (fenced on both sides), whose elected thread
shifts columns 16-23 one lane down and commits; every warp waits, fences and loads back."""
ROLE_LANES = [((1 + t // 32) % 4) * 32 + t % 32 for t in range(128)]
"""The TMEM lane of role 1's thread t: its warp's quarter (block warp 1 + t // 32)."""


def lines(ptx: str) -> list[str]:
    return [line.strip() for line in ptx.splitlines() if line.strip()]


@pytest.mark.parametrize("target", TCGEN05_SHIFT.targets)
def test_shift_in_a_role_is_the_roles_elected_threads(target: str, tmp_path: Path):
    """The shift sits under the role's elect.sync (after the role's dispatch on the warp
    index), not under the block's thread 0, which role 1 does not hold."""
    out = compiled(ROLE_SHIFT, target)
    assert out.cubin.startswith(ELF_MAGIC)
    body = lines(out.ptx)
    shift = next(i for i, line in enumerate(body) if line.startswith("tcgen05.shift"))
    assert body[shift].startswith("tcgen05.shift.cta_group::1.down"), body[shift]
    alloc = next(i for i, line in enumerate(body) if line.startswith("tcgen05.alloc"))
    assert any("elect.sync" in line for line in body[alloc:shift]), body[alloc:shift]
    order = ["tcgen05.st", "tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync"]
    order += ["tcgen05.shift", "tcgen05.commit", "tcgen05.fence::after_thread_sync", "tcgen05.ld"]
    at = 0
    for text in order:
        found = out.ptx.find(text, at)
        assert found >= 0, f"{text} after offset {at}"
        at = found
    check_ptxas(out.ptx, target, tmp_path)


@pytest.mark.parametrize("schedule", ["random", "adversarial", "round_robin"])
def test_shift_in_a_role_interpreted(schedule: str):
    rng = np.random.default_rng(7)
    x = rng.integers(-(2**31), 2**31, (128, 32), dtype=np.int64).astype(np.int32)
    module = Parser(make_context(), ROLE_SHIFT).parse_module()
    run = interpreter.run(module, x, np.zeros_like(x), schedule=schedule, seed=7)
    assert run.violations == [], [str(v) for v in run.violations]
    tmem = np.zeros_like(x)
    tmem[ROLE_LANES] = x
    tmem[1:, 16:24] = tmem[:-1, 16:24].copy()
    np.testing.assert_array_equal(run.arrays[1], tmem[ROLE_LANES])


@pytest.mark.parametrize("target", TCGEN05_SHIFT.targets)
def test_shift_handed_between_roles_assembles(target: str, tmp_path: Path):
    out = compiled(HANDED_SHIFT, target)
    assert out.cubin.startswith(ELF_MAGIC)
    assert "tcgen05.shift.cta_group::1.down" in out.ptx
    check_ptxas(out.ptx, target, tmp_path)


@pytest.mark.parametrize("target", TCGEN05.targets)
@pytest.mark.parametrize("kernel", [TWO_ACCUMULATORS, DISJOINT], ids=["two", "disjoint"])
def test_slices_in_roles_assemble(kernel: str, target: str, tmp_path: Path):
    out = compiled(kernel, target)
    assert out.cubin.startswith(ELF_MAGIC)
    assert "tcgen05.mma.cta_group::1" in out.ptx
    check_ptxas(out.ptx, target, tmp_path)
