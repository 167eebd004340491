"""TMEM of a CTA pair (`cta_group 2`, tcgen05's `.cta_group::2`) and the multicast
`tcgen05.cp` shapes under the interpreter. Each CTA of a 2x1x1 cluster fills an SMEM tile
with its own rows; the even CTA alone copies its tile with `cta_group 2`, which lands in the
TMEM of both CTAs at the same columns, commits it to both CTAs' mbarriers (multicast_mask 3),
and each CTA waits on its own and reads its TMEM back (tcgen05.ld 32x32b): both hold the even
CTA's tile, bit-exact against numpy, the kernel proven by the protocol analysis, for every
copy shape (32x128b
multicast to the four warps' lane quarters, 64x128b to the warp pairs of warpx2::02_13 and
warpx2::01_23, 128x128b row by row). Not measured: the H200 has no TMEM; the lane map of
the multicast shapes is the interpreter's reading of the PTX ISA's tcgen05.cp sentence
(`interpreter.ops_tmem.copy_lanes`). An allocation after `copy.tmem_relinquish` stops the
run (J29), as the verifier's kernel rule rejects it."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_tools.universe import make_context

ONE_CTA = """
builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%x: memref<128x4xi32>, %y: memref<128x4xi32>)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %crows = arith.constant {rows} : index
    %t = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %leader = arith.cmpi eq, %t, %c0 : index
    %tile = copy.alloc_smem : memref<{rows}x4xi32, #copy.smem>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %mine = arith.cmpi ult, %t, %crows : index
    scf.if %mine {{
      %v = vector.load %x[%t, %c0] : memref<128x4xi32>, vector<4xi32>
      vector.store %v, %tile[%t, %c0] : memref<{rows}x4xi32, #copy.smem>, vector<4xi32>
    }}
    copy.fence_async_shared
    %acc = copy.tmem_alloc : memref<128x32xi32, #copy.tmem>
    copy.smem_to_tmem %tile to %acc[%c0] shape {shape}{multicast}
      : memref<{rows}x4xi32, #copy.smem>, memref<128x32xi32, #copy.tmem>
    scf.if %leader {{
      nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
    }}
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    nvvm.tcgen05.fence <after>
    %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 4
      : memref<128x32xi32, #copy.tmem> -> vector<4xi32>
    copy.tmem_wait load
    vector.store %w, %y[%t, %c0] : memref<128x4xi32>, vector<4xi32>
    copy.tmem_dealloc %acc : memref<128x32xi32, #copy.tmem>
    func.return
  }}
}}
"""

PAIR = """
builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%x: memref<256x4xi32>, %y: memref<256x4xi32>)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>,
                  copy.cluster = array<i32: 2, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %false = arith.constant false
    %both = arith.constant 3 : i16
    %crows = arith.constant {rows} : index
    %b = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %t = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %rank = arith.remui %b, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    %first = arith.cmpi eq, %t, %c0 : index
    %tile = copy.alloc_smem : memref<{rows}x4xi32, #copy.smem>
    %mine = arith.cmpi ult, %t, %crows : index
    scf.if %mine {{
      %base = arith.muli %rank, %c128 : index
      %row = arith.addi %base, %t : index
      %v = vector.load %x[%row, %c0] : memref<256x4xi32>, vector<4xi32>
      vector.store %v, %tile[%t, %c0] : memref<{rows}x4xi32, #copy.smem>, vector<4xi32>
    }}
    copy.fence_async_shared
    %acc = copy.tmem_alloc cta_group 2 : memref<128x32xi32, #copy.tmem>
    copy.tmem_relinquish cta_group 2
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    scf.if %leader {{
      copy.smem_to_tmem %tile to %acc[%c0] shape {shape}{multicast} cta_group 2
        : memref<{rows}x4xi32, #copy.smem>, memref<128x32xi32, #copy.tmem>
      scf.if %first {{
        nvvm.tcgen05.commit %done_ptr, multicast_mask = %both {{group = #nvvm.cta_group<cta_2>}}
          : !llvm.ptr<3>, i16
      }}
    }}
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    nvvm.tcgen05.fence <after>
    %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 4
      : memref<128x32xi32, #copy.tmem> -> vector<4xi32>
    copy.tmem_wait load
    %out = arith.muli %rank, %c128 : index
    %at = arith.addi %out, %t : index
    vector.store %w, %y[%at, %c0] : memref<256x4xi32>, vector<4xi32>
    nvvm.tcgen05.fence <before>
    copy.cluster_sync
    copy.tmem_dealloc %acc cta_group 2 : memref<128x32xi32, #copy.tmem>
    func.return
  }}
}}
"""
"""The even CTA's elected thread copies its tile into the pair's TMEM and commits the copy
with multicast_mask 3 (`.cta_group::2`), which arrives on %done of both CTAs (the barrier's
init ends with the cluster's barrier, so both exist and both CTAs have allocated); each CTA
waits on its own, fences after, and reads its TMEM."""

LANE = np.arange(128)
COPIES = {
    # shape, multicast, SMEM rows, the row each TMEM lane receives
    "32x128b_warpx4": ("shape_32x128b", "warpx4", 32, LANE % 32),
    "64x128b_02_13": ("shape_64x128b", "warpx2_02_13", 64, LANE // 64 * 32 + LANE % 32),
    "64x128b_01_23": ("shape_64x128b", "warpx2_01_23", 64, LANE // 32 % 2 * 32 + LANE % 32),
    "128x128b": ("shape_128x128b", None, 128, LANE),
}


def module(template: str, name: str, protocol: bool):
    shape, multicast, rows, _ = COPIES[name]
    cast = "" if multicast is None else f" multicast {multicast}"
    text = template.format(shape=shape, rows=rows, multicast=cast)
    parsed = Parser(make_context(), text).parse_module()
    verify_module(parsed, protocol=protocol)
    return parsed


def random_rows(seed: int, rows: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-(2**31), 2**31, (rows, 4), dtype=np.int64).astype(np.int32)


@pytest.mark.parametrize("name", COPIES)
def test_copy_shapes_fill_the_lanes(name: str):
    """One CTA: the copy, committed to an mbarrier and waited for (the protocol analysis
    proves it), puts the rows where `copy_lanes` says."""
    lane_rows = COPIES[name][3]
    x = random_rows(5, 128)
    run = interpreter.run(module(ONE_CTA, name, protocol=True), x, np.zeros_like(x))
    assert run.violations == [], [str(v) for v in run.violations]
    np.testing.assert_array_equal(run.arrays[1], x[: COPIES[name][2]][lane_rows])


@pytest.mark.parametrize("name", COPIES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pair_copy_lands_in_both_ctas(name: str, seed: int):
    rows, lane_rows = COPIES[name][2], COPIES[name][3]
    x = random_rows(seed, 256)
    parsed = module(PAIR, name, protocol=True)
    run = interpreter.run(parsed, x, np.zeros_like(x), grid=(2, 1, 1), seed=seed)
    assert run.violations == [], [str(v) for v in run.violations]
    leader_tile = x[:rows]  # the even CTA's rows: what both CTAs' TMEM holds
    np.testing.assert_array_equal(run.arrays[1], np.concatenate([leader_tile[lane_rows]] * 2))


RELINQUISH_THEN_ALLOC = """
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k() attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %a = copy.tmem_alloc : memref<128x32xi32, #copy.tmem>
    copy.tmem_relinquish
    %b = copy.tmem_alloc : memref<128x32xi32, #copy.tmem>
    copy.tmem_dealloc %a : memref<128x32xi32, #copy.tmem>
    copy.tmem_dealloc %b : memref<128x32xi32, #copy.tmem>
    func.return
  }
}
"""


def test_alloc_after_relinquish_stops_the_run():
    parsed = Parser(make_context(), RELINQUISH_THEN_ALLOC).parse_module()
    run = interpreter.run(parsed)
    assert [v.rule for v in run.violations] == ["J29"], [str(v) for v in run.violations]
