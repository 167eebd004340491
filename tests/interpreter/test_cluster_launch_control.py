"""Cluster launch control under the interpreter (interpreter/ops_clc.py): the persistent loop
of lit_tests/dialects/copy/cluster-launch-control.mlir, run over grids of 1 to 12 clusters
and several schedules, writes every tile once, bit-exact against numpy, and race-free (a
try_cancel cancels the first cluster of the launch queue not yet started, whose tile the
canceling CTA then computes); a single request names the next cluster, or fails on the last;
CTA 0's multicast request reaches both CTAs of the pair. The protocol analysis' negative
cases are races here too: the query before the wait (P1), a new request into the slot that
another role still reads (the interpreter's P1: its write races the read), every CTA of the
pair requesting with multicast into the same slots (P3). A request after the CTA observed a
failed one is undefined behaviour (PTX ISA): an error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from analysis.verify import verify_module
from copy_tools.universe import make_context
from interpreter.run import run
from interpreter.values import InterpretError

LIT = Path(__file__).resolve().parents[2] / "lit_tests" / "dialects" / "copy"
POSITIVE = LIT / "cluster-launch-control.mlir"
NEGATIVE = LIT / "invalid-cluster-launch-control.mlir"
HEADER = 'builtin.module attributes {copy.target = #copy.target<"sm_100a">} {\n'


def module(text: str):
    return Parser(make_context(), text).parse_module()


def negative(name: str):
    """The chunk of the negative lit test that holds the kernel `name`."""
    (chunk,) = [c for c in NEGATIVE.read_text().split("// -----") if f"@{name}(" in c]
    return module(chunk)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("clusters", [1, 2, 5, 12])
def test_persistent_loop(clusters: int, seed: int):
    out = np.full(4096, -7, dtype=np.int32)
    r = run(
        module(POSITIVE.read_text()), out, grid=(clusters, 1, 1), kernel="persistent", seed=seed
    )
    assert r.violations == []
    expected = np.full(4096, -7, dtype=np.int32)
    expected[: clusters * 128] = np.arange(clusters * 128)
    np.testing.assert_array_equal(r.arrays[0], expected)


@pytest.mark.parametrize(("clusters", "value"), [(1, 0), (2, 1), (3, 0)])
def test_one_request(clusters: int, value: int):
    """Block 0 cancels block 1 where there is one (its ctaid x; a failed response selects
    y = 0); the canceled block never runs, and a block with none left to cancel (block 0 of
    one, block 2 of three, which runs last) stores 0."""
    out = np.full(128, -7, dtype=np.int32)
    r = run(module(POSITIVE.read_text()), out, grid=(clusters, 1, 1), kernel="one_request")
    assert r.violations == []
    assert (r.arrays[0] == value).all()


def test_multicast_pair():
    out = np.full(256, -7, dtype=np.int32)
    r = run(module(POSITIVE.read_text()), out, grid=(4, 1, 1), kernel="multicast_pair")
    assert r.violations == []
    # Both CTAs of cluster 0 read the one response: cluster 1, whose first CTA is x = 2.
    assert (r.arrays[0] == 2).all()


def test_query_before_the_wait_races():
    r = run(negative("p1_query_before_the_wait"), grid=(3, 1, 1))
    assert "P1" in {v.rule for v in r.violations}


ROLES = """builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @roles(%out: memref<64xi32>) attributes {gpu.kernel,
      gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %resp = copy.alloc_smem : memref<16xi8, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      copy.barrier_arrive_expect_tx %full[%c0], 16 : !copy.barrier<1>
      copy.try_cancel %resp barrier %full[%c0] : memref<16xi8, #copy.smem>, !copy.barrier<1>
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      copy.barrier_arrive_expect_tx %full[%c0], 16 : !copy.barrier<1>
      copy.try_cancel %resp barrier %full[%c0] : memref<16xi8, #copy.smem>, !copy.barrier<1>
      copy.barrier_wait %full[%c0], %true : !copy.barrier<1>
    }, {
    ^bb0(%t: index):
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      %ok, %x, %y, %z = copy.query_cancel %resp : memref<16xi8, #copy.smem>
      memref.store %x, %out[%t] : memref<64xi32>
      copy.barrier_wait %full[%c0], %true : !copy.barrier<1>
      %ok2, %x2, %y2, %z2 = copy.query_cancel %resp : memref<16xi8, #copy.smem>
    }
    func.return
  }
}
"""
"""A producer role requests into the one slot again once the first response landed, not
waiting until the consumer role has read it (no consumer-release barrier)."""


def test_request_into_a_slot_a_role_still_reads_races():
    """The lit test's P3 kernel reads and re-requests in one agent, whose threads the
    interpreter runs in lockstep (all read before the elected one issues), so its race is
    the proof's alone; with the reader in another role it is a race here too, and the proof
    rejects the kernel (the producer may run a phase ahead of the consumer's wait)."""
    with pytest.raises(VerifyException, match="two phases ahead"):
        verify_module(module(ROLES))
    r = run(module(ROLES), np.zeros(64, np.int32), grid=(3, 1, 1))
    assert any(
        v.rule == "P1" and "role 1 reads" in v.message and "async copy writes" in v.message
        for v in r.violations
    )


def test_every_cta_multicasting_races():
    text = POSITIVE.read_text()
    start = text.index("  func.func @multicast_pair")
    end = text.index("  // CHECK-LABEL: func.func @persistent(")
    both = text[start:end].replace("scf.if %lead {", "scf.if %true {")
    both = both.replace(
        "%c0 = arith.constant 0 : index\n",
        "%c0 = arith.constant 0 : index\n    %true = arith.constant true\n",
        1,
    )
    r = run(module(HEADER + both + "}\n"), np.zeros(256, np.int32), grid=(4, 1, 1))
    assert "P3" in {v.rule for v in r.violations}


def test_request_after_a_failed_one_is_undefined():
    text = (
        HEADER
        + """  func.func @again() attributes {gpu.kernel,
      gpu.known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %resp = copy.alloc_smem : memref<16xi8, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %bar[%c0], 16 : !copy.barrier<1>
    copy.try_cancel %resp barrier %bar[%c0] : memref<16xi8, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    %ok, %x, %y, %z = copy.query_cancel %resp : memref<16xi8, #copy.smem>
    gpu.barrier
    copy.barrier_arrive_expect_tx %bar[%c0], 16 : !copy.barrier<1>
    copy.try_cancel %resp barrier %bar[%c0] : memref<16xi8, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
    func.return
  }
}
"""
    )
    # One cluster: the first request fails, so the second is undefined.
    with pytest.raises(InterpretError, match="after its CTA observed a failed one"):
        run(module(text), grid=(1, 1, 1))
    # Two: the first cancels the other cluster, the second fails, which is allowed.
    assert run(module(text), grid=(2, 1, 1)).violations == []
