"""How an agent follows the DSMEM ops (`copy_dialect.dsmem`): the peer's barrier each one
completes on, as this CTA receives it (P6 where the analysis cannot tell), and the peer
writes and arrivals it stands for (`state.copies`, `state.barriers`)."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from analysis.protocol.findings import warning
from analysis.protocol.ops_barriers import barrier_key
from analysis.protocol.records import describe_key
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
    key = peer_key(agent, op, op.barrier, op.barrier_index, op.peer)
    if key is None:
        return
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
        agent.state.barriers.table[key].unknown = True
        return
    nbytes = agent.threads_in(mask) * op.value_bytes
    what = "the peer's red.async" if op.reduction is not None else "the peer's st.async"
    agent.state.copies.peer_write(op, region, key, nbytes, agent.members(mask), what)


def peer_copy(agent: Agent, op: copy.PeerCopyOp, mask: int | None) -> None:
    src = agent.region(op.src, op.src_indices)
    dst = agent.region(op.dst, op.dst_indices)
    agent.event(op, src, dst)
    if not agent.elected(op, mask):
        return
    key = peer_key(agent, op, op.barrier, op.barrier_index, op.peer)
    s = agent.state
    s.smem.read(op, src, (agent.c0,), "the peer copy")
    s.smem.async_read(op, src, "the peer copy", (agent.c0,))
    if key is None:
        return
    s.copies.peer_write(op, dst, key, op.delivered_bytes, (agent.c0,), "the peer's bulk copy")


def peer_arrive(agent: Agent, op: copy.PeerArriveOp, mask: int | None) -> None:
    agent.operand_event(op)
    if not agent.elected(op, mask):
        return
    key = peer_key(agent, op, op.barrier, op.barrier_index, op.peer)
    if key is None:
        return
    agent.state.hb.stamp(agent.c0)
    how = "copy.peer_arrive makes one arrival per execution, on the peer's barrier"
    made = copy.arrivals_of(op).made(1)  # the elected thread's
    agent.state.barriers.arrive(op, key, made, op.tx_bytes, (agent.c0,), agent.name, how)
