"""How an agent follows the async copies and their groups: a TMA load or store, a cp.async
copy (committed to its issuer's group, or tracked by a barrier), the commit and the wait of
a group, the fence between threads' writes and the async proxy, and a prefetch (which only
the elected thread issues). The state's copies, groups and SMEM parts check them."""

from __future__ import annotations

from analysis.protocol.facts import CopyFacts
from analysis.protocol.ops_barriers import TRACKED, barrier_key, issued
from analysis.protocol.ops_scf import choose
from analysis.protocol.records import Region
from analysis.protocol.values import UNIFORM
from analysis.protocol.walk import Agent
from copy_dialect import ops as copy


def issue(
    agent: Agent, op: copy.AsyncCopyOp | copy.Im2colLoadOp
) -> tuple[CopyFacts, Region] | None:
    """What every copy does first: its facts (decoded once per kernel), its predicate (None
    when it is false: the copy is not issued; chosen when block-uniform and unknown), its
    SMEM region, and its event in the run's trace."""
    g = agent.kernel.geometry.get(op)
    if g is None:
        g = agent.kernel.geometry[op] = CopyFacts.of(op)
    if g.predicate is not None:
        p = agent.uniform_int(g.predicate)
        if p is UNIFORM:
            choose(agent, g.predicate, (1, 0))
        if isinstance(p, tuple):
            p = p[0]
        if p == 0:
            return None
    region = agent.region(g.smem, g.smem_indices)
    index = None if g.barrier_index is None else agent.uniform_int(g.barrier_index)
    agent.event(op, region, index)
    return g, region


def async_copy(agent: Agent, op: copy.AsyncCopyOp | copy.Im2colLoadOp, mask: int | None) -> None:
    s = agent.state
    issued_copy = issue(agent, op)
    if issued_copy is None:
        return
    g, region = issued_copy
    if not g.tma:
        agent.whole_group(
            op, mask, "is a cp.async copy the block's threads share",
            "is a cp.async copy the role's threads share",
        )  # fmt: skip
        if g.barrier is None:
            s.copies.cp_async(op, region, agent.groups, agent.classes)
            return
        arrivals = g.arrivals
        assert arrivals is not None  # a cp.async copy on a barrier arrives on it (MB13)
        key = barrier_key(agent, op, g.barrier, g.barrier_index)
        got = None if key is None else issued(agent, op, mask, key, arrivals.issuer, TRACKED)
        if got is not None:
            threads, members, how = got
            made = arrivals.made(threads)
            s.copies.tracked_cp_async(op, region, key, made, members, agent.name, how)  # type: ignore[arg-type]
        return
    if not agent.elected(op, mask):
        return
    if not g.load:
        s.copies.tma_store(op, region, agent.groups, agent.c0)
        if g.map is not None:
            s.maps.copy(op, g.map, None, None, agent.groups, agent.c0, agent.issuer)
        return
    assert g.barrier is not None
    key = barrier_key(agent, op, g.barrier, g.barrier_index)
    if key is None:
        return
    made = 0 if g.arrivals is None else g.arrivals.made(1)  # its issuer's
    end = s.copies.tma_load(op, region, key, made, g.expect, g.bytes, agent.c0, agent.name)  # type: ignore[arg-type]
    if g.map is not None:
        s.maps.copy(op, g.map, key, end, agent.groups, agent.c0, agent.issuer)  # type: ignore[arg-type]


def commit(agent: Agent, op: copy.CommitGroupOp, mask: int | None) -> None:
    bulk = op.group.data is copy.GroupKind.BULK
    agent.event(op)
    if bulk:
        agent.elected(op, mask)
    else:
        agent.whole_group(op, mask, "commits every thread's cp.async copies")
    agent.state.group_sets.commit(agent.groups, bulk)


def wait_group(agent: Agent, op: copy.WaitGroupOp, mask: int | None) -> None:
    agent.event(op)
    role_why = agent.role_barrier() if agent.role is not None else ""
    agent.whole_group(op, mask, "ends with a block barrier", role_why)
    bulk = op.group.data is copy.GroupKind.BULK
    agent.state.wait_group(
        agent.groups, bulk, op.pending.value.data, op.is_read_only, agent.classes,
        agent.role is None, op,
    )  # fmt: skip


def fence(agent: Agent, op: copy.FenceAsyncSharedOp, mask: int | None) -> None:
    agent.event(op)
    role_why = agent.role_barrier() if agent.role is not None else ""
    agent.whole_group(op, mask, "ends with a block barrier", role_why)
    agent.state.fence(agent.classes, agent.role is None)


def prefetch(agent: Agent, op: copy.PrefetchOp, mask: int | None) -> None:
    agent.elected(op, mask)
