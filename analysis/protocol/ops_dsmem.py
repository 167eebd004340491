"""How an agent follows the DSMEM ops (`copy_dialect.dsmem`): the peer's barrier each one
completes on (P6 where the analysis cannot tell), and the peer writes and arrivals it makes
(`state.copies`, `state.barriers`). With the cluster modelled rank by rank (`cluster`), they
land in the state of the CTA the peer rank names, checked against that CTA's clocks (a
write into a buffer the peer may still read, P3; a CTA that returned, P7); with one CTA
standing for all, a CTA receives what it sends (the symmetric reading)."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from analysis.protocol.findings import error, warning
from analysis.protocol.ops_barriers import barrier_key, named_operands
from analysis.protocol.records import describe_key
from analysis.protocol.state import State
from analysis.protocol.steps import Stop
from analysis.protocol.walk import Agent
from copy_dialect import ops as copy


def peer_key(
    agent: Agent, op: Operation, barrier: SSAValue, index: SSAValue | None, peer: SSAValue
) -> tuple[SSAValue, int] | None:
    """The local barrier that stands for the peer's one a DSMEM op completes on: in a
    symmetric cluster what a CTA sends its peer is what it receives, as long as the
    peers are a permutation of the ranks (rank ^ 1, (rank + 1) % n). A constant rank
    sends every CTA's write to one CTA: reported, the barrier left unknown."""
    key = barrier_key(agent, op, barrier, index)
    if key is None:
        return None
    rank = agent.uniform_int(peer)
    if isinstance(rank, int):
        # rule: P6
        agent.report(
            warning(
                op,
                f"cannot prove the phases of {describe_key(key)}: the peer rank is the "  # type: ignore[arg-type]
                f"constant {rank}, so every CTA of the cluster writes CTA {rank} and the "
                "others receive nothing",
                "compute the peer from the CTA's rank as a permutation (rank ^ 1 in a "
                "pair, (rank + 1) % n in a ring): the analysis credits each CTA with what "
                "it sends",
            )
        )
        agent.state.barriers.table[key].unknown = True  # type: ignore[index]
        return None
    return key  # type: ignore[return-value]


def peer_target(
    agent: Agent, op: Operation, barrier: SSAValue, index: SSAValue | None, peer: SSAValue
) -> tuple[State, tuple[SSAValue, int]] | None:
    """The state of the CTA a DSMEM op lands in and the barrier it completes on there: the
    peer CTA itself when the cluster is modelled rank by rank, else this CTA (`peer_key`)."""
    if agent.walk.cluster.facts.ranks == 1:
        key = peer_key(agent, op, barrier, index, peer)
        return None if key is None else (agent.state, key)
    key = barrier_key(agent, op, barrier, index)
    if key is None:
        return None
    rank = agent.uniform_int(peer)
    if not isinstance(rank, int):
        # rule: P6
        agent.report(
            warning(
                op,
                f"cannot prove the phases of {describe_key(key)} in the peer CTA: its rank is "  # type: ignore[arg-type]
                "not known for each CTA of the cluster",
                "compute the peer from gpu.block_id with arith ops (rank ^ 1 with rank = "
                "block_id x % 2, (rank + 1) % n in a ring)",
            )
        )
        for state in agent.walk.states:
            if key in state.barriers.table:
                state.barriers.table[key].unknown = True  # type: ignore[index]
        return None
    ranks = agent.walk.cluster.facts.ranks
    if not 0 <= rank < ranks:
        # rule: DS1
        agent.report(
            error(
                op,
                f"peer rank {rank} is outside the cluster: expected a rank in [0, {ranks}) "
                f"(CTA {agent.rank} computes {rank} here)",
                f"compute a rank below {ranks} (the peer of rank r is r ^ 1 in a pair, "
                f"(r + 1) % {ranks} in a ring), or bound the loop that gives it",
            )
        )
        raise Stop
    where = describe_key(key)  # type: ignore[arg-type]
    if not agent.walk.cluster.target(op, agent.rank, rank, f"'{op.name}'", where):
        raise Stop
    return agent.walk.states[rank], key  # type: ignore[return-value]


def peer_store(agent: Agent, op: copy.PeerStoreOp, mask: int | None) -> None:
    # The threads' stores fill the ref together: the region is the slot that the leading
    # block-uniform indices pick (the whole ref when the first varies by thread).
    known = []
    for v in op.indices:
        got = agent.uniform_int(v)
        if not isinstance(got, int):
            break
        known.append(v)
    region = agent.region(op.ref, known)
    agent.event(op, region)
    found = peer_target(agent, op, *named_operands(agent, op, "barrier", "barrier_index", "peer"))
    if found is None:
        return
    there, key = found
    if mask is None or agent.n is None:
        why = "the threads that reach it are not known" if agent.n else "the block size is unknown"
        # rule: P6
        agent.report(
            warning(
                op,
                f"cannot prove the phases of {describe_key(key)}: every thread that reaches "
                f"this store sends its value, and {why}",
                "give the kernel gpu.known_block_size, and make the threads that store "
                "known (a block-uniform loop, a condition on the thread id)",
            )
        )
        there.barriers.table[key].unknown = True
        return
    nbytes = agent.threads_in(mask) * op.value_bytes
    what = "the peer's red.async" if op.reduction is not None else "the peer's st.async"
    if there is not agent.state:
        what = f"CTA {agent.rank}'s {'red' if op.reduction is not None else 'st'}.async"
    there.copies.peer_write(op, region, key, nbytes, agent.members(mask), what)


def peer_copy(agent: Agent, op: copy.PeerCopyOp, mask: int | None) -> None:
    src = agent.region(op.src, op.src_indices)
    dst = agent.region(op.dst, op.dst_indices)
    agent.event(op, src, dst)
    if not agent.elected(op, mask):
        return
    found = peer_target(agent, op, *named_operands(agent, op, "barrier", "barrier_index", "peer"))
    s = agent.state
    s.smem.read(op, src, (agent.c0,), "the peer copy")
    s.smem.async_read(op, src, "the peer copy", (agent.c0,))
    if found is None:
        return
    there, key = found
    what = "the peer's bulk copy" if there is s else f"CTA {agent.rank}'s bulk copy"
    end = there.copies.peer_write(op, dst, key, op.delivered_bytes, (agent.c0,), what)
    if end is not None:  # its source is read until the receiver's phase completes (P2, P7)
        s.smem.peer_read(op, src, end)


def peer_arrive(agent: Agent, op: copy.PeerArriveOp, mask: int | None) -> None:
    agent.operand_event(op)
    if not agent.elected(op, mask):
        return
    found = peer_target(agent, op, *named_operands(agent, op, "barrier", "barrier_index", "peer"))
    if found is None:
        return
    there, key = found
    hb = agent.state.hb
    clock = None
    if op.is_relaxed:  # it releases what had completed, not its threads' accesses
        clock, stamp = hb.relaxed_arrival((op, agent.c0), agent.c0)
    else:
        stamp = hb.stamp(agent.c0)
    how = "copy.peer_arrive makes one arrival per execution, on the peer's barrier"
    made = copy.arrivals_of(op).made(1)  # the elected thread's
    there.barriers.arrive(
        op, key, made, op.tx_bytes, (agent.c0,), agent.name, how, clock, rank=agent.cta
    )
    if there is not agent.state:
        rank = agent.walk.states.index(there)
        agent.walk.cluster.arrival(op, agent.rank, rank, (stamp,), agent.name)
