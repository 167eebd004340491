"""How an agent follows the warpgroup MMA ops (sm_90a, upstream NVVM's spelling): a wgmma
reads the SMEM its descriptors point into (`analysis.smem_values`: a `copy.matrix_descriptor`
of a ring slot, and the descriptors a kernel steps along K by adding a constant) from its
issue until the wait that retires its group; the commit closes the warpgroup's open group;
the wait retires all but the newest N committed groups (PTX ISA, `wgmma.commit_group`,
`wgmma.wait_group`). The state keeps and checks the reads (`copies.mma_read`, `mma`).

The ops are matched by name: they live with the lowering (`passes.nvvm.wgmma`), which the
analysis does not import. Each is `.sync.aligned`: every thread of each warp executes it
(P10)."""

from __future__ import annotations

from xdsl.ir import Operation

from analysis.protocol.findings import warning
from analysis.protocol.foreign import region_of
from analysis.protocol.mma import reader
from analysis.protocol.records import Region
from analysis.protocol.walk import Agent
from analysis.smem_values import smem_values

DESCRIPTORS = (0, 1)
"""The operands of `nvvm.wgmma.mma_async` that are SMEM matrix descriptors (A and B; the
accumulator is registers)."""


def mma_async(agent: Agent, op: Operation, mask: int | None) -> None:
    agent.whole_warps(op, mask)
    origins = smem_values(agent.kernel.fn).origins
    regions: list[Region] = []
    for n in DESCRIPTORS:
        origin = origins.get(op.operands[n])
        if origin is None:
            # rule: P2
            agent.report(
                warning(
                    op,
                    f"cannot prove what SMEM this wgmma reads through operand {n}: the "
                    "descriptor is not computed from copy.matrix_descriptor (or a view or "
                    "pointer of a copy.alloc_smem buffer), so its slot's refills are not "
                    "checked against the read",
                    "make the descriptor with copy.matrix_descriptor %buffer[%slot] major k|mn "
                    "(step along K by arith.addi of a constant)",
                )
            )
            continue
        regions.append(region_of(agent, origin))
    agent.event(op, *(r.index for r in regions))
    s = agent.state
    s.copies.mma_read(op, regions, agent.groups, agent.members(mask), reader(op))


def fence(agent: Agent, op: Operation, mask: int | None) -> None:
    """`wgmma.fence`: orders the warpgroup's register accesses before the next wgmma (the
    threads' SMEM writes need copy.fence_async_shared, P4, as for a TMA store)."""
    agent.whole_warps(op, mask)


def commit(agent: Agent, op: Operation, mask: int | None) -> None:
    agent.whole_warps(op, mask)
    agent.event(op)
    agent.groups.mma.commit()


def wait(agent: Agent, op: Operation, mask: int | None) -> None:
    agent.whole_warps(op, mask)
    pending = op.properties["group"]
    n = pending.value.data  # type: ignore[attr-defined]
    agent.event(op, n)
    s = agent.state
    retired = s.group_sets.mma_wait(agent.groups, n, agent.observers(mask))
    if retired:
        s.smem.waited(retired, [])


STEPS = {
    "nvvm.wgmma.mma_async": mma_async,
    "nvvm.wgmma.fence.aligned": fence,
    "nvvm.wgmma.commit.group.sync.aligned": commit,
    "nvvm.wgmma.wait.group.sync.aligned": wait,
}
"""The handlers by op name (`dispatch.OpTable`)."""
