"""How many mbarrier arrivals an op makes on the barrier it names: who arrives (`Issuer`:
each thread that reaches it, lane 0 of each warp, or the elected thread) times the arrivals
each of them makes (`Arrivals`, `arrivals_of`). The protocol analysis counts a phase's
arrivals with it (P5), the kernel rules read it for a nocomplete arrival's count, the
cp.async copies on a barrier and the copies that arrive themselves (MB2, MB12, TR16), and
copy-legalize counts a barrier's arrivals again with it when TMA loads become cp.async or
a cluster's peer writes become arrivals.

| op | who arrives | arrivals each |
|---|---|---|
| `copy.barrier_arrive` | `issuer` (threads, the default; warps; elected) | `count` (1) |
| `copy.barrier_arrive_drop` | `issuer` | `count` (1), each dropped from later phases |
| `copy.barrier_arrive_expect_tx` | the elected thread | 1, expecting its bytes |
| a cp.async copy on a barrier (1) | each issuing thread | 1 (`.mbarrier.arrive.noinc`) |
| a TMA or bulk one (1), unless `arrive = false` | the elected thread | 1, expecting its bytes |
| `copy.peer_arrive` | the elected thread | 1, on the peer CTA's barrier |

(1) `copy.async_copy` or `copy.im2col_load`, its implementation resolved for the target.

No other op arrives: `copy.barrier_expect_tx` and `copy.barrier_complete_tx` change only a
phase's bytes (complete_tx once per `executions` of its issuer), a peer store or copy
completes bytes on the peer's barrier, and no TMEM op commits to an mbarrier.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import overload

from xdsl.ir import Operation

from copy_dialect.attributes import Implementation, Issuer
from copy_dialect.barriers import BarrierArriveExpectTxOp, BarrierArriveOp
from copy_dialect.copies import AsyncCopyOp
from copy_dialect.dsmem import PeerArriveOp
from copy_dialect.gather4 import Gather4Op, Scatter4Op
from copy_dialect.im2col import Im2colLoadOp
from copy_dialect.mbarriers import BarrierArriveDropOp
from copy_dialect.roles import WARP


def executions(issuer: Issuer, threads: int) -> int:
    """How many times an op of `issuer` acts when `threads` threads reach it: once per
    thread, once per warp they span (lane 0 of each), or once (the elected thread)."""
    if issuer is Issuer.ELECTED:
        return 1
    if issuer is Issuer.WARPS:
        return -(-threads // WARP)
    return threads


@dataclass(frozen=True)
class Arrivals:
    """The arrivals an op makes: `each` from every one of its `issuer` that acts."""

    issuer: Issuer
    each: int = 1

    def made(self, threads: int) -> int:
        """The arrivals when `threads` threads reach the op (the elected thread makes `each`
        however many reach it)."""
        return executions(self.issuer, threads) * self.each


ISSUER_ARRIVAL = Arrivals(Issuer.ELECTED)
"""One arrival by the thread that issues the op: a TMA or bulk load that arrives itself,
`copy.barrier_arrive_expect_tx`, `copy.peer_arrive`."""

PER_THREAD_ARRIVAL = Arrivals(Issuer.THREADS)
"""One arrival per issuing thread: an mbarrier-tracked cp.async copy (its arrival is its
completion and cannot be left out, MB13)."""


@overload
def arrivals_of(
    op: BarrierArriveOp | BarrierArriveDropOp | BarrierArriveExpectTxOp | PeerArriveOp,
) -> Arrivals: ...
@overload
def arrivals_of(op: Operation) -> Arrivals | None: ...
def arrivals_of(op: Operation) -> Arrivals | None:
    """The arrivals `op` makes on the barrier it names; None for an op that does not
    arrive (the module's table)."""
    if isinstance(op, BarrierArriveOp | BarrierArriveDropOp):
        return Arrivals(op.arriving, op.arrivals)
    if isinstance(op, BarrierArriveExpectTxOp | PeerArriveOp):
        return ISSUER_ARRIVAL
    if isinstance(op, Scatter4Op):
        return None
    if isinstance(op, AsyncCopyOp | Im2colLoadOp | Gather4Op):
        if op.geometry().barrier is None:
            return None
        if op.resolved_implementation() == Implementation.CP_ASYNC:
            return PER_THREAD_ARRIVAL
        return ISSUER_ARRIVAL if op.arrives else None
    return None
