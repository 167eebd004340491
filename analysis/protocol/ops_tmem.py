"""How an agent follows the TMEM ops (tcgen05): the allocation and its release (block-wide,
with a block barrier), loads and stores (whole warps), their waits, the copy from SMEM
(`tcgen05.cp`, issued by the elected thread: an async-proxy read of SMEM), the shift
(`tcgen05.shift`, issued by the elected thread: an asynchronous write of its TMEM, done only
through a commit, as the copy's), and the thread-sync
fences (`nvvm.tcgen05.fence`, upstream NVVM's op, matched by name); `state.tmem` (its
`order`, P14) and `state.smem` check them."""

from __future__ import annotations

from xdsl.ir import Operation

from analysis.protocol.mma import reader
from analysis.protocol.state import State
from analysis.protocol.tmem_order import tmem_span
from analysis.protocol.walk import Agent
from copy_dialect import ops as copy
from copy_dialect.tmem import tmem_span as reach
from copy_dialect.tmem_access import packed


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
    agent.state.tmem.order.access(
        op, op.tmem, agent.members(mask), False, False, columns(agent, op)
    )


def tmem_store(agent: Agent, op: copy.TmemStoreOp, mask: int | None) -> None:
    agent.operand_event(op)
    agent.whole_warps(op, mask)
    agent.state.tmem.store(op, op.tmem)
    agent.state.tmem.order.access(op, op.tmem, agent.members(mask), True, False, columns(agent, op))


def columns(agent: Agent, op: copy.TmemLoadOp | copy.TmemStoreOp) -> range | None:
    """The columns of its allocation a tcgen05.ld/st reaches from the column it starts at
    in this walk (an accumulator stage picked by the tile's parity, `%acc[%b * 64]`); None
    when the column is not known (its view's columns then stand for it)."""
    start = agent.uniform_int(op.column)
    if not isinstance(start, int):
        return None
    first = tmem_span(op.tmem)[1].start + start
    offset = 0 if op.offset is None else op.offset.value.data
    return range(first, first + reach(op.shape.data, op.num.value.data, offset, packed(op)))


def tmem_wait(agent: Agent, op: copy.TmemWaitOp, mask: int | None) -> None:
    agent.event(op)
    agent.state.tmem.wait(op.kind.data == copy.TmemWaitKind.LOAD)


def smem_to_tmem(agent: Agent, op: copy.SmemToTmemOp, mask: int | None) -> None:
    agent.operand_event(op)
    if agent.elected(op, mask):
        # its read of the tile: after the fill (P1) and the threads' fenced writes (P4), and in
        # flight until the barrier phase of the tcgen05.commit after it (P2, P7), as a
        # tcgen05.mma's
        region = agent.region(op.src, op.indices)  # (the slot, with indices)
        s = agent.state
        s.copies.mma_read(op, [region], agent.groups, (agent.c0,), reader(op), tcgen05=True)
        s.tmem.order.access(op, op.tmem, (agent.c0,), write=True, asynchronous=True)


def tmem_shift(agent: Agent, op: copy.TmemShiftOp, mask: int | None) -> None:
    """The elected thread's tcgen05.shift: it reads and writes the TMEM of its view
    asynchronously, done (and fenced before a thread sync) only through a tcgen05.commit (P14);
    with `cta_group 2` the peer's TMEM too, at the same columns."""
    agent.operand_event(op)
    if not agent.elected(op, mask):
        return
    for state in pair_states(agent, op):
        state.tmem.order.access(op, op.tmem, (agent.c0,), write=True, asynchronous=True)


def pair_states(agent: Agent, op: Operation) -> list[State]:
    """The CTA states a TMEM op acts on: its own, and with `cta_group 2` the pair's peer's
    when the run models the cluster CTA by CTA."""
    states = [agent.state]
    if copy.cta_group_of(op) == 2 and len(agent.walk.states) > 1:
        peer = agent.rank ^ 1
        if peer < len(agent.walk.states):
            states.append(agent.walk.states[peer])
    return states


def tcgen05_fence(agent: Agent, op: Operation, mask: int | None) -> None:
    """`tcgen05.fence::before_thread_sync` / `::after_thread_sync` of the threads of `mask`."""
    agent.event(op)
    kind = op.properties["kind"]
    data = getattr(kind, "data", None)  # (a StrEnum; printed where the op is not registered)
    before = data == "before" if isinstance(data, str) else str(kind).endswith("<before>")
    for state in agent.walk.states:  # (a CTA pair's accesses are kept in both CTAs' states)
        state.tmem.order.fence(agent.members(mask), before)


STEPS = {"nvvm.tcgen05.fence": tcgen05_fence}
"""The handlers by op name (`dispatch.OpTable`): the fence is upstream NVVM's op."""
