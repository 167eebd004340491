"""What touches SMEM, and the races between them (P1-P4): the async writes that may still be
landing (TMA loads, DSMEM writes, cp.async copies waited by a role), the threads' accesses,
their writes not yet fenced for the async proxy, and the TMA stores' reads a role waited.
Each record keeps the stamps a later conflicting access must know (`records`); a record
every running class knows is dropped (`prune`).

The copies in flight in the issuers' groups (`groups`) and the barriers' phases
(`mbarriers`: which phase completes a load, which wait returned at once) are read from
their parts."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Operation

from analysis.protocol import mma
from analysis.protocol.clocks import (
    Clock,
    End,
    HappensBefore,
    Stamp,
    known_to,
    knows,
    lazy_common,
)
from analysis.protocol.findings import Related, Report, error, warning
from analysis.protocol.groups import GroupSets
from analysis.protocol.mbarriers import Mbarriers
from analysis.protocol.records import (
    Access,
    Fill,
    Key,
    PeerRead,
    Region,
    StoreRead,
)
from analysis.protocol.smem_findings import overwritten, released_early, remote_release, unfinished
from copy_dialect.effects import op_name


class SharedMemory:
    def __init__(
        self, hb: HappensBefore, report: Report, barriers: Mbarriers, group_sets: GroupSets
    ):
        self.hb = hb
        self.report = report
        self.barriers = barriers
        self.group_sets = group_sets
        self.fills: list[Fill] = []
        self.reads_done: list[StoreRead] = []
        self.accesses: dict[tuple[object, ...], Access] = {}
        """By op, region, kind and classes: a later access of the same kind stands for an
        earlier one (its stamps are later)."""
        self.unfenced: list[Access] = []
        """Threads' SMEM writes no copy.fence_async_shared has yet made visible to the
        async proxy (TMA, tcgen05.cp)."""
        self.fenced: list[tuple[Access, End]] = []
        """Writes a role fenced, and the sync after its fence, not yet known to all."""

    # ---- what is known complete ------------------------------------------------------------

    def known_by(self, fill: Fill, clocks: list[Clock]) -> bool:
        """Whether every clock of `clocks` knows `fill` complete (`known_to` of their
        `common`, without computing it: a few readers' clocks, each as wide as the run's
        components, against one end)."""
        if fill.key is not None and self.barriers.table[fill.key].unknown:
            return True
        end = fill.end
        return end is not None and all(knows(k, end) for k in clocks)

    def known_to(self, fill: Fill, known: Clock | None) -> bool:
        """Whether the clock `known` (`clocks.common`) knows `fill` complete."""
        if fill.key is not None and self.barriers.table[fill.key].unknown:
            return True
        end = fill.end
        return end is not None and known_to(known, end)

    def fill_known(self, fill: Fill, classes: tuple[int, ...]) -> bool:
        clocks = self.hb.clocks
        return self.known_by(fill, [clocks[c] for c in classes])

    def unfinished_on(self, key: Key) -> list[Fill]:
        """The loads on barrier `key` that not every running class knows complete."""
        live = tuple(self.hb.live)
        return [f for f in self.fills if f.key == key and not self.fill_known(f, live)]

    def prune(self, known: Clock | None) -> None:
        """Drop the records the clock `known` knows (`clocks.common` of the running
        classes'): nothing can race with them."""
        if self.accesses:
            gone = [key for key, a in self.accesses.items() if known_to(known, a.end)]
            for key in gone:
                del self.accesses[key]
        if self.fills:
            self.fills = latest([f for f in self.fills if not self.known_to(f, known)])
        if self.reads_done:
            self.reads_done = [r for r in self.reads_done if not known_to(known, r.end)]
        if self.fenced:
            self.fenced = [f for f in self.fenced if not known_to(known, f[1])]

    def prune_fills(self) -> None:
        known = lazy_common(self.hb.live_clocks())
        self.fills = [f for f in self.fills if not self.known_to(f, known)]

    def block_barrier(self) -> None:
        """Every thread of the block meets (outside roles): its accesses, fences and waited
        store reads are known to all; a peer copy's read of its source only once one of them
        learned the receiver's phase."""
        self.accesses = {}
        self.fenced = []
        if self.reads_done:
            known = lazy_common(self.hb.live_clocks())
            self.reads_done = [
                r for r in self.reads_done if isinstance(r, PeerRead) and not known_to(known, r.end)
            ]
        if self.fills:
            self.prune_fills()

    # ---- reads and writes ------------------------------------------------------------------

    def fills_over(self, region: Region) -> list[tuple[Fill, str]]:
        """The loads and cp.async copies in flight that may write `region`, with how they
        overlap (other buffers' skipped before the call of `Region.overlap`: a hot path)."""
        fills = [*self.fills, *self.group_sets.cp_in_flight()]
        pairs = ((f, region.overlap(f.region)) for f in fills if f.region.buffer is region.buffer)
        return [(f, overlap) for f, overlap in pairs if overlap != "no"]

    def read(self, op: Operation, region: Region, readers: tuple[int, ...], reader: str) -> None:
        """`reader` (threads, a TMA store, tcgen05.cp) of the classes `readers` reads
        `region`."""
        for fill, overlap in self.fills_over(region):
            if fill.reported or self.fill_known(fill, readers):
                continue
            fill.reported = True
            if overlap == "yes" and fill.issued is not None:
                clocks = self.hb.clocks
                for c in readers:
                    release = self.barriers.releases.release_before(c, clocks[c], fill.issued)
                    if release is not None:
                        self.report(released_early(release, fill.region, op, False, fill.op))
                        return
            self.report(unfinished(self.barriers, op, region, fill, reader, overlap))
            return

    def refill(
        self,
        op: Operation,
        region: Region,
        writer: str,
        issuers: tuple[int, ...],
        by_threads: bool = False,
        remote: bool = False,
    ) -> None:
        """An async copy, or threads (`by_threads`), `writer` of the classes `issuers`, is
        about to write `region`; `remote`: another CTA's (a multicast share, a DSMEM write),
        whose issuer only a release sent to it can hold back. (Races between threads are
        not the copy protocol's: threads after threads are not checked.)"""
        self._in_flight_reads(op, region, writer, issuers)
        for access in () if by_threads else self.accesses.values():
            overlap = region.overlap(access.region)
            if overlap == "no" or self.hb.knows_all(issuers, access.end):
                continue
            if overlap == "yes" and access.seen:
                issuer = self.hb.clocks[issuers[0]]
                for (c, _), seen in zip(access.end, access.seen, strict=True):
                    release = self.barriers.releases.release_before(c, seen, issuer)
                    if release is not None:
                        self.report(released_early(release, region, access.op, access.write, op))
                        return
            how = "write" if access.write else "read"
            message = (
                f"{writer} writes {region.show()} while other threads may still access it "
                f"(threads {how} it before, with no block barrier in between)"
            )
            fix = (
                "put a block barrier between the threads' accesses and the copy "
                "(copy.fence_async_shared after thread writes, gpu.barrier after reads)"
            )
            if self.hb.concurrent:
                message = (
                    f"{writer} writes {region.show()} while threads of {access.who} may still "
                    f"{how} it (nothing orders this copy after their {how})"
                )
                fix = (
                    f"order the copy after the {how}: a role barrier in {access.who} "
                    "(copy.wait_group or copy.fence_async_shared) when it issues the copy "
                    f"itself, else an arrive by {access.who} after the {how} (a consumer-release "
                    "barrier) that the issuer waits on before the copy"
                )
            if remote:
                fix = remote_release(writer, region, bool(self.hb.relaxed))
            # rule: P3
            self.report(
                (warning if overlap == "maybe" else error)(
                    op, message, fix, Related(access.op, f"the threads {how} it here")
                )
            )
            return
        for fill, overlap in self.fills_over(region):
            if fill.reported or self.fill_known(fill, issuers):
                continue
            fill.reported = True
            self.report(overwritten(op, region, writer, fill, overlap, self.hb.concurrent, remote))
            return

    def read_before_first_fill(self, fill: Fill, issuers: tuple[int, ...]) -> bool:
        """A peer's DSMEM write `fill` (the first phase of its barrier) lands in this CTA's
        `fill.region`, which threads of this CTA read before and the writer does not know:
        with no phase before, they read it before the write completes (P1 at their read,
        whose fix is the wait), not a reuse of data they had waited for (P3). The same for
        a TMA store (or a declared async read) of this CTA that read it, in flight or
        waited but not known to the writer: it sent what was there before the write.
        Reported, and True, when so."""
        for access in self.accesses.values():
            if access.write or fill.region.overlap(access.region) != "yes":
                continue
            if self.hb.knows_all(issuers, access.end):
                continue
            fill.reported = True
            self.report(
                unfinished(self.barriers, access.op, access.region, fill, "threads' load", "yes")
            )
            return True
        for store, source, _ in self.pending_reads(issuers):
            if fill.region.overlap(source) != "yes":
                continue
            fill.reported = True
            self.report(unfinished(self.barriers, store, source, fill, async_reader(store), "yes"))
            return True
        return False

    def pending_reads(self, issuers: tuple[int, ...]) -> list[tuple[Operation, Region, End | None]]:
        """The async reads of SMEM (TMA stores, declared reads) that the classes `issuers`
        do not know done: those in flight (end None) and those waited that they do not
        know of."""
        pending = self.group_sets.stores_in_flight()
        if self.reads_done:
            pending += [
                (r.op, r.region, r.end)
                for r in self.reads_done
                if not self.hb.knows_all(issuers, r.end)
            ]
        return pending

    def _in_flight_reads(
        self, op: Operation, region: Region, writer: str, issuers: tuple[int, ...]
    ) -> None:
        tensor_core = mma.hazard(
            self.hb, self.barriers.releases, self.group_sets, self.reads_done,
            op, region, writer, issuers,
        )  # fmt: skip
        if tensor_core is not None:
            self.report(tensor_core)
            return
        for store, source, end in self.pending_reads(issuers):
            overlap = region.overlap(source)
            if overlap == "no":
                continue
            tma = store.name.startswith("copy.")
            reader = "a TMA store from it" if tma else f"'{op_name(store)}' (an async read)"
            related = f"the {'TMA store' if tma else 'op'} that reads it"
            if store.name == "copy.peer_copy":
                reader, related = "the peer copy from it", "the peer copy that reads it"
                fix = (
                    "the peer copy reads its source until the receiver's barrier phase "
                    "completes, which only the receiver can tell: let it arrive on a barrier "
                    "of this CTA after its copy.barrier_wait (copy.peer_arrive), and "
                    "copy.barrier_wait on that barrier before the write"
                )
            elif end is not None:
                fix = (
                    "the role that issued the store waited for its reads, but nothing orders "
                    "this write after that wait: let that role arrive on a barrier after its "
                    "copy.wait_group (a consumer-release barrier) and wait on it before the write"
                )
            elif self.hb.concurrent and role_of(store) is not role_of(op):
                fix = (
                    f"the {'store' if tma else 'read'} is another role's: in that role, release "
                    "the slot (the copy.barrier_arrive on the barrier this write waits on) only "
                    "after a copy.wait_group bulk that covers its group (read_only suffices)"
                )
            else:
                fix = (
                    f"commit the {'store' if tma else 'read'} and wait until it has read its "
                    "source (copy.commit_group bulk, then copy.wait_group bulk 0 read_only, or "
                    "a count that covers its group) before the write"
                )
            left = next((g.left_by[store] for g in self.group_sets.sets if store in g.left_by),
                        None)  # fmt: skip
            if left is not None and end is None:
                pending = left.pending.value.data  # type: ignore[attr-defined]
                fix = (
                    f"this copy.wait_group bulk {pending} leaves the "
                    f"{'store' if tma else 'read'}'s group in flight: lower its count "
                    f"(copy.wait_group bulk {pending - 1} read_only waits for one more group) "
                    "so that it covers the group before the write"
                )
            # rule: P2
            self.report(
                (warning if overlap == "maybe" else error)(
                    op,
                    f"{writer} writes {region.show()} while {reader} may still be reading it",
                    fix,
                    Related(store, related),
                    *(
                        [Related(left, "this wait_group leaves its group in flight")]
                        if left is not None and end is None
                        else []
                    ),
                )
            )
            return

    def thread_access(
        self,
        op: Operation,
        region: Region,
        write: bool,
        members: tuple[int, ...],
        who: str,
        what: str = "",
    ) -> None:
        """Threads of the classes `members` (`who`) read or write `region` (`what`: the op,
        when it is not a load or store)."""
        if write:
            self.refill(op, region, what or "threads' store", members, by_threads=True)
        else:
            self.read(op, region, members, what or "threads' load")
        access = Access(op, region, write, self.hb.stamps(members), who)
        if self.hb.concurrent:
            access.seen = tuple(self.hb.clocks[c].copy() for c in members)
        if write:
            # A later write of the op to the region by the same classes stands for an earlier
            # one (its stamps are later), so that a loop of thread writes that no fence
            # follows (a kernel without an async proxy) keeps one record, not one a lap.
            self.unfenced = [
                u for u in self.unfenced
                if (u.op, u.region, tuple(c for c, _ in u.end)) != (op, region, members)
            ]  # fmt: skip
            self.unfenced.append(access)
        key = (op, region, write, members)
        self.accesses.pop(key, None)
        self.accesses[key] = access

    def async_read(
        self, op: Operation, region: Region, reader: str, issuers: tuple[int, ...]
    ) -> None:
        """The async proxy reads `region`: threads' writes to it must be fenced, and the read
        ordered after the fence."""
        for access in self.unfenced:
            overlap = region.overlap(access.region)
            if overlap == "no":
                continue
            # rule: P4
            self.report(
                (warning if overlap == "maybe" else error)(
                    op,
                    f"{reader} reads {region.show()}, which threads wrote with no "
                    "copy.fence_async_shared since",
                    "add copy.fence_async_shared after the threads' writes and before the "
                    "copy (it includes the block barrier)",
                    Related(access.op, "the threads write it here"),
                )
            )
            return
        for access, end in self.fenced:
            overlap = region.overlap(access.region)
            if overlap == "no" or self.hb.knows_all(issuers, end):
                continue
            # rule: P4
            self.report(
                (warning if overlap == "maybe" else error)(
                    op,
                    f"{reader} reads {region.show()}, which threads of {access.who} wrote and "
                    "fenced, but nothing orders this read after their fence",
                    f"let {access.who} arrive on a barrier after its copy.fence_async_shared and "
                    "wait on it before the copy",
                    Related(access.op, "the threads write it here"),
                )
            )
            return

    def fence(self, classes: tuple[int, ...], everyone: bool, mark: Stamp) -> None:
        """`classes` fenced their writes and met at `mark` (`everyone`: the whole block)."""
        if everyone:
            self.unfenced = []
            self.fenced = []
        else:
            mine = set(classes)
            kept = []
            for access in self.unfenced:
                if {c for c, _ in access.end} <= mine:
                    self.fenced = [
                        f
                        for f in self.fenced
                        if (f[0].op, f[0].region) != (access.op, access.region)
                    ]
                    self.fenced.append((access, (mark,)))
                else:
                    kept.append(access)
            self.unfenced = kept

    def peer_read(self, op: Operation, region: Region, end: End) -> None:
        """A peer copy of this CTA reads `region` until the receiver's barrier phase `end`
        completes: a write to it must know `end` (P2)."""
        self.reads_done.append(PeerRead(op, region, end))

    def waited(self, reads: list[StoreRead], fills: list[Fill]) -> None:
        """A role's wait_group completed `reads` and `fills`: others must still learn of it.
        The same store's later reads, waited later by the same role, stand for its earlier
        ones."""
        if reads:
            later = {(r.op, r.region) for r in reads}
            self.reads_done = [r for r in self.reads_done if (r.op, r.region) not in later]
            self.reads_done += reads
        self.fills += fills

    # ---- the snapshot ----------------------------------------------------------------------

    def snapshot(self, seen: Callable[[End | None], int]) -> tuple[tuple[object, ...], ...]:
        """The fills (phases counted from their barrier's current one: a leader-tracked
        load's from the leader's), the accesses, the unfenced and fenced writes and the
        waited store reads, each with the clocks that know it (`seen`)."""
        table = self.barriers.table

        def closed(f: Fill) -> int:
            if f.barrier is not None:  # (a phase of the pair leader's barrier)
                return f.barrier.closed
            return table[f.key].closed if f.key else 0

        return (
            tuple((f.op, f.region.part(), f.key, f.phase - closed(f), seen(f.end))
                  for f in self.fills),  # fmt: skip
            tuple((a.op, a.region.part(), a.write, seen(a.end)) for a in self.accesses.values()),
            tuple((a.op, a.region.part(), a.end and tuple(c for c, _ in a.end))
                  for a in self.unfenced),
            tuple((a.op, a.region.part(), seen(end)) for a, end in self.fenced),
            tuple((r.op, r.region.part(), seen(r.end)) for r in self.reads_done),
        )  # fmt: skip


def async_reader(op: Operation) -> str:
    """How a finding names an async read of SMEM in flight: a TMA store, a peer copy, or an
    op that declares its read."""
    if op.name == "copy.peer_copy":
        return "the peer copy"
    if op.name.startswith("copy."):
        return "the TMA store"
    return f"'{op_name(op)}' (an async read)"


def latest(fills: list[Fill]) -> list[Fill]:
    """`fills` less those a later one stands for: a load's fill of the same region by the
    same op on an earlier phase of the same barrier. A class that knows the later phase
    complete knows the earlier (a barrier's phases complete in order, and the clock
    component of its completions only grows), and one that does not know the earlier does
    not know the later, which is then reported in its place (the same op and region). A
    ring whose old fills some class never learns of (a peer CTA's) then keeps one per
    slot, whose phase repeats lap by lap, where it kept every lap's."""
    last: dict[tuple[object, ...], Fill] = {}
    for f in fills:
        if f.key is not None and f.end is not None and len(f.end) == 1:
            # (by identity: the op's, the buffer's and the barrier group's hash in Python)
            group, index = f.key  # type: ignore[misc]
            k = (id(f.op), id(f.region.buffer), f.region.index, id(group), index, f.end[0][0])
            if k not in last or last[k].end[0][1] < f.end[0][1]:  # type: ignore[index]
                last[k] = f
    if len(last) == len(fills):
        return fills
    kept = {id(f) for f in last.values()}
    return [f for f in fills if id(f) in kept or f.key is None or f.end is None or len(f.end) != 1]


def role_of(op: Operation) -> object:
    """The role region of copy.warp_specialize `op` is in (None outside roles)."""
    region = op.parent_region()
    while region is not None:
        parent = region.parent_op()
        if parent is None:
            return None
        if parent.name == "copy.warp_specialize":
            return region
        region = parent.parent_region()
    return None


# ---- findings shared by the checks ----------------------------------------------------------
