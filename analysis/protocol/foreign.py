"""How an agent follows an op the analysis does not own that takes SMEM (an unregistered op,
`llvm.inline_asm`, an upstream op: `facts.Kernel.foreign`): each effect it declares
(`copy.effects`) or its xDSL traits name is checked as the analysis's own op of that kind
is: a read or write as the threads' loads and stores that reach it (P1-P3), an async read
until its issuer's bulk wait as a TMA store's (P1, P2, P4, P7), one until its warpgroup's
wgmma wait as a wgmma's read through a descriptor (`mma`). An SMEM operand whose effects
nothing names is a warning at the op (FX1), never silence."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from analysis.protocol.findings import warning
from analysis.protocol.records import Region
from analysis.protocol.walk import Agent
from analysis.smem_values import Origin
from copy_dialect.effects import EffectKind, Until, declared_effects, op_name


def foreign_op(agent: Agent, op: Operation, mask: int | None) -> None:
    facts = agent.kernel.foreign[op]
    if facts.unknown:
        n, origin = facts.unknown[0]
        where = region_of(agent, origin).show()
        # rule: FX1
        agent.report(
            warning(
                op,
                f"cannot prove what this op does with {where} (operand {n}): the protocol "
                f"analysis does not know the SMEM effects of {op_name(op)} (whether it reads "
                "or writes it, and until when)",
                f"declare its effects: {{copy.effects = [#copy.effect<read {n}>]}} for a read "
                f"before it returns, #copy.effect<write {n}> for a write, "
                f"#copy.effect<async_read {n} until wait_group> for a read that lasts until "
                "its issuer's copy.wait_group bulk (until wgmma_wait_group: until the "
                "nvvm.wgmma.wait.group.sync.aligned that retires its wgmma group), or "
                "copy.effects = [] if it does not access the memory",
            )
        )
    if not facts.effects:
        return
    s = agent.state
    members = agent.members(mask)
    what = f"'{op_name(op)}'"
    tensor_core = tensor_core_reads(op)
    for kind, n, origin in facts.effects:
        region = region_of(agent, origin)
        agent.event(op, kind, region.index)
        if kind is EffectKind.ASYNC_READ and n in tensor_core:
            s.copies.mma_read(op, [region], agent.groups, members, what)
        elif kind is EffectKind.ASYNC_READ:
            s.copies.grouped_read(op, region, agent.groups, members, what)
        else:
            write = kind is EffectKind.WRITE
            s.smem.thread_access(op, region, write, members, agent.name, what)


def tensor_core_reads(op: Operation) -> frozenset[int]:
    """The operands `op` declares it reads until its warpgroup's wgmma wait."""
    return frozenset(
        e.index for e in declared_effects(op) or () if e.until.data == Until.WGMMA_WAIT_GROUP
    )


def region_of(agent: Agent, origin: Origin) -> Region:
    """The region an SMEM operand points into, its slot's indices as this agent knows them."""
    index = []
    for i in origin.slot:
        got = agent.uniform_int(i) if isinstance(i, SSAValue) else i
        index.append(got if isinstance(got, int) else None)
    return Region(origin.buffer, tuple(index))
