"""Leader-tracked copies of a CTA pair (`.cta_group::2`, sm_100a) under the interpreter:
each CTA loads its box (replicated: the whole slice; partitioned along a dim: its part) into
its own SMEM, and the bytes of both land on the leader's barrier (the pair's even CTA),
which alone arrives, expecting them. A kernel where only the leader waits and then signals
its peer (a remote arrive, or the cluster barrier) runs bit-exact under many schedules; a
peer that waits on its own barrier, which no byte reaches, hangs (P6)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_tools.universe import make_context

KERNEL = """
builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%x: memref<128x64xf32>, %y: memref<128x64xf32>)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>,
                  copy.cluster = array<i32: 2, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %ready = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %b = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %rank = arith.remui %b, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] leader_tracked <{kind}>
      {{collective = array<i64: 0>}}
      : memref<128x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
{sync}
    %row = arith.muli %rank, %c64 : index
    copy.async_copy %tile to %y[%row, %c0] : memref<64x64xf32, #copy.smem> to memref<128x64xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}
"""

# Only the leader waits on the pair's barrier, then arrives on its peer's `ready`.
REMOTE_ARRIVE = """
    scf.if %leader {
      copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
      copy.peer_arrive %ready[%c0] peer %c1 : !copy.barrier<1>
    } else {
      copy.barrier_wait %ready[%c0], %phase : !copy.barrier<1>
    }
"""

# Only the leader waits; the cluster barrier then tells the peer (a barrier's init in a
# cluster ends with one, as its lowering does).
CLUSTER_BARRIER = """
    scf.if %leader {
      copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    }
    %met = copy.barrier_init arrivals 1 : !copy.barrier<1>
"""

# The peer waits on its own barrier: no arrival and no byte ever reaches it.
OWN_BARRIER = """
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
"""

KINDS = {"replicated": "replicated", "partitioned": "partitioned 0"}


def module(kind, sync, verify=True):
    text = KERNEL.format(kind=KINDS[kind], sync=sync)
    parsed = Parser(make_context(), text).parse_module()
    if verify:
        verify_module(parsed, protocol=False)
    return parsed


def expected(kind, x):
    return np.concatenate([x[:64], x[:64]]) if kind == "replicated" else x


X = np.random.default_rng(5).standard_normal((128, 64)).astype(np.float32)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_pair_whose_leader_waits_and_signals_its_peer(kind):
    m = module(kind, REMOTE_ARRIVE)
    for seed in range(12):
        for schedule in ("random", "adversarial", "round_robin"):
            r = interpreter.run(
                m, X, np.zeros_like(X), grid=(2, 1, 1), schedule=schedule, seed=seed
            )
            assert r.violations == [], (seed, schedule, [str(v) for v in r.violations])
            assert np.array_equal(r.arrays[1], expected(kind, X)), (seed, schedule)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_pair_whose_leader_waits_then_meets_its_peer_at_the_cluster_barrier(kind):
    m = module(kind, CLUSTER_BARRIER)
    for seed in range(6):
        for schedule in ("random", "adversarial", "round_robin"):
            r = interpreter.run(
                m, X, np.zeros_like(X), grid=(2, 1, 1), schedule=schedule, seed=seed
            )
            assert r.violations == [], (seed, schedule, [str(v) for v in r.violations])
            assert np.array_equal(r.arrays[1], expected(kind, X)), (seed, schedule)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_peer_waiting_on_its_own_barrier_hangs(kind):
    m = module(kind, OWN_BARRIER, verify=False)
    for schedule in ("random", "adversarial", "round_robin"):
        r = interpreter.run(m, X, np.zeros_like(X), grid=(2, 1, 1), schedule=schedule)
        hangs = [v for v in r.violations if v.rule == "P6"]
        assert hangs, [str(v) for v in r.violations]
        assert all(v.cta == (1, 0, 0) for v in hangs), [str(v) for v in hangs]


def test_a_pair_that_does_not_wait_races_with_its_loads():
    m = module("partitioned", "", verify=False)
    r = interpreter.run(m, X, np.zeros_like(X), grid=(2, 1, 1), schedule="adversarial")
    assert {"P3", "P7"} <= {v.rule for v in r.violations}, [str(v) for v in r.violations]
