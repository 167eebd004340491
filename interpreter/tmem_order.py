"""The order of tcgen05 accesses of TMEM between agents (P14), as the protocol analysis's
`analysis/protocol/tmem_order.py` checks it before the run.

The PTX ISA orders one thread's asynchronous tcgen05 operations (`tcgen05.ld`, `.st`, `.cp`,
`.mma`, `.shift`) before another thread's only through a thread synchronisation fenced on
both sides: `tcgen05.fence::before_thread_sync` after the first access and before the sync
(which `tcgen05.commit` performs; an MMA, a copy or a shift is done only through a commit),
and `tcgen05.fence::after_thread_sync` after the sync and before the second access
(`nvvm.tcgen05.fence <before>` / `<after>`). Here each access of a TMEM allocation's columns
is kept with its agent's epoch and, once the agent fences, the fence's epoch (its time then:
a release after it publishes it). A later access of overlapping columns by another agent,
one of the two a write and one a tcgen05.mma, tcgen05.cp or tcgen05.shift, must see the
access (else the two are not ordered at all: a race), see its fence (else the sync did not
follow a fence) and have fenced after seeing it (its clock at its last after fence). Agents
are compared, not threads: the threads of one agent (the block outside roles, one role) are
taken as one, and two loads or stores are not compared (a warp reaches its own quarter of
the lanes). Within one agent, a tcgen05.ld or .st of the columns of the agent's own MMA,
copy or shift (one of the two a write) must come after a wait that observed the arrival of
a commit issued after it (`check_own`: the block's thread 0 shifts, its warps load), and so
must an MMA, copy or shift after one of its own that is not its pipeline predecessor (a
copy over the metadata an earlier MMA reads: `copy_dialect.tmem.pipelined`). A CTA
pair's `cta_group 2` MMA or copy is kept in both CTAs' TMEM, so the peer's accesses are
compared with it (its commit multicast to both CTAs' barriers: `ops_tcgen05`)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation

from copy_dialect.tmem import pipelined
from interpreter.machine import Agent
from interpreter.ops_std import handles
from interpreter.races import Clock, Epoch, sees
from passes.nvvm.tcgen05_fence import Tcgen05FenceOp

BEFORE = "nvvm.tcgen05.fence <before>"
AFTER = "nvvm.tcgen05.fence <after>"


@dataclass(eq=False)
class Access:
    op: Operation
    agent: Agent
    epoch: Epoch
    columns: range
    write: bool
    asynchronous: bool
    fence: Epoch | None = None
    done: Epoch | None = None
    """An asynchronous access: the time of its agent's tcgen05 commits at which it is
    complete (the next commit's, `ops_tcgen05.Async`)."""


ACCESSES: weakref.WeakKeyDictionary[object, list[Access]] = weakref.WeakKeyDictionary()
"""Per TMEM (`ops_tmem.Tmem`): the accesses kept, the latest per agent, columns and kind."""
AFTER_CLOCKS: weakref.WeakKeyDictionary[Agent, Clock] = weakref.WeakKeyDictionary()
"""Each agent's clock at its last after fence."""


def access(
    agent: Agent,
    op: Operation,
    tmem: object,
    columns: range,
    write: bool,
    asynchronous: bool = False,
) -> None:
    """`agent`'s `op` touches `columns` of `tmem` (a tcgen05 access, issued now)."""
    kept = ACCESSES.setdefault(tmem, [])
    for prior in list(kept):
        if not overlap(prior.columns, columns) or not (prior.write or write):
            continue
        if prior.agent is not agent:
            if (prior.asynchronous or asynchronous) and check(agent, op, prior):
                kept.remove(prior)
        elif prior.asynchronous and (not asynchronous or not pipelined(prior.op, op)):
            if check_own(agent, op, prior):
                kept.remove(prior)
    kept[:] = [
        a
        for a in kept
        if not (
            a.agent is agent
            and a.columns == columns
            and a.write == write
            and a.asynchronous == asynchronous
        )
    ]
    done = commit_epoch(agent) if asynchronous else None
    kept.append(Access(op, agent, agent.epoch, columns, write, asynchronous, done=done))


def commit_epoch(agent: Agent) -> Epoch:
    """When an asynchronous access `agent` issues now is complete: at its next commit."""
    from interpreter.ops_tcgen05 import state_of  # (ops_tcgen05 imports this module)

    state = state_of(agent)
    return (state.component, state.commits + 1)


def check_own(agent: Agent, op: Operation, prior: Access) -> bool:
    """Reports (P14) whether `agent`'s `op` touches the columns of its own earlier
    tcgen05.mma, .cp or .shift before a wait observed the arrival of a commit issued after
    it; True when it reported. `op` is a tcgen05.ld or .st, or an asynchronous op that does
    not form one of the ISA's pipelines with the earlier one (`pipelined`: the two may
    execute in either order, PTX ISA 9.7.16.6.2). (An agent's threads are one: the block's thread 0
    issues the shift and its warps load, which the proof tells apart as two classes. The
    after fence is not asked within one agent: kernels that wait on a raw `nvvm.mbarrier`,
    which the proof does not follow, read after the wait without it.)"""
    assert prior.done is not None
    if sees(agent.clock, prior.done):
        return False
    message = (
        f"accesses TMEM that its own {prior.op.name} may still be accessing: no wait has "
        "observed the arrival of a tcgen05.commit issued after it (a tcgen05.mma, .cp or "
        ".shift ends only through a commit)"
    )
    agent.cta.machine.report("P14", op, message, agent.cta, prior.op)
    return True


def check(agent: Agent, op: Operation, prior: Access) -> bool:
    """Reports (P14) whether `agent`'s access `op` is not ordered after `prior` as the ISA
    asks; True when it reported."""
    kind = prior.op.name
    if not sees(agent.clock, prior.epoch):
        message = (
            f"accesses TMEM that {prior.agent.name}'s {kind} touches with nothing ordering the "
            "two: a race on TMEM"
        )
    elif prior.fence is None or not sees(agent.clock, prior.fence):
        how = "a tcgen05.commit" if prior.asynchronous else BEFORE
        message = (
            f"accesses TMEM that {prior.agent.name}'s {kind} touched, handed over through a sync "
            f"that no fence orders it before ({how} after it and before the sync)"
        )
    elif not sees(AFTER_CLOCKS.get(agent, {}), prior.fence):
        message = (
            f"accesses TMEM that {prior.agent.name}'s {kind} touched, after a sync but with no "
            f"{AFTER} between them"
        )
    else:
        return False
    agent.cta.machine.report("P14", op, message, agent.cta, prior.op)
    return True


def fence(agent: Agent, before: bool, commit: bool = False) -> None:
    """`agent` fences: before a sync (loads and stores; with `commit`, MMAs and copies too)
    or after one."""
    if not before:
        AFTER_CLOCKS[agent] = dict(agent.clock)
        return
    for kept in ACCESSES.values():
        for a in kept:
            if a.agent is agent and a.fence is None and (commit or not a.asynchronous):
                a.fence = agent.epoch


def free(tmem: object, columns: range) -> None:
    kept = ACCESSES.get(tmem)
    if kept:
        kept[:] = [a for a in kept if not overlap(a.columns, columns)]


def overlap(a: range, b: range) -> bool:
    return max(a.start, b.start) < min(a.stop, b.stop)


def span(cols: np.ndarray, pack: int = 0) -> range:
    """The columns of a load's or store's registers (with pack / unpack, their pairs)."""
    if not cols.size:
        return range(0)
    return range(int(cols.min()), int(cols.max()) + 1 + pack)


@handles(Tcgen05FenceOp)
def tcgen05_fence(agent: Agent, op: Tcgen05FenceOp, mask: np.ndarray) -> None:
    fence(agent, op.before)
