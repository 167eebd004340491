"""Who runs with whom: the block barrier, `copy.warp_specialize` (an agent per role, that
join at its end) and the named barriers roles meet at (P13: more threads than the count).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.ir import Operation

from copy_dialect import ops as copy
from interpreter.machine import WARP, Agent, Step, Wait, run_block
from interpreter.ops_std import handles
from interpreter.races import Clock, join


def block_sync(agent: Agent, op: Operation, mask: np.ndarray) -> Step:
    """A barrier of the agent's threads (the block's outside roles, the role's in one): the
    ops that end with one (barrier init and inval, wait_group, the fence) and gpu.barrier."""
    yield None
    agent.publish()
    agent.release()


@dataclass
class NamedBarrier:
    """A barrier that completes a generation once `threads` have arrived (a named barrier's
    threads, or the cluster barrier's CTAs): the clocks of its arrivals, joined."""

    threads: int = 0
    arrived: int = 0
    generation: int = 0
    open: Clock = field(default_factory=dict)
    completed: Clock = field(default_factory=dict)

    def arrive(self, agent: Agent, count: int, release: bool = True) -> int:
        """`count` arrivals by `agent` (its clock released, unless not `release`); the
        generation they are of."""
        if release:
            join(self.open, agent.release())
        self.arrived += count
        generation = self.generation
        if self.arrived >= self.threads:
            self.generation += 1
            self.completed, self.open, self.arrived = self.open, {}, 0
        return generation

    def meet(self, agent: Agent, op: Operation, generation: int, what: str) -> Step:
        """Waits until `generation` completes, then acquires it: the agent's threads met."""
        if self.generation == generation:
            yield Wait(
                lambda: self.generation > generation,
                lambda: f"{what} ({self.arrived} of {self.threads})",
                op,
            )
        agent.acquire(self.completed)
        agent.publish()


def named(
    agent: Agent, op: copy.NamedBarrierSyncOp | copy.NamedBarrierArriveOp, mask: np.ndarray
) -> tuple[NamedBarrier, int]:
    bars = agent.cta.named
    bar = bars.setdefault(op.id.value.data, NamedBarrier())
    threads = op.threads.value.data
    if bar.arrived == 0:
        bar.threads = threads
    elif threads != bar.threads:
        # All who meet at a generation give the same count (PTX ISA, bar.sync/bar.arrive:
        # the barrier expects the threads the first arrival counts; another count is
        # undefined behaviour), as the proof asks (analysis/protocol/named.py).
        agent.cta.machine.report(
            "P13", op,
            f"counts {threads} threads at named barrier {op.id.value.data}, where the "
            f"threads that arrived first at this generation count {bar.threads}",
            agent.cta,
        )  # fmt: skip
    active = np.nonzero(mask)[0]
    warps = len(np.unique(active // WARP)) * WARP
    if bar.arrived + warps > bar.threads:
        agent.cta.machine.report(
            "P13", op,
            f"brings named barrier {op.id.value.data} to {bar.arrived + warps} threads, more "
            f"than the {bar.threads} it counts",
            agent.cta,
        )  # fmt: skip
    return bar, bar.arrive(agent, warps)


@handles(copy.NamedBarrierSyncOp)
def named_sync(agent: Agent, op: copy.NamedBarrierSyncOp, mask: np.ndarray) -> Step:
    yield None
    bar, generation = named(agent, op, mask)
    yield from bar.meet(agent, op, generation, f"named barrier {op.id.value.data}, threads")


@handles(copy.NamedBarrierArriveOp)
def named_arrive(agent: Agent, op: copy.NamedBarrierArriveOp, mask: np.ndarray) -> Step:
    yield None
    named(agent, op, mask)


@handles(copy.WarpSpecializeOp)
def warp_specialize(agent: Agent, op: copy.WarpSpecializeOp, mask: np.ndarray) -> Step:
    yield None
    machine = agent.cta.machine
    fork = agent.release()
    roles: list[Agent] = []
    for r, _ in enumerate(op.role_warps):
        first = op.first_warp(r) * WARP
        ids = agent.cta.thread_ids
        role_mask = mask & (ids >= first) & (ids < first + op.role_threads(r))
        role = Agent(agent.cta, f"role {r}", role_mask, dict(agent.env))
        role.parent = agent
        role.acquire(fork)
        block = op.role_block(r)
        role.env[block.args[0]] = ids - first
        roles.append(role)
        machine.start(role, run_role(role, block))
    yield Wait(
        lambda: all(r.done for r in roles),
        lambda: "the roles of copy.warp_specialize to end",
        op,
    )
    for role in roles:
        agent.acquire(role.clock)
    agent.publish()


def run_role(role: Agent, block: object) -> Step:
    yield from run_block(role, block, role.mask)  # type: ignore[arg-type]
    role.release()
