"""mbarriers: a group's barriers, each with its arrival count, the arrivals and bytes of its
open phase and the phases it completed; the ops that init, arrive, expect and complete
bytes, wait and test, drop, invalidate and reinit.

A phase completes when it has all its arrivals and its transaction count is back to 0; it
publishes the clocks of everything that arrived or landed in it (and of the phases before:
its barrier's component counts the phases), which a wait on it acquires. More arrivals than
a phase awaits, or more bytes than it expects once all have arrived, break P5; an index out
of the group's range, P9."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.ir import Operation

from copy_dialect import ops as copy
from copy_dialect.attributes import Issuer
from interpreter.machine import WARP, Agent, Cta, Step, Wait
from interpreter.ops_cluster import cluster_sync
from interpreter.ops_std import handles, set_result
from interpreter.races import Clock, join
from interpreter.values import RuleBroken, uniform


class Mbarrier:
    def __init__(self, cta: Cta, name: str, count: int):
        self.cta = cta
        self.name = name
        self.init(count)

    def init(self, count: int) -> None:
        """Phase 0 of `count` arrivals, with a clock component of its own (a reinit's
        phases are not the ones before it)."""
        self.component = self.cta.machine.clocks.new(self.name)
        self.count = count
        self.pending = count
        self.tx = 0
        self.phase = 0
        self.open: Clock = {}
        self.completed: Clock = {}
        self.released: dict[Agent, np.ndarray] = {}
        """The threads of each agent that released into the open phase (arrived on it, or
        expected or completed bytes of it)."""
        self.completed_released: dict[Agent, np.ndarray] = {}
        self.arrived: list[Operation] = []
        self.valid = True

    def release(self, agent: Agent, lanes: np.ndarray) -> None:
        """The threads of `lanes` of `agent` release their accesses into the open phase."""
        had = self.released.get(agent)
        self.released[agent] = lanes.copy() if had is None else had | lanes

    def acquire(self, agent: Agent, lanes: np.ndarray | None = None) -> None:
        """A wait of the threads `lanes` of `agent` (None: all) that saw the last phase
        complete: its clock, and the agent's own threads that released into it published
        to all its threads."""
        agent.acquire(self.completed, lanes)
        lanes = self.completed_released.get(agent)
        if lanes is not None:
            agent.publish(lanes)

    def arrive(self, op: Operation, n: int, clock: Clock, tx: int = 0) -> None:
        if n > self.pending:
            self.cta.machine.report(
                "P5", op,
                f"makes {n} arrivals on {self.name}, whose phase {self.phase} awaits "
                f"{self.pending} more of its {self.count}: the extra arrivals complete the "
                "phase early and count toward the next one",
                self.cta,
            )  # fmt: skip
        self.tx += tx
        join(self.open, clock)
        self.pending -= n
        self.arrived.append(op)
        self.settle(op)

    def expect(self, op: Operation, nbytes: int, clock: Clock) -> None:
        join(self.open, clock)
        self.tx += nbytes
        self.settle(op)

    def complete_tx(self, op: Operation, nbytes: int, clock: Clock) -> None:
        join(self.open, clock)
        self.tx -= nbytes
        self.settle(op)

    def settle(self, op: Operation) -> None:
        if self.pending > 0:
            return
        if self.tx < 0:
            self.cta.machine.report(
                "P5", op,
                f"leaves {self.name}'s phase {self.phase} with {-self.tx} bytes more than it "
                "expects, after all its arrivals: it completes only if more bytes are "
                "expected, and they count toward it",
                self.cta,
            )  # fmt: skip
            return
        if self.tx > 0:
            return
        self.phase += 1
        self.open[self.component] = self.phase
        self.completed = self.open
        self.completed_released = self.released
        self.open = {}
        self.released = {}
        self.pending = self.count
        self.arrived = []

    def describe(self) -> str:
        return (
            f"{self.name} (phase {self.phase}: {self.count - self.pending} of {self.count} "
            f"arrivals, {self.tx} bytes outstanding)"
        )


class BarrierGroup:
    """A `!copy.barrier<N>` value: its N mbarriers in one CTA."""

    def __init__(self, cta: Cta, op: Operation, count: int, arrivals: int):
        name = op.results[0].name_hint or "bars"
        self.barriers = [Mbarrier(cta, f"%{name}[{i}]", arrivals) for i in range(count)]

    def at(self, agent: Agent, op: Operation, index: Any, mask: np.ndarray) -> Mbarrier:
        i = 0 if index is None else uniform(agent.get(index), mask, op, "the barrier index")
        if not 0 <= i < len(self.barriers):
            raise RuleBroken(
                op, "P9", f"names barrier {i} of a group of {len(self.barriers)}: out of range"
            )
        return self.barriers[i]


def barrier(agent: Agent, op: Operation, group: Any, index: Any, mask: np.ndarray) -> Mbarrier:
    value = agent.get(group)
    assert isinstance(value, BarrierGroup)
    mb = value.at(agent, op, index, mask)
    if not mb.valid:
        raise RuleBroken(op, "MB8", f"uses {mb.name} after copy.barrier_inval and before a reinit")
    return mb


def executions(issuer: Issuer, mask: np.ndarray) -> int:
    """How many times an op of `issuer` acts in the threads of `mask` (`copy.arrivals_of`
    says who acts for an arrival): once per thread, once per warp that has a thread there
    (lane 0 of each, once the warp has synchronized), or once."""
    if issuer is Issuer.ELECTED:
        return 1
    threads = np.nonzero(mask)[0]
    if issuer is Issuer.WARPS:
        return len(np.unique(threads // WARP))
    return len(threads)


def releasing(issuer: Issuer, mask: np.ndarray) -> np.ndarray:
    """The threads whose accesses an op of `issuer` releases: every thread that reaches it
    (each thread, or each warp's lane 0 after the warp synchronized), or the elected one."""
    if issuer is not Issuer.ELECTED:
        return mask
    one = np.zeros_like(mask)
    one[np.argmax(mask)] = True
    return one


@handles(copy.BarrierInitOp)
def barrier_init(agent: Agent, op: copy.BarrierInitOp, mask: np.ndarray) -> Step:
    assert isinstance(op.result.type, copy.BarrierType)
    group = BarrierGroup(agent.cta, op, op.result.type.count.data, op.arrivals.value.data)
    agent.env[op.result] = agent.cta.objects[op.result] = group
    yield from cluster_sync(agent, op, mask)


@handles(copy.BarrierArriveOp, copy.BarrierArriveDropOp)
def arrive(agent: Agent, op: Any, mask: np.ndarray) -> Step:
    yield None
    mb = barrier(agent, op, op.barrier, op.index, mask)
    arrivals = copy.arrivals_of(op)
    n = executions(arrivals.issuer, mask) * arrivals.each
    tx = 0
    if isinstance(op, copy.BarrierArriveDropOp) and op.expect_tx is not None:
        tx = op.expect_tx.value.data
    if isinstance(op, copy.BarrierArriveDropOp):
        mb.count -= n  # the later phases'; the open one still counts these arrivals
    lanes = releasing(arrivals.issuer, mask)
    mb.release(agent, lanes)
    mb.arrive(op, n, agent.release(lanes), tx)


@handles(copy.BarrierArriveExpectTxOp)
def arrive_expect_tx(agent: Agent, op: copy.BarrierArriveExpectTxOp, mask: np.ndarray) -> Step:
    yield None
    mb = barrier(agent, op, op.barrier, op.index, mask)
    arrivals = copy.arrivals_of(op)
    lanes = releasing(arrivals.issuer, mask)
    mb.release(agent, lanes)
    mb.arrive(
        op, executions(arrivals.issuer, mask) * arrivals.each, agent.release(lanes),
        op.bytes.value.data,
    )  # fmt: skip


@handles(copy.BarrierExpectTxOp)
def expect_tx(agent: Agent, op: copy.BarrierExpectTxOp, mask: np.ndarray) -> Step:
    yield None
    mb = barrier(agent, op, op.barrier, op.index, mask)
    lanes = releasing(Issuer.ELECTED, mask)
    mb.release(agent, lanes)
    mb.expect(op, op.bytes.value.data, agent.release(lanes))


@handles(copy.BarrierCompleteTxOp)
def complete_tx(agent: Agent, op: copy.BarrierCompleteTxOp, mask: np.ndarray) -> Step:
    yield None
    mb = barrier(agent, op, op.barrier, op.index, mask)
    lanes = releasing(op.arriving, mask)
    mb.release(agent, lanes)
    mb.complete_tx(op, executions(op.arriving, mask) * op.bytes.value.data, agent.release(lanes))


def parity_of(agent: Agent, op: Operation, value: Any, mask: np.ndarray) -> int:
    return int(uniform(agent.get(value), mask, op, "the parity")) & 1


@handles(copy.BarrierWaitOp)
def wait(agent: Agent, op: copy.BarrierWaitOp, mask: np.ndarray) -> Step:
    mb = barrier(agent, op, op.barrier, op.index, mask)
    parity = parity_of(agent, op, op.parity, mask)
    if mb.phase % 2 == parity:
        yield Wait(
            lambda: mb.phase % 2 != parity,
            lambda: f"parity {parity} of {mb.describe()}",
            op,
        )
    mb.acquire(agent, mask)
    yield None


@handles(copy.BarrierTestOp)
def test(agent: Agent, op: copy.BarrierTestOp, mask: np.ndarray) -> Step:
    yield None
    mb = barrier(agent, op, op.barrier, op.index, mask)
    parity = parity_of(agent, op, op.parity, mask)
    done = mb.phase % 2 != parity
    if done:
        mb.acquire(agent, mask)
    set_result(agent, op, np.bool_(done))
    if not done:  # a poll that failed: the scheduler lets the others go first
        yield Wait(lambda: True, lambda: f"parity {parity} of {mb.describe()} (polls)", op, True)


@handles(copy.BarrierInvalOp)
def inval(agent: Agent, op: copy.BarrierInvalOp, mask: np.ndarray) -> Step:
    yield from cluster_sync(agent, op, mask)
    group = agent.get(op.barrier)
    for mb in group.barriers:
        mb.valid = False


@handles(copy.BarrierReinitOp)
def reinit(agent: Agent, op: copy.BarrierReinitOp, mask: np.ndarray) -> Step:
    group = agent.get(op.barrier)
    for mb in group.barriers:
        phase_clock = mb.completed
        mb.init(op.arrivals.value.data)
        mb.completed = phase_clock
    yield from cluster_sync(agent, op, mask)
