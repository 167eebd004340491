"""How an agent follows the ops that rewrite a tensor map in global memory and make the
rewrite visible to the TMA unit (`copy.tensormap_replace`, `copy.tensormap_fence_release`,
`copy.tensormap_fence_acquire`), which its elected thread issues; `state.maps` checks them
(TU10-TU12). The acquire counts for the thread class that runs it (`agent.c0`) only."""

from __future__ import annotations

from analysis.protocol.walk import Agent
from copy_dialect import ops as copy


def tensormap_replace(agent: Agent, op: copy.TensorMapReplaceOp, mask: int | None) -> None:
    agent.event(op)
    if agent.elected(op, mask):
        agent.state.hb.stamp(agent.c0)
        agent.state.maps.replace(op, op.map, agent.c0)


def tensormap_release(agent: Agent, op: copy.TensorMapFenceReleaseOp, mask: int | None) -> None:
    agent.event(op)
    if agent.elected(op, mask):
        agent.state.maps.release(op.map)


def tensormap_acquire(agent: Agent, op: copy.TensorMapFenceAcquireOp, mask: int | None) -> None:
    agent.event(op)
    if agent.elected(op, mask):
        agent.state.maps.acquire(op, op.map, agent.c0, agent.issuer)
