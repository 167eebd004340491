"""How an agent follows what crosses the CTAs of a cluster modelled rank by rank
(`cluster`): the cluster barrier (`copy.cluster_sync`, and the one that ends a clustered
barrier_init, inval or reinit), multicast and leader-tracked loads (a multicast gather4, its
issuer's tile into every CTA of its mask, too), and the return of a CTA (no peer's write or
arrival may reach it after). The DSMEM ops are `ops_dsmem`'s."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from analysis.protocol.clocks import join
from analysis.protocol.facts import CopyFacts
from analysis.protocol.findings import Related, error, warning
from analysis.protocol.ops_barriers import barrier_init, barrier_inval, barrier_key, barrier_reinit
from analysis.protocol.ops_copies import async_copy, issue
from analysis.protocol.records import Fill, Key, Region, describe_key
from analysis.protocol.steps import Blocked, Steps, Stop
from analysis.protocol.walk import Agent
from copy_dialect import ops as copy

# ---- the cluster barrier -------------------------------------------------------------------


def cluster_arrive(agent: Agent, op: Operation, mask: int | None, release: bool) -> None:
    cluster = agent.walk.cluster
    key = id(agent)
    if key in cluster.pending:
        # rule: P13
        agent.report(
            error(
                op,
                "arrives on the cluster barrier again before waiting for its last arrive: "
                "barrier.cluster.arrive twice without a wait is undefined",
                "copy.cluster_sync wait between the two arrives (or use copy.cluster_sync, "
                "which arrives and waits)",
            )
        )
        raise Stop
    g = cluster.arrived.get(key, 0)
    cluster.arrived[key] = g + 1
    cluster.pending[key] = g
    hb = agent.state.hb
    gen = cluster.generation(g)
    for c in agent.classes:
        hb.stamp(c)
        if release:
            gen.clock = join(gen.clock, hb.clocks[c])
    threads = agent.kernel.threads
    gen.arrived += 1 if threads is None else agent.threads_in(mask if mask is not None else -1)
    gen.arrivers.append((op, agent.name))
    hb.progress = True


def cluster_total(agent: Agent) -> int:
    threads = agent.kernel.threads
    return agent.walk.cluster.facts.ranks * (1 if threads is None else threads)


def cluster_wait(agent: Agent, op: Operation) -> Steps:
    cluster = agent.walk.cluster
    g = cluster.pending.pop(id(agent), None)
    if g is None:
        # rule: P13
        agent.report(
            error(
                op,
                "waits on the cluster barrier without an arrive before it: the wait is for "
                "the generation of the thread's last arrive",
                "copy.cluster_sync arrive before this wait (or use copy.cluster_sync, which "
                "arrives and waits)",
            )
        )
        raise Stop
    gen = cluster.generation(g)
    total = cluster_total(agent)
    if gen.arrived < total:

        def stuck(others: list[Related]) -> None:
            # rule: P6
            agent.report(
                error(
                    op,
                    f"this wait on the cluster barrier never returns: generation {g} has "
                    f"{gen.arrived} of the {total} threads of the cluster's CTAs arriving",
                    "make every thread of every CTA arrive (copy.cluster_sync outside "
                    "conditions on the rank or the thread, in every role that runs)",
                    *others,
                )
            )

        yield Blocked(
            op, lambda: gen.arrived >= total, stuck, what=f"the cluster barrier (generation {g})"
        )
    hb = agent.state.hb
    for c in agent.classes:
        hb.clocks[c] = join(hb.clocks[c], gen.clock)
    # What every running class knows grows once the last arriver has returned: then every
    # CTA's records are pruned (before, this CTA's)
    gen.returned += 1
    for state in agent.walk.states if gen.returned >= len(gen.arrivers) else [agent.state]:
        state.prune()


def cluster_sync(agent: Agent, op: copy.ClusterSyncOp, mask: int | None) -> Steps | None:
    agent.event(op)
    if agent.kernel.threads is None and agent.role is not None:
        # rule: P6
        agent.report(
            warning(
                op,
                "cannot prove the cluster barrier: the block size is unknown, so the threads "
                "that arrive here are not known",
                "give the kernel gpu.known_block_size",
            )
        )
        raise Stop
    agent.whole_group(op, mask, "is the cluster barrier, which every thread arrives on")
    if op.arrives:
        cluster_arrive(agent, op, mask, op.relaxed is None)
    if op.waits:
        return cluster_wait(agent, op)
    return None


def whole_sync(agent: Agent, op: Operation, mask: int | None) -> Steps:
    """The cluster barrier a clustered barrier_init, inval or reinit ends with (their
    lowering: barrier.cluster.arrive and wait, aligned)."""
    cluster_arrive(agent, op, mask, True)
    yield from cluster_wait(agent, op)


def clustered_init(agent: Agent, op: copy.BarrierInitOp, mask: int | None) -> Steps:
    barrier_init(agent, op, mask)
    yield from whole_sync(agent, op, mask)


def clustered_inval(agent: Agent, op: copy.BarrierInvalOp, mask: int | None) -> Steps:
    yield from whole_sync(agent, op, mask)
    barrier_inval(agent, op, mask)


def clustered_reinit(agent: Agent, op: copy.BarrierReinitOp, mask: int | None) -> Steps:
    barrier_reinit(agent, op, mask)
    yield from whole_sync(agent, op, mask)


# ---- loads whose bytes cross CTAs ----------------------------------------------------------


def cluster_copy(agent: Agent, op: copy.AsyncCopyOp, mask: int | None) -> None:
    """A multicast or leader-tracked load, rank by rank (`cluster`); another copy as one
    CTA's (`ops_copies.async_copy`)."""
    facts = agent.walk.cluster.facts
    how = facts.collective.get(op)
    if how is None:
        async_copy(agent, op, mask)
        return
    issued = cluster_issue(agent, op, mask)
    if issued is None:
        return
    g, region, key = issued
    rank = agent.rank
    made = 0 if g.arrivals is None else g.arrivals.made(1)
    group = facts.group(rank, how.dims)
    if how.pair:
        first = group.index(rank) == 0
        pair_load(agent, op, region, key, made if first else 0, g.expect, how.share)
        return
    if made:
        agent.state.barriers.arrive(op, key, made, g.expect, (agent.c0,), agent.name)
    multicast_writes(agent, op, region, key, group, how.share, "multicast load")


def cluster_issue(
    agent: Agent, op: copy.AsyncCopyOp | copy.Gather4Op, mask: int | None
) -> tuple[CopyFacts, Region, Key] | None:
    """What a load whose bytes cross CTAs does first: its issue (`ops_copies.issue`), by
    the elected thread, on a barrier the analysis knows; the issuer's stamp. None where
    nothing more follows."""
    issued_copy = issue(agent, op)
    if issued_copy is None or not agent.elected(op, mask):
        return None
    g, region = issued_copy
    assert g.barrier is not None
    key = barrier_key(agent, op, g.barrier, g.barrier_index)
    if key is None:
        return None
    agent.state.hb.stamp(agent.c0)
    return g, region, key


def multicast_writes(
    agent: Agent, op: Operation, region: Region, key: Key, ranks: list[int], share: int, what: str
) -> None:
    """This CTA's multicast `what` writes `share` bytes into `region` of each CTA of
    `ranks` and completes them on barrier `key` there (none of which may have returned)."""
    walk, rank = agent.walk, agent.rank
    for r in ranks:
        if not walk.cluster.target(op, rank, r, f"the {what}"):
            raise Stop
        writer = f"the {what}" if r == rank else f"CTA {rank}'s {what} into CTA {r}"
        walk.states[r].copies.peer_write(op, region, key, share, (agent.c0,), writer, r != rank)


def mask_ranks(
    agent: Agent, op: Operation, mask: SSAValue, subject: str, unknown: str, fix: str
) -> list[int]:
    """The ranks a multicast `mask` (an i16 operand, bit r: CTA r) names, of the CTAs a run
    models rank by rank (`cluster`: a multicast op makes a clustered kernel's runs model
    every rank). A mask the analysis does not know, or one naming a CTA beyond the
    modelled ones, is an error (`subject` with it: `unknown`; the note `fix`): what the op
    writes or arrives on is not known."""
    got = agent.uniform_int(mask)
    ranks = len(agent.walk.states)
    bits = got & 0xFFFF if isinstance(got, int) else None
    if bits is None or not bits or bits >> ranks:
        what = (
            "a mask the analysis cannot compute"
            if bits is None
            else f"mask {bits:#x}, which names no CTA or one beyond the cluster's {ranks}"
        )
        # rule: P5
        agent.report(error(op, f"{subject} with {what}: {unknown}", fix))
        raise Stop
    return [r for r in range(ranks) if bits >> r & 1]


def cluster_gather4(agent: Agent, op: copy.Gather4Op, mask: int | None) -> None:
    """A gather4 with `multicast %mask`, issued by one CTA: the whole tile into the slot of
    every CTA of the mask, its bytes completing on the barrier at the same offset in each
    (PTX ISA, cp.async.bulk.tensor's `.multicast::cluster`); the issuer's arrival, when it
    makes one, on its own barrier, which must then be one of them. A `leader_tracked` one
    is a CTA pair's load (`pair_load`). Otherwise, one CTA's load
    (`ops_copies.async_copy`)."""
    if op.multicast is None and not op.is_leader_tracked:
        async_copy(agent, op, mask)
        return
    issued = cluster_issue(agent, op, mask)
    if issued is None:
        return
    g, region, key = issued
    rank = agent.rank
    if op.is_leader_tracked:  # its rows here, its bytes on the pair leader's barrier
        made = 0 if g.arrivals is None or rank & 1 else g.arrivals.made(1)
        pair_load(agent, op, region, key, made, g.expect, g.bytes // 2)
        return
    assert op.multicast is not None
    targets = mask_ranks(
        agent,
        op,
        op.multicast,
        "this copy.gather4 multicasts its tile",
        "the CTAs whose SMEM it writes, and the barriers it completes, are not known",
        "give the mask as a constant or a value of the CTA's rank in the cluster (bit r: CTA r)",
    )
    made = 0 if g.arrivals is None else g.arrivals.made(1)
    if made:
        if rank not in targets:
            # rule: P5
            agent.report(
                error(
                    op,
                    f"CTA {rank} arrives on its {describe_key(key)} expecting the tile's "
                    f"{g.expect} bytes, but its multicast mask names "
                    f"{'CTA' if len(targets) == 1 else 'CTAs'} "
                    f"{', '.join(map(str, targets))}, not CTA {rank}: no byte reaches that "
                    "barrier and the phase never completes",
                    f"add bit {rank} to the mask ({sum(1 << r for r in targets) | 1 << rank}: "
                    f"CTA {rank} receives the tile too), or give the gather4 arrive = false "
                    "and let each receiving CTA arm its own barrier with "
                    "copy.barrier_arrive_expect_tx",
                )
            )
            raise Stop
        agent.state.barriers.arrive(op, key, made, g.expect, (agent.c0,), agent.name)
    multicast_writes(agent, op, region, key, targets, g.bytes, "multicast gather4")


def pair_load(
    agent: Agent, op: Operation, region: Region, key: Key, made: int, expect: int, share: int
) -> None:
    """A leader-tracked load of a CTA pair (`.cta_group::2`): this CTA's `share` bytes into
    `region` of its own SMEM, completing on the barrier of the pair's leader (the even
    rank); `made`: the arrivals this CTA makes on its own barrier, expecting `expect` bytes
    (the leader's: both CTAs')."""
    walk, rank, issuer = agent.walk, agent.rank, agent.c0
    s = agent.state
    leader = rank & ~1
    s.smem.refill(op, region, "the leader-tracked load", (issuer,))
    if made:
        s.barriers.arrive(op, key, made, expect, (issuer,), agent.name)
    elif rank != leader:
        s.barriers.waits.pair_loads.setdefault(key, op)
    if not walk.cluster.target(op, rank, leader, "the leader-tracked load"):
        raise Stop
    there = walk.states[leader].barriers
    phase = there.deliver(op, key, share, issuer)
    end = ((there.table[key].comp, phase + 1),)
    s.smem.fills.append(Fill(op, region, key, phase, end, barrier=there.table[key]))
    walk.cluster.pair_fills.add(op)


# ---- the return ----------------------------------------------------------------------------


def kernel_return(agent: Agent, op: func.ReturnOp, mask: int | None) -> None:
    """The CTA returns: nothing of its own in flight (`ends`), no load of its SMEM that
    completes on the leader's barrier unknown to it, no peer's arrival that may come later
    (`Cluster.exit`)."""
    s = agent.state
    cluster = agent.walk.cluster
    for fill in s.smem.fills:
        if fill.op not in cluster.pair_fills or fill.reported or fill.key is None:
            continue
        if any(s.smem.fill_known(fill, (c,)) for c in agent.classes):
            continue
        fill.reported = True
        # rule: P7
        agent.report(
            error(
                op,
                f"CTA {agent.rank} returns while its leader-tracked load may still be writing "
                f"its SMEM: the load completes on the leader's {describe_key(fill.key)} "
                "(CTA {0}), which this CTA never waits on".format(agent.rank & ~1),
                "make the leader tell this CTA that the phase completed (after its wait, a "
                "copy.peer_arrive on a barrier of this CTA, which this CTA waits on before the "
                "return); a wait on this CTA's own barrier never returns: no byte reaches it",
                Related(fill.op, "the load"),
            )
        )
        break
    s.ends.exit(op, agent.groups, agent.classes)
    cluster.exit(op, agent.rank, agent.classes)
