"""How an agent follows cluster launch control (`copy_dialect.cluster_launch_control`): a
`copy.try_cancel` is an async write of its 16-byte response slot by the elected thread that
completes 16 transaction bytes on its barrier's open phase, as a DSMEM bulk write lands
(`Copies.peer_write`: a Fill of the slot on that phase); a `copy.query_cancel` is a read of
the slot by every thread that reaches it. So the proof checks the response's lifetime as a
TMA load's: the query after the phase is observed (P1), no new try_cancel into the slot
before every reader of the last response has read it (P3).

A multicast try_cancel writes the slot and completes the bytes in every CTA of the cluster:
a kernel with one is modelled rank by rank (`cluster.cluster_facts`), and each CTA's state
receives it (not after that CTA returned, P7), so every CTA of a pair requesting with
multicast (two responses into each slot, unordered) is rejected, and one CTA requesting for
all under a condition on its rank is proven. (That the peers' barriers are initialized before
the request reaches them, a copy.cluster_sync after the init, is not checked, as for the DSMEM
ops.)"""

from __future__ import annotations

from analysis.protocol.ops_barriers import barrier_key, named_operands
from analysis.protocol.walk import Agent
from copy_dialect import ops as copy

WRITER = "the try_cancel response"


def try_cancel(agent: Agent, op: copy.TryCancelOp, mask: int | None) -> None:
    region = agent.region(op.response, op.response_indices)
    agent.event(op, region)
    if not agent.elected(op, mask):
        return
    key = barrier_key(agent, op, *named_operands(agent, op, "barrier", "barrier_index"))
    if key is None:
        return
    issuers = (agent.c0,)
    walk = agent.walk
    if not op.is_multicast or walk.cluster.facts.ranks == 1:
        agent.state.copies.peer_write(op, region, key, copy.RESPONSE_BYTES, issuers, WRITER, False)
        return
    for rank, there in enumerate(walk.states):
        if rank != agent.rank and not walk.cluster.target(
            op, agent.rank, rank, f"'{op.name}'", WRITER
        ):
            continue
        remote = rank != agent.rank
        there.copies.peer_write(op, region, key, copy.RESPONSE_BYTES, issuers, WRITER, remote)


def query_cancel(agent: Agent, op: copy.QueryCancelOp, mask: int | None) -> None:
    region = agent.region(op.response, op.response_indices)
    agent.event(op, region)
    agent.state.smem.thread_access(
        op, region, False, agent.members(mask), agent.name, f"'{op.name}'"
    )
