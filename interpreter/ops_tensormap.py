"""Tensor maps rewritten in the kernel: `copy.tensormap_global` (slot `slot` of a workspace
in global memory, filled at launch with the map of its source array: its base, dims and
strides), `copy.tensormap_replace` (a field of the generic proxy's copy of the map), the
release and acquire fences that make the TMA unit see the rewrite, and the copies through
the map (`map(...)`), which read and write the array the TMA unit's map describes.

The acquire is a fence of the thread that runs it (the elected thread of the block or of a
role, as for the copies): each agent sees the map as of its own last acquire (as of the
launch before one). A copy through a map rewritten and not yet fenced (release, then acquire)
by the agent that issues it breaks TU11, even when another agent acquired the rewrite, and
uses the map as that agent's TMA copies last saw it; an acquire after a rewrite with no
release breaks TU12; a rewrite while a copy through the map may be in flight breaks TU10."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from xdsl.ir import Operation

from copy_dialect import ops as copy
from copy_dialect.attributes import TensorMapField
from interpreter.machine import Agent, Step, Transfer
from interpreter.memory import GmemRef, strided_view
from interpreter.ops_std import handles
from interpreter.races import sees
from interpreter.values import RuleBroken, uniform


@dataclass(frozen=True)
class Fields:
    """What a map says: its array (flat, from an element), dims and element strides."""

    flat: np.ndarray
    offset: int
    dims: tuple[int, ...]
    strides: tuple[int, ...]

    def __eq__(self, other: object) -> bool:
        """The same array (the object, not its elements) and the same fields."""
        return (
            isinstance(other, Fields)
            and self.flat is other.flat
            and (self.offset, self.dims, self.strides) == (other.offset, other.dims, other.strides)
        )


@dataclass(eq=False)
class TensorMap:
    source: GmemRef
    written: Fields
    """The generic proxy's copy (what tensormap_replace rewrites)."""
    released: Fields
    launched: Fields
    """The map as the launch wrote it: what a copy of an agent that never acquired it sees."""
    visible: dict[Agent, Fields] = field(default_factory=dict)
    """The TMA unit's, per agent: as of the agent's last acquire (the fence is per thread)."""
    acquired: dict[Agent, Operation] = field(default_factory=dict)
    """Each agent's last acquire, for the message of a copy by another agent."""
    copies: list[Transfer] = field(default_factory=list)

    def seen_by(self, agent: Agent) -> Fields:
        return self.visible.get(agent, self.launched)


def map_of(agent: Agent, op: Operation) -> TensorMap:
    value = agent.get(op.map)  # type: ignore[attr-defined]
    assert isinstance(value, TensorMap)
    return value


@handles(copy.TensorMapGlobalOp)
def tensormap_global(agent: Agent, op: copy.TensorMapGlobalOp, mask: np.ndarray) -> None:
    source = agent.get(op.source)
    assert isinstance(source, GmemRef)
    assert source.flat is not None
    slot = int(uniform(agent.get(op.slot), mask, op, "the slot"))
    slots = op.slots.value.data
    if not 0 <= slot < slots:
        raise RuleBroken(op, "TU4", f"names slot {slot} of a workspace of {slots}: out of range")
    workspace = agent.cta.machine.maps.setdefault(op, {})
    tmap = workspace.get(slot)
    if tmap is None:  # filled at launch with the source's map
        item = source.array.itemsize
        fields = Fields(
            source.flat, source.offset, source.array.shape,
            tuple(s // item for s in source.array.strides),
        )  # fmt: skip
        tmap = workspace[slot] = TensorMap(source, fields, fields, fields)
    agent.env[op.map] = tmap


@handles(copy.TensorMapReplaceOp)
def tensormap_replace(agent: Agent, op: copy.TensorMapReplaceOp, mask: np.ndarray) -> Step:
    yield None
    tmap = map_of(agent, op)
    in_flight = [t for t in tmap.copies if not all(sees(agent.clock, e) for e in t.epochs.values())]
    if in_flight:
        agent.cta.machine.report(
            "TU10", op,
            "rewrites a tensor map that a copy through it may still use: wait for the copy "
            "first",
            agent.cta, in_flight[0].op,
        )  # fmt: skip
    kind, d = op.field_kind, op.field_dim
    value = agent.get(op.value)
    w = tmap.written
    if kind == TensorMapField.GLOBAL_ADDRESS:
        ref = value
        assert isinstance(ref, GmemRef)
        idx = [int(uniform(agent.get(v), mask, op, "the address")) for v in op.indices]
        tmap.written = replace(w, flat=ref.flat, offset=ref.address(idx))
    elif kind == TensorMapField.GLOBAL_DIM:
        n = int(uniform(value, mask, op, "the dim"))
        tmap.written = replace(w, dims=(*w.dims[:d], n, *w.dims[d + 1 :]))
    else:
        nbytes = int(uniform(value, mask, op, "the stride"))
        stride = nbytes // w.flat.itemsize
        tmap.written = replace(w, strides=(*w.strides[:d], stride, *w.strides[d + 1 :]))


@handles(copy.TensorMapFenceReleaseOp)
def release(agent: Agent, op: copy.TensorMapFenceReleaseOp, mask: np.ndarray) -> Step:
    yield None
    tmap = map_of(agent, op)
    tmap.released = tmap.written


@handles(copy.TensorMapFenceAcquireOp)
def acquire(agent: Agent, op: copy.TensorMapFenceAcquireOp, mask: np.ndarray) -> Step:
    yield None
    tmap = map_of(agent, op)
    if tmap.written != tmap.released:
        agent.cta.machine.report(
            "TU12", op,
            "acquires a tensor map whose rewrite was not released "
            "(copy.tensormap_fence_release first)",
            agent.cta,
        )  # fmt: skip
    tmap.visible[agent] = tmap.released
    tmap.acquired[agent] = op


def map_array(agent: Agent, op: Operation, tmap: TensorMap) -> GmemRef:
    """The array a copy through `tmap` reads or writes: the TMA unit's map of it as `agent`,
    which issues the copy, last acquired it (TU11 where the generic proxy's differs)."""
    f = tmap.seen_by(agent)
    if tmap.written != f:
        others = [
            (a, acq) for a, acq in tmap.acquired.items()
            if a is not agent and tmap.visible[a] == tmap.written
        ]  # fmt: skip
        if others:
            agent.cta.machine.report(
                "TU11", op,
                f"copies through a tensor map that {others[0][0].name} acquired after its "
                f"rewrite but {agent.name}, which issues the copy, did not: the acquire fence "
                "is per thread (copy.tensormap_fence_acquire in the agent that copies)",
                agent.cta, others[0][1],
            )  # fmt: skip
        else:
            agent.cta.machine.report(
                "TU11", op,
                "copies through a tensor map rewritten since the TMA unit last acquired it "
                "(copy.tensormap_fence_release, then copy.tensormap_fence_acquire)",
                agent.cta,
            )  # fmt: skip
    view = strided_view(f.flat, f.offset, list(f.dims), list(f.strides))
    if view is None:
        raise RuleBroken(
            op, "bounds",
            f"copies through a tensor map of dims {list(f.dims)} and strides {list(f.strides)} "
            "that reaches outside its array",
        )  # fmt: skip
    return GmemRef(view, tmap.source.type, f"the map of {tmap.source.name}", f.flat, f.offset)


def track(tmap: Any, transfer: Transfer) -> None:
    if isinstance(tmap, TensorMap):
        tmap.copies.append(transfer)
