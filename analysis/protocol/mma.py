"""Tensor-core reads of SMEM through descriptors, as the state keeps and checks them: a wgmma
(`nvvm.wgmma.mma_async`, or an op that declares `async_read N until wgmma_wait_group`) reads
the slots its descriptors point into from its issue until the
`nvvm.wgmma.wait.group.sync.aligned` that retires its group (`groups.ReadGroups`, the
wgmma kind). An async copy or a DSMEM write into such a slot before that is P2, reported at
the hand-off that let the writer go (the reader's `copy.barrier_arrive`, when the writer is
ordered after it) or else at the write (an async copy, a DSMEM write, threads' stores:
`smem.SharedMemory.refill` asks `hazard` first); a role or a kernel that ends with such a
read is P7."""

from __future__ import annotations

from xdsl.ir import Operation

from analysis.protocol.clocks import Clock, HappensBefore, at
from analysis.protocol.findings import ProtocolFinding, Related, error, warning
from analysis.protocol.groups import Groups, GroupSets, MmaRead, RetiredRead
from analysis.protocol.mbarriers import Releases
from analysis.protocol.records import Region, Release, StoreRead, describe_key
from copy_dialect.effects import op_name
from copy_dialect.roles import enclosing_role

WAIT = "nvvm.wgmma.wait.group.sync.aligned"
COMMIT = "nvvm.wgmma.commit.group.sync.aligned"


def reader(op: Operation) -> str:
    """How findings name a tensor-core read's op."""
    if op.name == "nvvm.wgmma.mma_async":
        return "the wgmma (nvvm.wgmma.mma_async)"
    return f"'{op_name(op)}' (a tensor-core read until {WAIT})"


def hazard(
    hb: HappensBefore,
    releases: Releases,
    group_sets: GroupSets,
    reads_done: list[StoreRead],
    op: Operation,
    region: Region,
    writer: str,
    issuers: tuple[int, ...],
) -> ProtocolFinding | None:
    """`writer` (`op`, by the classes `issuers`) is about to write `region`: the finding if
    a tensor-core read of it may still go on (not retired, or retired at a wait the writer
    is not ordered after)."""
    if not reads_done and not any(g.mma.open or g.mma.fifo for g in group_sets.sets):
        return None
    found: list[tuple[MmaRead | RetiredRead, str]] = []
    for r in group_sets.mma_in_flight():
        overlap = region.overlap(r.region)
        if overlap != "no":
            found.append((r, overlap))
            break
    if not found:
        for done in reads_done:
            if not isinstance(done, RetiredRead):
                continue
            overlap = region.overlap(done.region)
            if overlap != "no" and not hb.knows_all(issuers, done.end):
                found.append((done, overlap))
                break
    if not found:
        return None
    read, overlap = found[0]
    what = reader(read.op)
    slot = region.show()
    uncommitted = isinstance(read, MmaRead) and any(read in g.mma.open for g in group_sets.sets)
    if overlap == "yes":
        release = released_before(releases, hb.clocks[issuers[0]], read.issued)
        if release is not None:
            return released_early(release, read, op, writer, slot, uncommitted)
    retire = (
        f"commit it ({COMMIT}: a wgmma never committed is never retired) and retire its "
        f"group ({WAIT} 0)"
        if uncommitted
        else f"retire its group ({WAIT} 0, or a count below the groups committed after it)"
    )
    fix = f"{retire} before the write"
    if isinstance(read, RetiredRead):
        fix = (
            f"the role that issued the read retired it ({WAIT}), but nothing orders this write "
            f"after that wait: let that role arrive on a barrier after its {WAIT} (a "
            "consumer-release barrier) and wait on it before the write"
        )
    elif hb.concurrent and enclosing_role(read.op) != enclosing_role(op):
        fix = (
            f"the read is another role's: in that role, {retire} before the copy.barrier_arrive "
            "that releases the slot, and wait on that barrier before the write"
        )
    if overlap == "maybe":
        # rule: P2
        return warning(
            op,
            f"cannot prove that {what} is done reading {read.region.show()} before {writer} "
            f"writes {slot}",
            fix,
            Related(read.op, "the tensor-core read"),
        )
    # rule: P2
    return error(
        op,
        f"{writer} writes {slot} while {what} may still be reading it",
        fix,
        Related(read.op, "the tensor-core read of it"),
    )


def released_before(
    releases: Releases, writer: Clock, issued: tuple[tuple[int, int], ...]
) -> Release | None:
    """The latest arrival of a class that issued the read which the writer knows, when the
    class made it after the issue: the hand-off the write is ordered after, made while the
    read went on (a release after the retiring wait would have told the writer the wait)."""
    for c, stamp in issued:
        known = at(writer, c)
        for release in reversed(releases.table.get(c, ())):
            if release.stamp <= known:
                if release.stamp > stamp:
                    return release
                break
    return None


def released_early(
    release: Release,
    read: MmaRead | RetiredRead,
    write: Operation,
    writer: str,
    slot: str,
    uncommitted: bool,
) -> ProtocolFinding:
    what = reader(read.op)
    fix = (
        f"retire the read before the release: {WAIT} 0 before this {release.op.name} (a wait "
        "of N retires all but the newest N committed groups: N must leave out the group "
        f"that reads {slot})"
    )
    if uncommitted:
        fix = (
            f"commit the read ({COMMIT}: a wgmma never committed is never retired) and "
            f"retire it ({WAIT} 0) before this {release.op.name}"
        )
    # rule: P2
    return error(
        release.op,
        f"this arrival on {describe_key(release.key)} hands {slot} back while {what} may "
        f"still be reading it: the tensor core reads its descriptor's SMEM until the {WAIT} "
        "that retires its group",
        fix,
        Related(read.op, f"the tensor-core read of {slot}, not yet retired at the arrival"),
        Related(
            write, f"{writer}, ordered after the arrival, may overwrite {slot} while it is read"
        ),
    )


def unretired(groups: Groups) -> tuple[MmaRead | None, bool]:
    """The first tensor-core read of `groups` no wait has retired, and whether it was never
    committed."""
    if groups.mma.open:
        return groups.mma.open[0], True
    for g in groups.mma.fifo:
        if g:
            return g[0], False
    return None, False


def at_end(groups: Groups, op: Operation, where: str) -> ProtocolFinding | None:
    """P7: `where` ("the kernel returns", "role 1 ends") with a tensor-core read in flight."""
    read, uncommitted = unretired(groups)
    if read is None:
        return None
    commit = f"{COMMIT}, then " if uncommitted else ""
    # rule: P7
    return error(
        op,
        f"{where} while {reader(read.op)} may still read {read.region.show()}"
        + (" (it was never committed, so no wait retires it)" if uncommitted else ""),
        f"{commit}{WAIT} 0 before the end",
        Related(read.op, "the tensor-core read"),
    )
