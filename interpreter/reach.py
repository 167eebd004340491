"""Who of an agent's threads must reach an op (rule P10), as the lowering issues it: the
group's elected thread, every thread of the group, or whole warps; and what a run does when
others reach it (`reaches`, asked by `machine.run_block` before each op)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import gpu
from xdsl.ir import Operation

from copy_dialect import ops as copy
from copy_dialect.attributes import Implementation, Issuer
from interpreter.races import WARP
from interpreter.values import RuleBroken

if TYPE_CHECKING:
    from interpreter.machine import Agent

ELECTED, GROUP, WARPS = "elected", "group", "warps"
"""Who of an agent's threads must reach an op, as the lowering issues it
(passes/convert_copy_to_nvvm): its elected thread, every thread of its group (the block, or
the role), or each warp whole."""

ISSUERS = {Issuer.ELECTED: ELECTED, Issuer.WARPS: WARPS, Issuer.THREADS: None}

REACH: dict[type[Operation], str] = {
    copy.PrefetchOp: ELECTED,
    copy.Gather4Op: ELECTED,
    copy.Scatter4Op: ELECTED,
    copy.Gather4PrefetchOp: ELECTED,
    copy.TryCancelOp: ELECTED,
    copy.BarrierExpectTxOp: ELECTED,
    copy.PeerCopyOp: ELECTED,
    copy.TensorMapReplaceOp: ELECTED,
    copy.TensorMapFenceReleaseOp: ELECTED,
    copy.TensorMapFenceAcquireOp: ELECTED,
    copy.SmemToTmemOp: ELECTED,
    copy.TmemShiftOp: ELECTED,
    copy.WaitGroupOp: GROUP,
    copy.FenceAsyncSharedOp: GROUP,
    copy.BarrierInitOp: GROUP,
    copy.BarrierInvalOp: GROUP,
    copy.BarrierReinitOp: GROUP,
    copy.TmemAllocOp: GROUP,
    copy.TmemDeallocOp: GROUP,
    copy.TmemRelinquishOp: GROUP,
    copy.NamedBarrierSyncOp: GROUP,
    copy.NamedBarrierArriveOp: GROUP,
    gpu.BarrierOp: GROUP,
    copy.TmemLoadOp: WARPS,
    copy.TmemStoreOp: WARPS,
    copy.LdmatrixOp: WARPS,
    copy.StmatrixOp: WARPS,
}
"""The ops whose issuer is the same for every op of the kind."""


def reach_of(op: Operation) -> str | None:
    """Who must reach `op` (None: each thread that reaches it acts for itself). TMA and
    bulk copies, prefetches, expect_tx, bulk commits, peer copies, tensor-map rewrites and
    tcgen05.cp are issued by the group's elected thread; cp.async copies and their commits,
    wait_group, fence_async_shared, barrier init, inval and reinit, TMEM alloc and dealloc,
    named barriers and gpu.barrier are met by every thread of the group; tcgen05.ld/st,
    ldmatrix and stmatrix by whole warps; an arrival by who `copy.arrivals_of` says arrives."""
    if isinstance(op, copy.AsyncCopyOp | copy.Im2colLoadOp):
        return GROUP if op.resolved_implementation() == Implementation.CP_ASYNC else ELECTED
    if isinstance(op, copy.CommitGroupOp):
        return ELECTED if op.group.data is copy.GroupKind.BULK else GROUP
    if isinstance(op, copy.BarrierCompleteTxOp):
        return ISSUERS[op.arriving]
    arrivals = copy.arrivals_of(op)
    if arrivals is not None:
        return ISSUERS[arrivals.issuer]
    return REACH.get(type(op))


def reaches(agent: Agent, op: Operation, mask: np.ndarray) -> bool:
    """Whether `op` runs when the threads of `mask` reach it (P10 where they are not the
    threads that must): an op of the elected thread that it does not reach is not issued,
    as on the GPU (reported); an op of the group or of whole warps that only some of them
    reach stops the run (the GPU's barrier would wait for the others, or is undefined)."""
    machine = agent.cta.machine
    try:
        who = machine.reach[op]
    except KeyError:
        who = machine.reach[op] = reach_of(op)
    if who is None:
        return True
    group = "the block" if agent.parent is None else agent.name
    threads = np.nonzero(mask)[0]
    reached = f"{describe_threads(threads)} {'reaches' if threads.size == 1 else 'reach'} it"
    if who == ELECTED:
        if agent.parent is None:
            issuer, missed, may = "thread 0 of the block", not mask[0], "does not reach"
        else:
            first = np.nonzero(agent.mask)[0][:WARP]
            issuer = (
                f"the elected thread of {group} (a lane of its first warp, "
                f"{describe_threads(first)}, that elect.sync picks)"
            )
            missed, may = not mask[first].all(), "may not reach"
        if not missed:
            return True
        message = (
            f"is issued by {issuer}, which {may} it ({reached}): the op sits under "
            "a condition that depends on the thread, and the GPU does not issue it"
        )
        if op.results:
            raise RuleBroken(op, "P10", message)
        machine.report("P10", op, message, agent.cta)
        return False
    if who == GROUP:
        if not (agent.mask & ~mask).any():
            return True
        raise RuleBroken(
            op, "P10",
            f"must be reached by every thread of {group}, which meet at it or share its work, "
            f"and only {reached}",
        )  # fmt: skip
    for w in np.unique(threads // WARP):
        if not mask[w * WARP : (w + 1) * WARP].all():
            some = threads[threads // WARP == w]
            raise RuleBroken(
                op, "P10",
                f"is a warp's op that every thread of each warp executes, and of warp {w} only "
                f"{describe_threads(some)} {'reaches' if some.size == 1 else 'reach'} it",
            )  # fmt: skip
    return True


def describe_threads(threads: np.ndarray) -> str:
    """`threads` (sorted ids) as ranges: 'threads 0-31, 64-95'."""
    if threads.size == 0:
        return "no thread"
    breaks = np.nonzero(np.diff(threads) != 1)[0]
    starts = [int(threads[0]), *(int(threads[b + 1]) for b in breaks)]
    ends = [*(int(threads[b]) for b in breaks), int(threads[-1])]
    runs = [f"{a}" if a == b else f"{a}-{b}" for a, b in zip(starts, ends, strict=True)]
    more = ", ..." if len(runs) > 4 else ""
    word = "thread" if threads.size == 1 else "threads"
    return f"{word} {', '.join(runs[:4])}{more}"
