"""The arrivals an op makes (`copy_dialect.arrivals`): who arrives times the arrivals each
makes, for each op that arrives, and None for the ops that only change a phase's bytes."""

from __future__ import annotations

import pytest
from xdsl.parser import Parser

from copy_dialect import ops as copy
from copy_tools.universe import make_context

KERNEL = """builtin.module {
  func.func @k(%x: memref<256x256xf32>) attributes {gpu.kernel,
      gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %a = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    copy.barrier_arrive %bar[%c0] : !copy.barrier<1>
    copy.barrier_arrive %bar[%c0] count 3 issuer warps : !copy.barrier<1>
    copy.barrier_arrive %bar[%c0] count 2 issuer elected : !copy.barrier<1>
    copy.barrier_arrive_drop %bar[%c0] count 2 issuer warps : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    copy.peer_arrive %bar[%c0] peer %c0 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %a barrier %bar[%c0] impl tma
        : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %a barrier %bar[%c0] impl tma {arrive = false}
        : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %a barrier %bar[%c0] impl cp_async
        : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %a impl cp_async
        : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
    copy.barrier_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    copy.barrier_complete_tx %bar[%c0], 4 issuer threads : !copy.barrier<1>
    func.return
  }
}"""

THREADS = copy.Issuer.THREADS
WARPS = copy.Issuer.WARPS
ELECTED = copy.Issuer.ELECTED

EXPECTED = [
    copy.Arrivals(THREADS, 1),
    copy.Arrivals(WARPS, 3),
    copy.Arrivals(ELECTED, 2),
    copy.Arrivals(WARPS, 2),
    copy.ISSUER_ARRIVAL,
    copy.ISSUER_ARRIVAL,
    copy.ISSUER_ARRIVAL,
    None,
    copy.PER_THREAD_ARRIVAL,
    None,
    None,
    None,
]
"""The arrivals of each op of KERNEL after the alloc_smem, in order."""


def test_each_op_makes_its_arrivals():
    module = Parser(make_context(), KERNEL).parse_module()
    body = list(module.walk())
    start = next(i for i, op in enumerate(body) if isinstance(op, copy.AllocSmemOp)) + 1
    ops = body[start : start + len(EXPECTED)]
    assert [copy.arrivals_of(op) for op in ops] == EXPECTED


@pytest.mark.parametrize(
    ("issuer", "threads", "times"),
    [(THREADS, 96, 96), (WARPS, 96, 3), (WARPS, 33, 2), (ELECTED, 96, 1)],
)
def test_executions_and_arrivals_made(issuer: copy.Issuer, threads: int, times: int):
    assert copy.executions(issuer, threads) == times
    assert copy.Arrivals(issuer, 3).made(threads) == 3 * times
