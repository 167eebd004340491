"""How an agent follows the TMEM ops (tcgen05): the allocation and its release (block-wide,
with a block barrier), loads and stores (whole warps), their waits, and the copy from SMEM
(`tcgen05.cp`, issued by the elected thread: an async-proxy read of SMEM); `state.tmem` and
`state.smem` check them."""

from __future__ import annotations

from analysis.protocol.walk import Agent
from copy_dialect import ops as copy


def tmem_alloc(agent: Agent, op: copy.TmemAllocOp, mask: int | None) -> None:
    agent.event(op)
    agent.whole_group(op, mask, "allocates TMEM with a block barrier")
    agent.state.tmem.alloc(op, op.result)
    agent.sync()


def tmem_dealloc(agent: Agent, op: copy.TmemDeallocOp, mask: int | None) -> None:
    agent.event(op)
    agent.whole_group(op, mask, "frees TMEM after a block barrier")
    agent.state.tmem.dealloc(op, op.tmem)
    agent.sync()


def tmem_load(agent: Agent, op: copy.TmemLoadOp, mask: int | None) -> None:
    agent.operand_event(op)
    agent.whole_warps(op, mask)
    agent.state.tmem.load(op, op.tmem)


def tmem_store(agent: Agent, op: copy.TmemStoreOp, mask: int | None) -> None:
    agent.operand_event(op)
    agent.whole_warps(op, mask)
    agent.state.tmem.store(op, op.tmem)


def tmem_wait(agent: Agent, op: copy.TmemWaitOp, mask: int | None) -> None:
    agent.event(op)
    agent.state.tmem.wait(op.kind.data == copy.TmemWaitKind.LOAD)


def smem_to_tmem(agent: Agent, op: copy.SmemToTmemOp, mask: int | None) -> None:
    agent.operand_event(op)
    if agent.elected(op, mask):
        region = agent.region(op.src, ())
        agent.state.smem.read(op, region, (agent.c0,), "tcgen05.cp")
        agent.state.smem.async_read(op, region, "tcgen05.cp", (agent.c0,))
