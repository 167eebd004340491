"""How an agent follows the ops of roles: `copy.warp_specialize`, which forks an agent per
role and joins them (`run`), and the named barriers the roles' threads meet at
(`copy.named_barrier_sync`, `copy.named_barrier_arrive`: P13), which `state.named`
counts."""

from __future__ import annotations

from xdsl.ir import Operation

from analysis.protocol.clocks import meet
from analysis.protocol.findings import warning
from analysis.protocol.named import NamedBarrier
from analysis.protocol.steps import WARP, Blocked, Steps
from analysis.protocol.walk import Agent
from copy_dialect import ops as copy


def named_barrier(agent: Agent, op: Operation, mask: int | None, sync: bool) -> Steps | None:
    assert isinstance(op, copy.NamedBarrierSyncOp | copy.NamedBarrierArriveOp)
    agent.event(op)
    why = "is a named barrier the block's threads meet at (bar.sync or bar.arrive)"
    agent.whole_group(op, mask, why, why.replace("block's", "role's"))
    barrier, threads = op.id.value.data, op.threads.value.data
    if agent.n is None:
        # rule: P13
        agent.report(
            warning(
                op,
                f"cannot prove named barrier {barrier}: the block size is unknown, so "
                "the threads that meet here are not known",
                "give the kernel gpu.known_block_size",
            )
        )
        return None
    s = agent.state
    for c in agent.classes:
        s.hb.stamp(c)
    taken = set(s.named.by_id) | set(range(agent.kernel.roles + 1))
    free = next((i for i in range(16) if i not in taken), None)
    nb, g = s.named.arrive(op, barrier, threads, agent.n, agent.classes, agent, agent.name, free)
    if not sync:
        return None
    return named_wait(agent, op, barrier, nb, g)


def named_wait(agent: Agent, op: Operation, barrier: int, nb: NamedBarrier, g: int) -> Steps:
    s = agent.state
    if nb.completed <= g:
        yield Blocked(
            op,
            lambda: nb.completed > g,
            lambda others: s.named.stuck(op, barrier, others),
            what=f"{op.name} {barrier} (generation {g})",
        )
    s.named.synced(nb, g, agent.classes)
    s.prune()


def named_sync(agent: Agent, op: copy.NamedBarrierSyncOp, mask: int | None) -> Steps | None:
    return named_barrier(agent, op, mask, True)


def named_arrive(agent: Agent, op: copy.NamedBarrierArriveOp, mask: int | None) -> Steps | None:
    return named_barrier(agent, op, mask, False)


def warp_specialize(agent: Agent, op: copy.WarpSpecializeOp, mask: int | None) -> Steps:
    """The roles start where the block is (what every thread of the block knows) and
    run at once; the block goes on once every role has ended (the join)."""
    hb = agent.state.hb
    start = meet(hb.clocks[agent.c0], hb.clocks[agent.c1])
    walk = agent.walk
    roles = []
    for r in range(len(op.roles)):
        first = hb.new_class(start)
        rest = hb.new_class(start) if op.role_warps[r] > 1 else first
        role = Agent(
            walk, f"role {r}", r, op.role_threads(r), WARP * op.first_warp(r), agent,
            (first, rest),
        )  # fmt: skip
        role.steps = role.role_body(op.role_block(r))
        roles.append(role)
    walk.fork(roles)
    yield Blocked(op, lambda: all(a.done for a in roles), None)
    walk.join(agent, roles, op)
