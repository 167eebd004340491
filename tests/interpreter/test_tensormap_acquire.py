"""The tensor-map acquire is per thread (TU11): the fence
`fence.proxy.tensormap::generic.acquire` orders the copies of the thread that runs it, so a
rewrite that thread 0 of the block releases and acquires is not yet seen by the elected
thread of a role that issues the copies. The interpreter keeps the TMA unit's view of a map
per agent: the role's load reads the array of the map as launched, and TU11 is reported at
the load; with the acquire in the role, the load reads the re-pointed array, clean under
every schedule. The protocol analysis rejects the same kernel (the lit test
`tu11_map_acquired_by_another_thread` of
lit_tests/dialects/copy/invalid-tensormap-protocol.mlir)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from copy_tools.universe import make_context

SCHEDULES = ("random", "adversarial", "round_robin")

ACQUIRE_IN_ROLE = "      copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32>\n"
KERNEL = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<?x?xf32>, %pool: memref<1024xf32>, %y: memref<8x64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c512 = arith.constant 512 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %m = copy.tensormap_global %x slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    copy.tensormap_replace %m global_address to %pool[%c512]
      : !copy.tensormap<8x64xf32>, memref<1024xf32>
    copy.tensormap_fence_release %m : !copy.tensormap<8x64xf32>
    copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
ACQUIRE      copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0]
        map(%m : !copy.tensormap<8x64xf32>)
        : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
    }, {
    ^bb0(%t: index):
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
      %r = arith.divui %t, %c4 : index
      %q = arith.remui %t, %c4 : index
      %c = arith.muli %q, %c16 : index
      %v = vector.load %buf[%r, %c] : memref<8x64xf32, #copy.smem>, vector<16xf32>
      vector.store %v, %y[%r, %c] : memref<8x64xf32>, vector<16xf32>
    }
    func.return
  }
}
"""


def module(acquire_in_role: bool):
    text = KERNEL.replace("ACQUIRE", ACQUIRE_IN_ROLE if acquire_in_role else "")
    return Parser(make_context(), text).parse_module()


def inputs(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((8, 64)) * 100).astype(np.float32)
    pool = (rng.standard_normal(1024) * 100).astype(np.float32)
    return [x, pool, np.zeros((8, 64), np.float32)]


def load_of(m):
    return next(op for op in m.walk() if op.name == "copy.async_copy")


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_a_copy_of_a_role_through_a_map_the_block_acquired_breaks_tu11(schedule: str):
    m = module(acquire_in_role=False)
    args = inputs(0)
    run = interpreter.run(m, *args, schedule=schedule, seed=0)
    tu11 = [v for v in run.violations if v.rule == "TU11"]
    assert tu11, [str(v) for v in run.violations]
    assert tu11[0].op is load_of(m)
    assert "per thread" in str(tu11[0])
    # The role's TMA copy still sees the map as launched: it reads %x, not the pool.
    assert np.array_equal(run.arrays[2], args[0])


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("seed", range(3))
def test_the_acquire_in_the_role_that_copies_runs_clean(schedule: str, seed: int):
    args = inputs(seed)
    run = interpreter.run(module(acquire_in_role=True), *args, schedule=schedule, seed=seed)
    assert run.violations == [], [str(v) for v in run.violations]
    assert np.array_equal(run.arrays[2], args[1][512:].reshape(8, 64))
