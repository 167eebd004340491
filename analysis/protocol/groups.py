"""The bulk and cp.async groups of each issuer (the block, or a role): the TMA stores and
cp.async copies each has issued, committed (`copy.commit_group`) and not yet waited
(`copy.wait_group`), oldest first. What a wait completes while roles run goes on as records
of SMEM (`smem`): the stores' reads and the copies' writes others must still learn of."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Operation

from analysis.protocol.clocks import End, HappensBefore, Stamp
from analysis.protocol.records import Fill, Region, StoreRead


@dataclass
class Groups:
    """The bulk and cp.async groups of one issuer (the block, or a role): its elected
    thread's bulk groups and its threads' cp.async groups."""

    who: str
    bulk_open: list[tuple[Operation, Region]] = field(default_factory=list)
    bulk_read: int = 0
    """Committed bulk groups whose reads are done but not their writes: always the
    oldest, so a count (kept apart so that a long kernel's groups cost nothing)."""
    bulk_fifo: list[list[tuple[Operation, Region]]] = field(default_factory=list)
    """Committed bulk groups that may still read SMEM, oldest first."""
    cp_open: list[Fill] = field(default_factory=list)
    cp_fifo: list[list[Fill]] = field(default_factory=list)


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
        """An issuer (a role) has ended."""
        self.sets.remove(groups)

    def commit(self, groups: Groups, bulk: bool) -> None:
        if bulk:
            groups.bulk_fifo.append(groups.bulk_open)
            groups.bulk_open = []
        else:
            groups.cp_fifo.append(groups.cp_open)
            groups.cp_open = []

    def wait(
        self, groups: Groups, bulk: bool, pending: int, read_only: bool, mark: Stamp
    ) -> tuple[list[StoreRead], list[Fill]]:
        """The issuer of `groups` waits for all but `pending` groups, its threads meeting at
        `mark`. While roles run, returns what the wait completed that others must still
        learn of (they know it once they know `mark`): the stores' reads, the copies."""
        if bulk:
            total = groups.bulk_read + len(groups.bulk_fifo)
            done = max(0, total - pending)
            reads = max(0, done - groups.bulk_read)
            waited = []
            if self.hb.concurrent:
                waited = [
                    StoreRead(op, r, (mark,)) for g in groups.bulk_fifo[:reads] for op, r in g
                ]
            del groups.bulk_fifo[:reads]
            groups.bulk_read = max(groups.bulk_read, done)
            if not read_only:
                groups.bulk_read -= done
            return waited, []
        keep = max(0, len(groups.cp_fifo) - pending)
        landed = []
        if self.hb.concurrent:
            for g in groups.cp_fifo[:keep]:
                for fill in g:
                    fill.end = (mark,)
                    landed.append(fill)
        groups.cp_fifo = groups.cp_fifo[keep:]
        return [], landed

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
            if g.bulk_open or g.bulk_fifo
            for store, source in (*g.bulk_open, *(s for group in g.bulk_fifo for s in group))
        ]

    def snapshot(self) -> tuple[object, ...]:
        return tuple(
            (
                tuple((op, r.part()) for op, r in g.bulk_open),
                tuple(tuple((op, r.part()) for op, r in grp) for grp in g.bulk_fifo),
                min(g.bulk_read, self.pending_cap),
                tuple(f.op for f in g.cp_open),
                tuple(tuple(f.op for f in grp) for grp in g.cp_fifo),
            )
            for g in self.sets
        )
