"""What an agent's tcgen05 async operations owe their commits (`tcgen05.commit`, PTX ISA
9.7.16.11: it tracks every earlier tcgen05 async operation of the thread: tcgen05.mma,
tcgen05.cp, tcgen05.shift): the clock component whose time n says the operations before the
agent's n-th commit are complete (the epoch of their SMEM reads, `smem_read`), and the MMAs
still in flight (`interpreter.ops_tcgen05`)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.ir import Operation

from interpreter.machine import Agent, Transfer
from interpreter.races import Access


@dataclass(eq=False)
class Issued:
    compute: Callable[[], None]
    transfer: Transfer | None = None
    after: list[Callable[[], None]] = field(default_factory=list)
    """What completes with it (a commit's arrival)."""


@dataclass
class Async:
    """An agent's tcgen05 async operations: the clock component whose time n says the
    operations before its n-th commit are complete; its commits; those not complete."""

    component: int
    commits: int = 0
    pending: list[Issued] = field(default_factory=list)


STATE: weakref.WeakKeyDictionary[Agent, Async] = weakref.WeakKeyDictionary()


def state_of(agent: Agent) -> Async:
    found = STATE.get(agent)
    if found is None:
        component = agent.cta.machine.clocks.new(f"tcgen05 commits of {agent.name}")
        found = STATE[agent] = Async(component)
    return found


def smem_read(agent: Agent, op: Operation, units: np.ndarray, what: str) -> Access:
    """The async proxy's read of SMEM (16-byte `units`, sorted and unique) by a tcgen05 op
    `agent` issues: complete at its next commit, so a wait on that commit's arrival orders
    a later write after it, and it must itself come after the writes of what it reads."""
    state = state_of(agent)
    epoch = (state.component, state.commits + 1)
    return Access(False, True, units, None, epoch, agent, None, op, what, tensor_core=True,
                  unit=16)  # fmt: skip
