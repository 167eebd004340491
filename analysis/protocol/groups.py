"""The groups of each issuer (the block, or a role): the TMA stores and cp.async copies its
elected thread and its threads have issued, committed (`copy.commit_group`) and not yet
waited (`copy.wait_group`), and the tensor-core reads of its warpgroup (`nvvm.wgmma.mma_async`
through descriptors), committed by `nvvm.wgmma.commit.group.sync.aligned` and retired by
`nvvm.wgmma.wait.group.sync.aligned`, oldest first; and its threads' `nvvm.tcgen05.mma`
reads, which a `nvvm.tcgen05.commit` hands to an mbarrier (they end with the phase its
arrival completes). The bulk groups and the wgmma groups are
two kinds of one machine, `ReadGroups`: reads join the open group, a commit closes it, a wait
of N completes all but the newest N committed groups, and a read never committed is never
completed. What a wait completes while roles run goes on as records of SMEM (`smem`): the
reads and the copies' writes others must still learn of."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from xdsl.ir import Operation

from analysis.protocol.clocks import (
    End,
    HappensBefore,
    Stamp,
    known_to,
    lazy_common,
    raise_to,
)
from analysis.protocol.records import Fill, Region, StoreRead

T = TypeVar("T")


@dataclass(frozen=True)
class MmaRead:
    """A tensor-core op's asynchronous read of `region` through a descriptor (`op`: a wgmma,
    or a foreign op that declares `async_read N until wgmma_wait_group`), issued when the
    classes of `issued` had those stamps."""

    op: Operation
    region: Region
    issued: End


@dataclass
class RetiredRead(StoreRead):
    """A tensor-core read its issuer's wgmma wait retired (at `end`: its completion, which
    every class that waited knows); `issued`: as `MmaRead.issued`."""

    issued: End = ()
    later: tuple[End, ...] = ()
    """For a tcgen05.mma read: the ends of its issuer's commits after the one that ended it,
    the latest `LATER_ENDS`, which complete it too (a commit tracks every prior tcgen05
    operation of its thread: a producer that learns the K slot's release, committed after
    the softmax's barrier, knows the read done)."""

    def ends(self) -> tuple[End, ...]:
        """The ends that complete the read: knowing one is enough."""
        return (self.end, *self.later)


LATER_ENDS = 8
"""The most later commits a tcgen05 access keeps as its ends (the latest: an MMA warp
commits a few times a k-block, to the slot's release, a stage's barrier and a tile's; fewer
ends only ask more of the waiter)."""


def with_later(later: tuple[End, ...], end: End) -> tuple[End, ...]:
    """`later` with the commit end `end`, the latest `LATER_ENDS` kept."""
    if end in later:
        return later
    return (*later, end)[-LATER_ENDS:]


@dataclass
class ReadGroups(Generic[T]):
    """One kind of group of asynchronous reads of one issuer: the reads issued since the last
    commit (`open`), the committed groups that may still read SMEM, oldest first (`fifo`),
    and how many committed groups older than those are done reading but not writing
    (`read`: a bulk group's stores after a `read_only` wait; a count, kept apart so that a
    long kernel's groups cost nothing)."""

    open: list[T] = field(default_factory=list)
    fifo: list[list[T]] = field(default_factory=list)
    read: int = 0

    def commit(self) -> None:
        self.fifo.append(self.open)
        self.open = []

    def wait(self, pending: int, read_only: bool) -> list[T]:
        """All but the newest `pending` committed groups complete their reads (and, unless
        `read_only`, their writes): the reads that completed now, oldest first."""
        total = self.read + len(self.fifo)
        done = max(0, total - pending)
        reads = max(0, done - self.read)
        waited = [r for g in self.fifo[:reads] for r in g]
        del self.fifo[:reads]
        self.read = max(self.read, done)
        if not read_only:
            self.read -= done
        return waited

    def in_flight(self) -> list[T]:
        """The reads not yet completed: the open group's and the committed ones'."""
        return [*self.open, *(r for g in self.fifo for r in g)]

    def snapshot(self, part: Callable[[T], object], cap: int) -> tuple[object, ...]:
        return (
            tuple(part(r) for r in self.open),
            tuple(tuple(part(r) for r in g) for g in self.fifo),
            min(self.read, cap),
        )


@dataclass
class Groups:
    """The groups of one issuer (the block, or a role): its elected thread's bulk groups, its
    threads' cp.async groups and its warpgroup's wgmma groups."""

    who: str
    bulk: ReadGroups[tuple[Operation, Region]] = field(default_factory=ReadGroups)
    """The TMA stores (and reads declared `until wait_group`) and their sources."""
    cp_open: list[Fill] = field(default_factory=list)
    cp_fifo: list[list[Fill]] = field(default_factory=list)
    mma: ReadGroups[MmaRead] = field(default_factory=ReadGroups)
    """The tensor-core reads through descriptors."""
    mma_clock: Stamp | None = None
    """Its wgmma waits' component of the clocks and the count of those that retired a read:
    a class that knows the count knows every read retired by then (every class that waited
    does, and whoever learns from it)."""
    tc_open: list[MmaRead] = field(default_factory=list)
    """Its threads' tcgen05.mma reads no tcgen05.commit tracks yet."""
    tc_done: list[RetiredRead] = field(default_factory=list)
    """Its tcgen05.mma reads a tcgen05.commit tracks: each ends with the barrier phase the
    commit's arrival completes (`end`), which a writer must know."""
    left_by: dict[Operation, Operation] = field(default_factory=dict)
    """Per TMA store (or declared read) in flight: the latest bulk wait_group whose pending
    count left its group in flight, which a write's P2 report names (the count is the
    mistake, not the write)."""

    @property
    def bulk_open(self) -> list[tuple[Operation, Region]]:
        return self.bulk.open

    @property
    def bulk_fifo(self) -> list[list[tuple[Operation, Region]]]:
        """Committed bulk groups that may still read SMEM, oldest first."""
        return self.bulk.fifo


class GroupSets:
    def __init__(self, hb: HappensBefore):
        self.hb = hb
        self.sets: list[Groups] = []
        """The groups of every issuer: their stores read, their cp.async copies write."""
        self.pending_cap = 0
        """The largest `pending` of the kernel's wait_groups: read-done groups beyond it
        can no longer make a difference (`snapshot`)."""

    def issuer(self, who: str) -> Groups:
        """The groups of a new issuer."""
        groups = Groups(who)
        self.sets.append(groups)
        return groups

    def remove(self, groups: Groups) -> None:
        """An issuer (a role) has ended. Its tcgen05.mma reads that a commit tracks go on
        until their barrier phase, which the block may wait for after the join: the block
        (the first issuer) keeps them."""
        self.sets.remove(groups)
        if groups.tc_done and self.sets:
            self.tc_keep(self.sets[0], groups.tc_done)

    def tc_commit(self, groups: Groups, end: End) -> None:
        """A tcgen05.commit of the issuer of `groups` tracks its reads so far: they end with
        `end` (the phase its arrival completes)."""
        for r in groups.tc_done:
            r.later = with_later(r.later, end)
        done: list[RetiredRead] = []
        regions: set[Region] = set()
        for r in groups.tc_open:
            # (a region read again before the same commit ends with it: the first read of
            # it stands for the others, ahead of them in every scan)
            if r.region not in regions:
                regions.add(r.region)
                done.append(RetiredRead(r.op, r.region, end, r.issued))
        groups.tc_open = []
        self.tc_keep(groups, done)

    def tc_keep(self, groups: Groups, done: list[RetiredRead]) -> None:
        """Keep `done`, dropping what every running class knows, and the earlier reads of
        the same op and region that end on the same barrier (a later phase of it is known
        only after the earlier one)."""
        known = lazy_common(self.hb.live_clocks())
        later = {(r.op, r.region, r.end[0][0]) for r in done}
        groups.tc_done = [
            r
            for r in groups.tc_done
            if (r.op, r.region, r.end[0][0]) not in later and not known_to(known, r.end)
        ] + done

    def tc_in_flight(self) -> list[MmaRead]:
        """The tcgen05.mma reads of every issuer that no commit tracks yet."""
        return [r for g in self.sets for r in g.tc_open]

    def tc_tracked(self) -> list[tuple[RetiredRead, tuple[End, ...]]]:
        """The tcgen05.mma reads of every issuer that a commit tracks, each with the ends
        that complete it (`RetiredRead.ends`)."""
        return [(r, r.ends()) for g in self.sets for r in g.tc_done]

    def commit(self, groups: Groups, bulk: bool) -> None:
        if bulk:
            groups.bulk.commit()
        else:
            groups.cp_fifo.append(groups.cp_open)
            groups.cp_open = []

    def wait(
        self,
        groups: Groups,
        bulk: bool,
        pending: int,
        read_only: bool,
        mark: Stamp,
        op: Operation | None = None,
    ) -> tuple[list[StoreRead], list[Fill]]:
        """The issuer of `groups` waits (`op`) for all but `pending` groups, its threads
        meeting at `mark`. While roles run, returns what the wait completed that others must
        still learn of (they know it once they know `mark`): the stores' reads, the copies."""
        if bulk:
            waited = groups.bulk.wait(pending, read_only)
            for read in waited:
                groups.left_by.pop(read[0], None)
            if op is not None and pending:
                for group in groups.bulk.fifo[-pending:]:
                    groups.left_by.update((store, op) for store, _ in group)
            if not self.hb.concurrent:
                return [], []
            return [StoreRead(op, r, (mark,)) for op, r in waited], []
        keep = max(0, len(groups.cp_fifo) - pending)
        landed = []
        if self.hb.concurrent:
            for g in groups.cp_fifo[:keep]:
                for fill in g:
                    fill.end = (mark,)
                    landed.append(fill)
        groups.cp_fifo = groups.cp_fifo[keep:]
        return [], landed

    def mma_wait(self, groups: Groups, pending: int, classes: tuple[int, ...]) -> list[StoreRead]:
        """The warpgroup of `groups` (its `classes`) waits until at most `pending` of its
        committed wgmma groups are in flight (`wgmma.wait_group`: no block barrier, each
        thread waits for the warpgroup's groups). While roles run, returns the reads it
        retired, which a class knows once it knows the completion the waiters observed."""
        retired = groups.mma.wait(pending, read_only=False)
        if not retired or not self.hb.concurrent:
            return []
        comp, count = groups.mma_clock or (self.hb.new_component(), 0)
        count += 1
        groups.mma_clock = (comp, count)
        for c in classes:
            raise_to(self.hb.clocks[c], comp, count)
        end = ((comp, count),)
        return [RetiredRead(r.op, r.region, end, r.issued) for r in retired]

    def cp_in_flight(self) -> list[Fill]:
        """The cp.async copies of every issuer not yet waited."""
        return [
            f
            for g in self.sets
            if g.cp_open or g.cp_fifo
            for f in (*g.cp_open, *(f for grp in g.cp_fifo for f in grp))
        ]

    def stores_in_flight(self) -> list[tuple[Operation, Region, End | None]]:
        """The TMA stores of every issuer that may still read SMEM, and their sources."""
        return [
            (store, source, None)
            for g in self.sets
            if g.bulk.open or g.bulk.fifo
            for store, source in g.bulk.in_flight()
        ]

    def mma_in_flight(self) -> list[MmaRead]:
        """The tensor-core reads of every issuer that no wgmma wait has retired."""
        return [r for g in self.sets if g.mma.open or g.mma.fifo for r in g.mma.in_flight()]

    def snapshot(self) -> tuple[object, ...]:
        def store(s: tuple[Operation, Region]) -> object:
            return (s[0], s[1].part())

        def mma(r: MmaRead) -> object:
            return (r.op, r.region.part())

        return tuple(
            (
                g.bulk.snapshot(store, self.pending_cap),
                tuple(f.op for f in g.cp_open),
                tuple(tuple(f.op for f in grp) for grp in g.cp_fifo),
                g.mma.snapshot(mma, 0),
                tuple(mma(r) for r in g.tc_open),
                tuple((r.op, r.region.part()) for r in g.tc_done),
            )
            for g in self.sets
        )
