"""The CTAs of a cluster together: the cluster barrier (barrier init, inval and reinit in a
clustered kernel end with one, as their lowering does), and the DSMEM ops that write a peer
CTA's SMEM or arrive on its barriers (`copy.peer_store`, `copy.peer_copy`,
`copy.peer_arrive`). A peer's buffer or barrier is the one its own run made for the same
value (`Cta.objects`): the same offset in its SMEM, as on the GPU."""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np
from xdsl.ir import Operation, SSAValue

from copy_dialect import ops as copy
from interpreter.machine import Agent, Cta, Step, Transfer
from interpreter.memory import SmemRef, read_smem, units, write_smem
from interpreter.ops_roles import NamedBarrier, block_sync
from interpreter.ops_std import handles, smem_offsets_of
from interpreter.races import Access
from interpreter.values import (
    InterpretError,
    RuleBroken,
    storage_dtype,
    to_storage,
    uniform,
)


def clustered(agent: Agent) -> bool:
    return prod(agent.cta.machine.cluster) > 1


def cluster_barrier(agent: Agent) -> NamedBarrier:
    """The cluster's barrier (`barrier.cluster`), which counts every thread of every CTA."""
    machine = agent.cta.machine
    if machine.cluster_barrier is None:
        machine.cluster_barrier = NamedBarrier(threads=len(machine.ctas) * agent.cta.threads)
    return machine.cluster_barrier


def cluster_sync(agent: Agent, op: Operation, mask: np.ndarray) -> Step:
    """The block's barrier, or in a cluster the cluster's (`barrier.cluster.arrive` and
    `wait`): every CTA's threads meet."""
    if not clustered(agent):
        yield from block_sync(agent, op, mask)
        return
    yield None
    bar = cluster_barrier(agent)
    generation = bar.arrive(agent, int(mask.sum()))
    yield from bar.meet(agent, op, generation, "the cluster barrier, threads")


@handles(copy.ClusterSyncOp)
def cluster_sync_op(agent: Agent, op: copy.ClusterSyncOp, mask: np.ndarray) -> Step:
    """`copy.cluster_sync`: the threads that reach it arrive on the cluster's barrier (a
    relaxed arrive releases nothing) and/or wait for the generation of their last arrive."""
    yield None
    bar = cluster_barrier(agent)
    pending = agent.cta.machine.cluster_arrivals
    if op.arrives:
        if agent in pending:
            raise RuleBroken(
                op, "P13", "arrives on the cluster barrier again before waiting for its last arrive"
            )
        pending[agent] = bar.arrive(agent, int(mask.sum()), release=op.relaxed is None)
    if op.waits:
        generation = pending.pop(agent, None)
        if generation is None:
            raise RuleBroken(op, "P13", "waits on the cluster barrier without an arrive before it")
        yield from bar.meet(agent, op, generation, "the cluster barrier, threads")


def peer_cta(agent: Agent, op: Operation, peer: SSAValue, mask: np.ndarray) -> Cta:
    rank = int(uniform(agent.get(peer), mask, op, "the peer CTA"))
    ctas = agent.cta.machine.ctas
    if not 0 <= rank < len(ctas):
        raise RuleBroken(op, "DS1", f"names CTA {rank} of a cluster of {len(ctas)}: out of range")
    return ctas[rank]


def peer_object(agent: Agent, op: Operation, cta: Cta, value: SSAValue, what: str) -> Any:
    """What `value` names in CTA `cta`: its buffer or barrier group at the same offset."""
    found = cta.objects.get(value)
    if found is None:
        raise InterpretError(
            op,
            f"uses the {what} of CTA {cta.rank} before that CTA made it (no cluster barrier "
            "after its copy.alloc_smem / copy.barrier_init orders the two)",
        )
    return found


def peer_barrier(
    agent: Agent, op: Operation, cta: Cta, group: SSAValue, index: Any, mask: np.ndarray
) -> Any:
    return peer_object(agent, op, cta, group, "barrier group").at(agent, op, index, mask)


def log_remote(
    agent: Agent,
    op: Operation,
    cta: Cta,
    offsets: np.ndarray,
    size: int,
    epoch: Any,
    unit: int = 4,
) -> None:
    """A write into `cta`'s SMEM by this CTA's copy or DSMEM op, in the units it moves."""
    access = Access(
        True, True, units(offsets, size, unit), None, epoch, agent, None, op,
        f"CTA {agent.cta.rank}'s DSMEM write", unit=unit,
    )  # fmt: skip
    agent.cta.machine.races(cta.smem.log.check(access, agent.clock), cta)


def check_returned(agent: Agent, op: Operation, cta: Cta) -> None:
    if cta.returned:
        agent.cta.machine.report(
            "P7", op, f"reaches CTA {cta.rank} of the cluster after that CTA returned", agent.cta
        )


@handles(copy.PeerStoreOp)
def peer_store(agent: Agent, op: copy.PeerStoreOp, mask: np.ndarray) -> Step:
    yield None
    cta = peer_cta(agent, op, op.peer, mask)
    check_returned(agent, op, cta)
    ref = peer_object(agent, op, cta, op.ref, "SMEM buffer")
    assert isinstance(ref, SmemRef)
    mb = peer_barrier(agent, op, cta, op.barrier, op.barrier_index, mask)
    idx = [agent.get(v) for v in op.indices]
    threads = np.nonzero(mask)[0]
    dtype = storage_dtype(ref.element_type)
    value = agent.get(op.value)
    width = op.width
    offsets = smem_offsets_of(ref, idx, width, agent.cta.threads)[threads].reshape(-1)
    stored = to_storage(ref.element_type, value)
    stored = np.broadcast_to(
        stored, (agent.cta.threads, width) if width > 1 else (agent.cta.threads,)
    )
    data = np.asarray(stored)[threads].reshape(-1)
    epoch = (mb.component, mb.phase + 1)
    log_remote(agent, op, cta, offsets, dtype.itemsize, epoch)
    issue = agent.release()
    nbytes = offsets.size * dtype.itemsize
    reduction = op.reduction

    def complete() -> None:
        if reduction is None:
            write_smem(cta.smem, offsets, data, dtype)
        else:
            from interpreter.ops_copies import reduce

            old = read_smem(cta.smem, offsets, dtype)
            write_smem(cta.smem, offsets, reduce(reduction.data, old, data, op), dtype)
        mb.complete_tx(op, nbytes, issue)

    agent.cta.machine.issue(Transfer(op, agent.cta, complete, {cta: epoch}))


@handles(copy.PeerCopyOp)
def peer_copy(agent: Agent, op: copy.PeerCopyOp, mask: np.ndarray) -> Step:
    yield None
    cta = peer_cta(agent, op, op.peer, mask)
    check_returned(agent, op, cta)
    src = agent.get(op.src)
    dst = peer_object(agent, op, cta, op.dst, "SMEM buffer")
    mb = peer_barrier(agent, op, cta, op.barrier, op.barrier_index, mask)
    src_slot = tuple(int(uniform(agent.get(v), mask, op, "the slot")) for v in op.src_indices)
    dst_slot = tuple(int(uniform(agent.get(v), mask, op, "the slot")) for v in op.dst_indices)
    box = src.shape[len(src_slot) :]
    dtype = storage_dtype(src.element_type)
    src_offsets = src.slot_offsets(src_slot, box)
    dst_offsets = dst.slot_offsets(dst_slot, box)
    epoch = (mb.component, mb.phase + 1)
    from interpreter.ops_copies import log_async

    log_async(agent, op, src_offsets, dtype.itemsize, False, epoch)  # a bulk copy: 16 bytes
    log_remote(agent, op, cta, dst_offsets, dtype.itemsize, epoch)
    issue = agent.release()
    nbytes = dst_offsets.size * dtype.itemsize
    own = agent.cta

    def complete() -> None:
        write_smem(cta.smem, dst_offsets, read_smem(own.smem, src_offsets, dtype), dtype)
        mb.complete_tx(op, nbytes, issue)

    # Its source is the sender's SMEM: the sender learns it is read from the receiver.
    transfer = Transfer(op, agent.cta, complete, {cta: epoch, own: epoch})
    agent.cta.machine.issue(transfer)


@handles(copy.PeerArriveOp)
def peer_arrive(agent: Agent, op: copy.PeerArriveOp, mask: np.ndarray) -> Step:
    yield None
    cta = peer_cta(agent, op, op.peer, mask)
    check_returned(agent, op, cta)
    mb = peer_barrier(agent, op, cta, op.barrier, op.barrier_index, mask)
    tx = 0 if op.expect_tx is None else op.expect_tx.value.data
    from interpreter.ops_barriers import executions, releasing

    arrivals = copy.arrivals_of(op)
    clock = agent.release(releasing(arrivals.issuer, mask))
    if op.is_relaxed:  # (`.relaxed.cluster`: what had completed, not the threads' accesses)
        clock = agent.cta.machine.clocks.relaxed(clock)
    mb.arrive(op, executions(arrivals.issuer, mask) * arrivals.each, clock, tx)


def mask_ctas(
    agent: Agent, op: Operation, value: SSAValue, mask: np.ndarray, rule: str
) -> list[Cta]:
    """The CTAs of the cluster a 16-bit CTA mask `value` names (bit r: rank r); one that
    names none, or a CTA beyond the cluster, breaks `rule`."""
    bits = int(uniform(agent.get(value), mask, op, "the multicast mask")) & 0xFFFF
    ctas = agent.cta.machine.ctas
    if not bits or bits >> len(ctas):
        raise RuleBroken(
            op, rule, f"multicasts to CTA mask {bits:#x}, in a cluster of {len(ctas)} CTAs"
        )
    return [cta for rank, cta in enumerate(ctas) if bits >> rank & 1]


def collective_group(agent: Agent, dims: tuple[int, ...]) -> tuple[list[Cta], int]:
    """The CTAs a collective copy over cluster `dims` is shared by, in rank order (the
    first of `dims` fastest, as the lowering's ctaMask), and this CTA's index among them."""
    me = agent.cta
    cluster = agent.cta.machine.cluster
    group = [
        c for c in agent.cta.machine.ctas
        if all(c.local[d] == me.local[d] for d in range(3) if d not in dims)
    ]  # fmt: skip

    def index(c: Cta) -> int:
        i, stride = 0, 1
        for d in dims:
            i += c.local[d] * stride
            stride *= cluster[d]
        return i

    group.sort(key=index)
    return group, index(me)
