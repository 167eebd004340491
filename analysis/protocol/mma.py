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

from analysis.protocol.clocks import Clock, End, HappensBefore, at
from analysis.protocol.findings import ProtocolFinding, Related, error, warning
from analysis.protocol.groups import Groups, GroupSets, MmaRead, RetiredRead
from analysis.protocol.mbarriers import Releases
from analysis.protocol.records import Region, Release, StoreRead, describe_key
from copy_dialect.effects import op_name
from copy_dialect.roles import enclosing_role

WAIT = "nvvm.wgmma.wait.group.sync.aligned"
COMMIT = "nvvm.wgmma.commit.group.sync.aligned"


TCGEN05 = "nvvm.tcgen05.mma"
TC_COMMIT = "nvvm.tcgen05.commit"
TC_READERS = {
    TCGEN05: "tcgen05.mma",
    "nvvm.tcgen05.mma.sp": "tcgen05.mma.sp",
    "copy.smem_to_tmem": "tcgen05.cp",
}
"""The ops whose SMEM reads a tcgen05.commit tracks (PTX ISA 9.7.16.11: the thread's earlier
tcgen05 async operations), and their instructions."""


def reader(op: Operation) -> str:
    """How findings name a tensor-core read's op."""
    if op.name == "nvvm.wgmma.mma_async":
        return "the wgmma (nvvm.wgmma.mma_async)"
    if op.name in TC_READERS:
        return f"the {TC_READERS[op.name]} ({op.name})"
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
    is not ordered after; for tcgen05.mma, not committed, or committed to a barrier phase
    the writer does not know complete)."""
    if not reads_done and not any(
        g.mma.open or g.mma.fifo or g.tc_open or g.tc_done for g in group_sets.sets
    ):
        return None
    found = first_overlap(
        region,
        [
            *((r, ()) for r in group_sets.mma_in_flight()),
            *((r, ()) for r in group_sets.tc_in_flight()),
        ],
        hb,
        issuers,
    ) or first_overlap(
        region,
        [
            *((r, (r.end,)) for r in reads_done if isinstance(r, RetiredRead)),
            *group_sets.tc_tracked(),
        ],
        hb,
        issuers,
    )
    if found is None:
        return None
    read, overlap = found
    what = reader(read.op)
    slot = region.show()
    tcgen05 = read.op.name in TC_READERS
    uncommitted = isinstance(read, MmaRead) and any(
        read in g.mma.open or read in g.tc_open for g in group_sets.sets
    )
    if overlap == "yes":
        release = released_before(releases, hb.clocks[issuers[0]], read.issued)
        if release is not None:
            return released_early(release, read, op, writer, slot, uncommitted)
    if tcgen05:
        fix = write_after_tcgen05(read, uncommitted)
    else:
        retire = (
            f"commit it ({COMMIT}: a wgmma never committed is never retired) and retire its "
            f"group ({WAIT} 0)"
            if uncommitted
            else f"retire its group ({WAIT} 0, or a count below the groups committed after it)"
        )
        fix = f"{retire} before the write"
        if isinstance(read, RetiredRead):
            fix = (
                f"the role that issued the read retired it ({WAIT}), but nothing orders this "
                f"write after that wait: let that role arrive on a barrier after its {WAIT} (a "
                "consumer-release barrier) and wait on it before the write"
            )
        elif hb.concurrent and enclosing_role(read.op) != enclosing_role(op):
            fix = (
                f"the read is another role's: in that role, {retire} before the "
                "copy.barrier_arrive that releases the slot, and wait on that barrier before "
                "the write"
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


def first_overlap(
    region: Region,
    reads: list[tuple[MmaRead | RetiredRead, tuple[End, ...]]],
    hb: HappensBefore,
    issuers: tuple[int, ...],
) -> tuple[MmaRead | RetiredRead, str] | None:
    """The first read of `reads` that may touch `region` and has not ended for `issuers`:
    each with the ends that complete it (none: in flight), one of which they must know."""
    for r, ends in reads:
        overlap = region.overlap(r.region)
        if overlap == "no" or any(hb.knows_all(issuers, end) for end in ends):
            continue
        return r, overlap
    return None


def write_after_tcgen05(read: MmaRead | RetiredRead, uncommitted: bool) -> str:
    """The fix for a write before a tcgen05.mma's reads are known done."""
    if uncommitted:
        return (
            f"commit the MMA ({TC_COMMIT} on a copy.barrier_init barrier: a tcgen05.mma no "
            "commit tracks never signals its end) and wait on that barrier's phase "
            "(copy.barrier_wait) before the write"
        )
    assert isinstance(read, RetiredRead)
    return (
        f"wait on the barrier the {TC_COMMIT} arrives on (copy.barrier_wait on its phase) "
        "before the write, or, in another role, wait on it there before the release this "
        "write is ordered after"
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
    until = f"the {WAIT} that retires its group"
    if read.op.name in TC_READERS:
        until = f"the barrier phase its {TC_COMMIT} arrives on completes"
        fix = (
            f"release the slot with the MMA's end: {TC_COMMIT} on {describe_key(release.key)} "
            f"in place of this {release.op.name} (its arrival comes once the MMA has read the "
            "slot; count it in the barrier's arrivals)"
        )
    # rule: P2
    return error(
        release.op,
        f"this arrival on {describe_key(release.key)} hands {slot} back while {what} may "
        f"still be reading it: the tensor core reads its descriptor's SMEM until {until}",
        fix,
        Related(read.op, f"the tensor-core read of {slot}, not yet retired at the arrival"),
        Related(
            write, f"{writer}, ordered after the arrival, may overwrite {slot} while it is read"
        ),
    )


def unretired(groups: Groups) -> tuple[MmaRead | None, bool]:
    """The first wgmma read of `groups` no wait has retired, and whether it was never
    committed; else the first tcgen05.mma read no commit tracks."""
    if groups.mma.open:
        return groups.mma.open[0], True
    for g in groups.mma.fifo:
        if g:
            return g[0], False
    if groups.tc_open:
        return groups.tc_open[0], True
    return None, False


def at_end(
    groups: Groups, op: Operation, where: str, hb: HappensBefore, classes: tuple[int, ...] = ()
) -> ProtocolFinding | None:
    """P7: `where` ("the kernel returns", "role 1 ends") with a tensor-core read in flight;
    at the return (`classes`: the block's), a tcgen05.mma read whose commit's phase they do
    not know complete."""
    read, uncommitted = unretired(groups)
    if read is None and classes:
        for done in groups.tc_done:
            if not any(hb.knows_all((c,), end) for c in classes for end in done.ends()):
                # rule: P7
                return error(
                    op,
                    f"{where} while {reader(done.op)} may still read {done.region.show()}: no "
                    f"wait observed the barrier phase its {TC_COMMIT} arrives on",
                    f"copy.barrier_wait on the barrier of the {TC_COMMIT} before the end",
                    Related(done.op, "the tensor-core read"),
                )
    if read is None:
        return None
    if read.op.name in TC_READERS:
        # rule: P7
        return error(
            op,
            f"{where} while {reader(read.op)} may still read {read.region.show()} (no "
            f"{TC_COMMIT} tracks it, so nothing signals its end)",
            f"{TC_COMMIT} on a copy.barrier_init barrier, then copy.barrier_wait on its phase, "
            "before the end",
            Related(read.op, "the tensor-core read"),
        )
    commit = f"{COMMIT}, then " if uncommitted else ""
    # rule: P7
    return error(
        op,
        f"{where} while {reader(read.op)} may still read {read.region.show()}"
        + (" (it was never committed, so no wait retires it)" if uncommitted else ""),
        f"{commit}{WAIT} 0 before the end",
        Related(read.op, "the tensor-core read"),
    )
