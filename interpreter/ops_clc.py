"""Cluster launch control (`copy.try_cancel`, `copy.query_cancel`) under the interpreter.

The grid's clusters form one launch queue (`LaunchQueue`, shared by every cluster of a run,
`interpreter.run`): the interpreter starts them one after another in launch order (x
fastest), so while a cluster runs every later one has not started. A try_cancel cancels the
first cluster of the queue that has neither started nor been canceled, which then never
runs, and its response names that cluster's first CTA; with none left it fails. (Which
cluster the hardware cancels is unspecified: the first in launch order is one schedule of
many, the one where the first cluster steals all the work it can.)

The response is opaque in the PTX ISA; the interpreter writes its own 16 bytes, four
little-endian 32-bit words (canceled, first ctaid x, y, z), after the request is issued, and
completes their 16 bytes on the barrier as an async copy does (the copy's write logged on
the slot, so that a thread reading it before the phase is observed is a race, P1; a new
request into a slot that threads read without a barrier after, P3). A multicast request
writes the slot and completes the barrier of every CTA of the cluster. A query reads the
slot by every thread that reaches it and decodes the words: the ctaid of a failed response
is undefined (PTX ISA), and reads as 0 here. A try_cancel by a CTA that has observed a
failed response is undefined behaviour (PTX ISA): reported as an error."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from copy_dialect import ops as copy
from interpreter.machine import Agent, Step, Transfer
from interpreter.memory import SmemRef, read_smem, write_smem
from interpreter.ops_cluster import log_remote, peer_object
from interpreter.ops_copies import log_async
from interpreter.ops_std import handles, log_thread_access, set_result
from interpreter.values import InterpretError, storage_dtype, uniform

WORDS = np.dtype("<i4")


@dataclass
class LaunchQueue:
    """The grid's clusters in launch order, by cluster coordinates (x, y, z), and the
    cluster shape: which have started and which a try_cancel has canceled."""

    order: list[tuple[int, int, int]]
    cluster: tuple[int, int, int]
    started: set[tuple[int, int, int]] = field(default_factory=set)
    canceled: set[tuple[int, int, int]] = field(default_factory=set)
    failed_seen: set[int] = field(default_factory=set)
    """The CTAs (by id) that have read a failed response."""

    def start(self, coords: tuple[int, int, int]) -> bool:
        """Whether the cluster at `coords` runs (it was not canceled); marks it started."""
        if coords in self.canceled:
            return False
        self.started.add(coords)
        return True

    def cancel(self) -> tuple[int, int, int] | None:
        """The first CTA of the cluster a try_cancel cancels, or None if none is left."""
        for coords in self.order:
            if coords not in self.started and coords not in self.canceled:
                self.canceled.add(coords)
                return tuple(c * n for c, n in zip(coords, self.cluster, strict=True))  # type: ignore[return-value]
        return None


def response_bytes(first: tuple[int, int, int] | None) -> np.ndarray:
    """The interpreter's 16-byte response: (canceled, x, y, z) as little-endian i32."""
    words = [0, 0, 0, 0] if first is None else [1, *first]
    return np.asarray(words, dtype=WORDS).view(np.uint8)


def slot_offsets(
    agent: Agent, op: copy.TryCancelOp | copy.QueryCancelOp, ref: SmemRef, mask: np.ndarray
) -> tuple[np.ndarray, np.dtype]:
    """The element offsets of the 16-byte slot the op's indices pick (LC3), and the dtype."""
    slot = tuple(int(uniform(agent.get(v), mask, op, "the slot")) for v in op.response_indices)
    for d, (s, n) in enumerate(zip(slot, ref.shape, strict=False)):
        if not 0 <= s < n:
            raise InterpretError(op, f"names slot {s} of dim {d} of a buffer of {n}")
    return ref.slot_offsets(slot, ref.shape[len(slot) :]), storage_dtype(ref.element_type)


@handles(copy.TryCancelOp)
def try_cancel(agent: Agent, op: copy.TryCancelOp, mask: np.ndarray) -> Step:
    yield None
    machine = agent.cta.machine
    queue: LaunchQueue | None = getattr(machine, "launches", None)
    if queue is not None and id(agent.cta) in queue.failed_seen:
        raise InterpretError(
            op,
            "issues a try_cancel after its CTA observed a failed one: undefined behaviour "
            "(PTX ISA, clusterlaunchcontrol.try_cancel); end the persistent loop at the "
            "first failed response",
        )
    issue = agent.release()
    ctas = machine.ctas if op.is_multicast else [agent.cta]
    targets = []
    for cta in ctas:
        own = cta is agent.cta
        ref = agent.get(op.response) if own else peer_object(agent, op, cta, op.response, "slot")
        group = agent.get(op.barrier) if own else peer_object(agent, op, cta, op.barrier, "barrier")
        offsets, dtype = slot_offsets(agent, op, ref, mask)
        mb = group.at(agent, op, op.barrier_index, mask)
        epoch = (mb.component, mb.phase + 1)
        if own:
            log_async(agent, op, offsets, dtype.itemsize, True, epoch)
        else:
            log_remote(agent, op, cta, offsets, dtype.itemsize, epoch)
        targets.append((cta, offsets, dtype, mb, epoch))
    # The request is decided when it is issued: a cluster the queue has not started yet.
    data = response_bytes(None if queue is None else queue.cancel())

    def complete() -> None:
        for cta, offsets, dtype, mb, _ in targets:
            write_smem(cta.smem, offsets, data.view(dtype), dtype)
            mb.complete_tx(op, copy.RESPONSE_BYTES, issue)

    epochs = {cta: epoch for cta, _, _, _, epoch in targets}
    machine.issue(Transfer(op, agent.cta, complete, epochs))


@handles(copy.QueryCancelOp)
def query_cancel(agent: Agent, op: copy.QueryCancelOp, mask: np.ndarray) -> Step:
    ref = agent.get(op.response)
    offsets, dtype = slot_offsets(agent, op, ref, mask)
    yield None
    active = np.nonzero(mask)[0]
    log_thread_access(
        agent, op, ref, np.tile(offsets, active.size), active, dtype.itemsize, False, "reads"
    )
    words = read_smem(agent.cta.smem, offsets, dtype).reshape(-1).view(WORDS)
    canceled = bool(words[0])
    queue: LaunchQueue | None = getattr(agent.cta.machine, "launches", None)
    if not canceled and queue is not None:
        queue.failed_seen.add(id(agent.cta))
    set_result(agent, op, np.bool_(canceled), 0)
    for i in range(3):
        set_result(agent, op, np.int32(words[1 + i] if canceled else 0), 1 + i)
