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
    threads: int = 0
    arrived: int = 0
    generation: int = 0
    open: Clock = field(default_factory=dict)
    completed: Clock = field(default_factory=dict)


def named(
    agent: Agent, op: copy.NamedBarrierSyncOp | copy.NamedBarrierArriveOp, mask: np.ndarray
) -> tuple[NamedBarrier, int]:
    bars = agent.cta.named
    bar = bars.setdefault(op.id.value.data, NamedBarrier())
    threads = op.threads.value.data
    if bar.arrived == 0:
        bar.threads = threads
    active = np.nonzero(mask)[0]
    warps = len(np.unique(active // WARP)) * WARP
    join(bar.open, agent.release())
    bar.arrived += warps
    generation = bar.generation
    if bar.arrived > bar.threads:
        agent.cta.machine.report(
            "P13", op,
            f"brings named barrier {op.id.value.data} to {bar.arrived} threads, more than "
            f"the {bar.threads} it counts",
            agent.cta,
        )  # fmt: skip
    if bar.arrived >= bar.threads:
        bar.generation += 1
        bar.completed = bar.open
        bar.open = {}
        bar.arrived = 0
    return bar, generation


@handles(copy.NamedBarrierSyncOp)
def named_sync(agent: Agent, op: copy.NamedBarrierSyncOp, mask: np.ndarray) -> Step:
    yield None
    bar, generation = named(agent, op, mask)
    if bar.generation == generation:
        yield Wait(
            lambda: bar.generation > generation,
            lambda: f"named barrier {op.id.value.data} ({bar.arrived} of {bar.threads} threads)",
            op,
        )
    agent.acquire(bar.completed)
    agent.publish()


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
