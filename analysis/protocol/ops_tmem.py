"""How an agent follows the TMEM ops (tcgen05): the allocation and its release (block-wide,
with a block barrier), loads and stores (whole warps), their waits, the copy from SMEM
(`tcgen05.cp`, issued by the elected thread: an async-proxy read of SMEM), and the thread-sync
fences (`nvvm.tcgen05.fence`, upstream NVVM's op, matched by name); `state.tmem` (its
`order`, P14) and `state.smem` check them."""

from __future__ import annotations

from xdsl.ir import Operation

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
    agent.state.tmem.order.access(op, op.tmem, agent.members(mask), write=False)


def tmem_store(agent: Agent, op: copy.TmemStoreOp, mask: int | None) -> None:
    agent.operand_event(op)
    agent.whole_warps(op, mask)
    agent.state.tmem.store(op, op.tmem)
    agent.state.tmem.order.access(op, op.tmem, agent.members(mask), write=True)


def tmem_wait(agent: Agent, op: copy.TmemWaitOp, mask: int | None) -> None:
    agent.event(op)
    agent.state.tmem.wait(op.kind.data == copy.TmemWaitKind.LOAD)


def smem_to_tmem(agent: Agent, op: copy.SmemToTmemOp, mask: int | None) -> None:
    agent.operand_event(op)
    if agent.elected(op, mask):
        region = agent.region(op.src, ())
        agent.state.smem.read(op, region, (agent.c0,), "tcgen05.cp")
        agent.state.smem.async_read(op, region, "tcgen05.cp", (agent.c0,))
        agent.state.tmem.order.access(op, op.tmem, (agent.c0,), write=True, asynchronous=True)


def tcgen05_fence(agent: Agent, op: Operation, mask: int | None) -> None:
    """`tcgen05.fence::before_thread_sync` / `::after_thread_sync` of the threads of `mask`."""
    agent.event(op)
    before = str(op.properties["kind"]).endswith("<before>")
    for state in agent.walk.states:  # (a CTA pair's accesses are kept in both CTAs' states)
        state.tmem.order.fence(agent.members(mask), before)


STEPS = {"nvvm.tcgen05.fence": tcgen05_fence}
"""The handlers by op name (`dispatch.OpTable`): the fence is upstream NVVM's op."""
