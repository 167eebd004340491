"""The mbarriers of one CTA: each barrier group's barriers, their phases' arrivals and
transaction bytes (P5, MB11), and their life (init, inval, reinit: MB8-MB10). The waits on
them (`waits`: which phase a wait waits for, what it observes, P6) are a part of it that
sees each phase complete.

A phase closes when it has all its arrivals and its bytes expected equal its bytes
delivered; its clock joins what its arrivals and copies knew (and the phase before), and the
barrier's component of the clocks counts the phases a class knows complete (`records`)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Operation, SSAValue

from analysis.protocol.clocks import Clock, HappensBefore, at, join, lags, raise_to
from analysis.protocol.facts import CopyFacts
from analysis.protocol.findings import Related, Report, error
from analysis.protocol.records import (
    SNAPSHOT_LAG,
    Barrier,
    Closer,
    Fill,
    Key,
    Release,
    describe_key,
    learned_since,
)
from analysis.protocol.waits import PhaseWaits
from copy_dialect import ops as copy

RELEASES_KEPT = 8
"""The arrivals kept per class for `release_before` (a copy ordered after an older one of
the class's arrivals is not told apart)."""


class Releases:
    """Each class's last barrier_arrives (with roles), latest last: which of them a copy is
    ordered after (P3, `SharedMemory`)."""

    def __init__(self, hb: HappensBefore):
        self.hb = hb
        self.table: dict[int, list[Release]] = {}

    def released(self, op: Operation, key: Key, classes: tuple[int, ...]) -> None:
        """A copy.barrier_arrive by `classes` (with roles): a copy issued after its phase
        completes may overwrite what they read before it, not what they read after."""
        if not self.hb.concurrent:
            return
        for c in classes:
            clock = self.hb.clocks[c]
            mine = self.table.setdefault(c, [])
            mine.append(Release(op, key, clock[c], clock.copy()))
            del mine[:-RELEASES_KEPT]

    def release_before(self, c: int, then: Clock, issuer: Clock) -> Release | None:
        """The arrival by class c that `issuer` knows, when c learned nothing between it and
        `then` (c's clock at an access): c released what it then accessed before accessing
        it, and a copy `issuer` orders after the release can overwrite it (P3)."""
        known = at(issuer, c)
        for release in reversed(self.table.get(c, ())):
            if release.stamp <= known:
                return None if learned_since(release.clock, then, c) else release
        return None


class Mbarriers:
    def __init__(self, hb: HappensBefore, report: Report):
        self.hb = hb
        self.report = report
        self.table: dict[Key, Barrier] = {}
        self.groups: dict[SSAValue, tuple[Operation, int]] = {}
        """Each barrier group: its barrier_init and its size."""
        self.tracked: set[Operation] = set()
        """The mbarrier-tracked cp.async copies seen (their threads arrive on a barrier)."""
        self.releases = Releases(hb)
        self.waits = PhaseWaits(hb, report, self.table, self.groups, self.tracked)

    # ---- the groups' life ----------------------------------------------------------------

    def init_group(self, op: Operation, group: SSAValue, size: int, count: int) -> None:
        self.groups[group] = (op, size)
        for i in range(size):
            self.table[(group, i)] = Barrier(op, count, self.hb.new_component())

    def known(self, c: int, key: Key) -> int:
        """The phases of the barrier that class c knows complete."""
        return at(self.hb.clocks[c], self.table[key].comp)

    def live_barrier(self, op: Operation, key: Key) -> bool:
        """Whether `key` may be used: not invalidated since its last init (MB8)."""
        b = self.table[key]
        if b.invalid is None:
            return True
        # rule: MB8
        self.report(
            error(
                op,
                f"{describe_key(key)} is used after copy.barrier_inval invalidated it: any "
                "mbarrier operation but init on an invalidated barrier is undefined",
                "initialize the group again first (copy.barrier_reinit "
                f"%{key[0].name_hint or 'bars'} arrivals N), or move the copy.barrier_inval "
                "after the barrier's last use",
                Related(b.invalid, "the barrier is invalidated here"),
            )
        )
        return False

    def inval_group(
        self, op: Operation, group: SSAValue, unfinished: Callable[[Key], list[Fill]]
    ) -> bool:
        """`copy.barrier_inval` (after its block barrier): each barrier of the group ends. Its
        open phase must be empty, and no TMA load may still land on it (MB10; `unfinished`:
        the loads on a barrier that not every running class knows complete)."""
        found = self.groups.get(group)
        if found is None:
            return True
        for i in range(found[1]):
            key = (group, i)
            b = self.table[key]
            if b.unknown:
                continue
            if not self.live_barrier(op, key):
                return False
            pending = unfinished(key)
            if b.arrivals or b.expected or b.delivered or pending:
                what = (
                    f"phase {b.closed} has {b.arrivals} of its {b.count} arrivals and "
                    f"{b.delivered} of {b.expected} bytes"
                    if b.arrivals or b.expected or b.delivered
                    else f"no thread has waited for the TMA load of phase {pending[0].phase}, "
                    "which may still land on it"
                )
                related = [Related(f.op, "the copy on it") for f in pending[:1]]
                related += [Related(a, "an arrival of the open phase") for a, _ in b.arrived]
                # rule: MB10
                self.report(
                    error(
                        op,
                        f"copy.barrier_inval invalidates {describe_key(key)} while it is in use: "
                        + what,
                        "invalidate a barrier only once its last phase has completed and been "
                        "waited on (copy.barrier_wait before the copy.barrier_inval)",
                        *related,
                    )
                )
                return False
            b.invalid = op
        return True

    def reinit_group(self, op: Operation, group: SSAValue, count: int) -> bool:
        """`copy.barrier_reinit` (before its block barrier): each barrier of the invalidated
        group starts again from phase 0, `count` arrivals a phase (MB9). Its phases go on
        from the next even one (parity 0), which every thread of the block knows the ones
        before of: its clock component stays the same."""
        found = self.groups.get(group)
        if found is None:
            return True
        for i in range(found[1]):
            key = (group, i)
            b = self.table[key]
            # rule: MB9
            if not b.unknown and b.invalid is None:
                self.report(
                    error(
                        op,
                        f"copy.barrier_reinit initializes {describe_key(key)}, which is still "
                        "valid: mbarrier.init on a valid barrier is undefined",
                        "invalidate the group first (copy.barrier_inval) once its last phase has "
                        "been waited on",
                        Related(b.init, "the barrier is initialized here"),
                    )
                )
                return False
        for i in range(found[1]):
            key = (group, i)
            old = self.table[key]
            start = old.closed + (old.closed & 1)
            for c in self.hb.live:
                raise_to(self.hb.clocks[c], old.comp, start)
            self.table[key] = Barrier(op, count, old.comp, closed=start)
        return True

    # ---- arrivals and bytes ----------------------------------------------------------------

    def after_last(self, b: Barrier, classes: tuple[int, ...]) -> None:
        """What `classes` bring to the open phase of `b` counts toward it in every schedule
        when each knows the phase before complete, or knows every arrival that completed it
        (`knows_arrivals`); else `HappensBefore.ordered` ends."""
        phase = b.closed
        if phase and self.hb.ordered:
            clocks = self.hb.clocks
            comp = b.comp
            for c in classes:
                clock = clocks[c]
                if at(clock, comp) < phase and not knows_arrivals(clock, b):
                    self.hb.ordered = False
                    return

    def arrive(
        self,
        op: Operation,
        key: Key,
        times: int,
        tx: int,
        contributors: tuple[int, ...],
        who: str,
        how: str | None = None,
        clock: Clock | None = None,
        rank: int | None = None,
    ) -> None:
        """`times` arrivals (and `tx` bytes expected) by `who`, whose classes `contributors`
        each have a thread among the arriving ones. `how` says how many arrivals one
        execution of the op makes (for the fix), when it is not one per thread. `clock`:
        what the arrivals release, where it is not all the contributors know (a relaxed
        arrival, `HappensBefore.relaxed_arrival`). `rank`: the CTA a release comes from, in
        a run that models the cluster's CTAs."""
        b = self.table[key]
        if b.unknown:
            return
        b.sources.update(contributors)
        b.phase_sources.update(contributors)
        if op in self.tracked and self.spills(op, b, contributors[0]):
            short_count(self.report, op, key, b, times)
            return
        b.expected += tx
        if tx:
            b.expecters.append(op)
        left = b.count - b.arrivals
        if times > left and op in self.tracked:
            # The count is wrong (a copy's arrivals are one per issuing thread), not the copy.
            # rule: P5
            self.report(
                error(
                    b.init,
                    f"{describe_key(key)} counts {b.count} arrivals a phase, but a cp.async copy "
                    f"on it makes {times} (one per issuing thread): phase {b.closed} completes "
                    f"with the first {left}, and the others count toward the next one",
                    f"{how}: initialize the barrier with arrivals {b.arrivals + times}",
                    Related(op, f"this copy makes {times} arrivals on phase {b.closed}"),
                )
            )
            b.unknown = True
            return
        if times > left:
            if how is None:
                how = (
                    "barrier_arrive is made by every thread that reaches it: put it under "
                    "`scf.if` on thread 0"
                )
            fix = f"arrive {left} times ({how}), or "
            # rule: P5
            self.report(
                error(
                    op,
                    f"{times} arrivals on {describe_key(key)}, whose phase {b.closed} awaits "
                    f"{left} more of its {b.count}",
                    "an arrival beyond the count completes the phase early and counts toward "
                    f"the next one: {fix}initialize the barrier with arrivals "
                    f"{b.arrivals + times}",
                    Related(b.init, "the barrier is initialized here"),
                )
            )
            b.unknown = True
            return
        self.after_last(b, contributors)
        b.arrivals += times
        released = [clock] if clock is not None else [self.hb.clocks[c] for c in contributors]
        for known in released:
            b.learn(known)
        b.arrived.append((op, who))
        if rank is not None:
            b.phase_ranks += [rank] * times
        closed = b.closed
        self.close(op, key, b, contributors[0] if op in self.tracked else None)
        if b.closed > closed and not b.last_expected:
            b.completer = (op, who)

    def arrive_drop(
        self,
        op: Operation,
        key: Key,
        times: int,
        tx: int,
        contributors: tuple[int, ...],
        who: str,
        how: str | None,
    ) -> None:
        """`times` arrivals that also take `times` off the count of every later phase
        (`mbarrier.arrive_drop`): the phase they arrive on still counts them."""
        b = self.table[key]
        if b.unknown:
            return
        b.dropped += times
        self.arrive(op, key, times, tx, contributors, who, how)

    def expect(self, op: Operation, key: Key, nbytes: int, contributors: tuple[int, ...]) -> None:
        """`copy.barrier_expect_tx`: the open phase expects `nbytes` more, with no arrival."""
        b = self.table[key]
        if b.unknown:
            return
        self.after_last(b, contributors)
        b.sources.update(contributors)
        b.phase_sources.update(contributors)
        b.expected += nbytes
        b.expecters.append(op)
        for c in contributors:
            b.learn(self.hb.clocks[c])

    def complete_tx(
        self, op: Operation, key: Key, nbytes: int, contributors: tuple[int, ...]
    ) -> None:
        """`copy.barrier_complete_tx`: the threads of `contributors` complete `nbytes` of the
        open phase (released to its observers, as an arrival's)."""
        b = self.table[key]
        if b.unknown:
            return
        self.after_last(b, contributors)
        b.sources.update(contributors)
        b.phase_sources.update(contributors)
        b.delivered += nbytes
        b.senders.append(op)
        for c in contributors:
            b.learn(self.hb.clocks[c])
        self.close(op, key, b)

    def deliver(self, op: Operation, key: Key, nbytes: int, issuer: int | None) -> int:
        """A copy's bytes go to the barrier's open phase (`issuer`: the class that issued
        it, None when its arrival brought its clock already); returns that phase."""
        b = self.table[key]
        phase = b.closed
        if b.unknown:
            return phase
        if issuer is not None and self.spills(op, b, issuer):
            short_bytes(self.report, op, key, b, nbytes)
            return phase
        if issuer is not None:
            self.after_last(b, (issuer,))
            b.sources.add(issuer)
            b.phase_sources.add(issuer)
        b.delivered += nbytes
        b.senders.append(op)
        if issuer is not None:
            b.learn(self.hb.clocks[issuer])
        self.close(op, key, b, issuer)
        return phase

    def spills(self, op: Operation, b: Barrier, c: int) -> bool:
        """Whether a copy of class c lands in a phase nothing has arrived on or expected
        yet, right after a copy c issued completed the phase before, c having learned
        nothing in between: the two were issued for one phase, which completed early."""
        closer = b.closed_by
        return (
            closer is not None
            and closer.cls == c
            and closer.op is not op
            and not (b.arrivals or b.expected or b.delivered)
            and not learned_since(closer.clock, self.hb.clocks[c], c)
        )

    def close(self, op: Operation, key: Key, b: Barrier, by: int | None = None) -> None:
        """The open phase completes once it has its arrivals and its bytes (after `op`, a
        copy of class `by` when a copy's bytes or arrivals complete it)."""
        if b.arrivals < b.count:
            return
        if b.delivered > b.expected:
            # The op that set the phase's bytes is wrong, not the copy that exceeds them.
            wrong = b.expecters[-1] if b.expecters else op
            where = "(copy.barrier_arrive_expect_tx)"
            related = []
            # The copy whose bytes went past the expectation (the last one, unless the
            # expectation came after every copy: a peer's bytes may land first).
            sender = op if wrong is not op else next(iter(b.senders[-1:]), None)
            if sender is not None and sender is not wrong:
                where = f"in this {wrong.name}"
                related.append(Related(sender, f"this brings the phase to {b.delivered} bytes"))
            related += [
                Related(a, "an arrival of the phase") for a, _ in b.arrived if a is not wrong
            ]
            # rule: P5
            self.report(
                error(
                    wrong,
                    f"phase {b.closed} of {describe_key(key)} receives {b.delivered} bytes but "
                    f"expects {b.expected}",
                    "its waiters are released before all the data has landed: expect "
                    f"{b.delivered} bytes {where}, or let the copies arrive themselves",
                    *related,
                )
            )
            b.unknown = True
            return
        if b.delivered != b.expected:
            return
        if self.completes_nocomplete(op, key, b):
            return
        phase = b.closed
        clock = raise_to(join(b.done, b.open) if b.done else b.open, b.comp, phase + 1)
        self.waits.overtaken(key, b, phase, clock)
        b.done = clock
        b.closed += 1
        b.closed_by = None
        b.completer = None
        if by is not None:
            b.closed_by = Closer(op, by, self.hb.clocks[by].copy(), tuple(b.expecters))
        b.last_expected = b.expected
        b.expecters = []
        b.senders = []
        b.phase_sources = set()
        b.arrivals = b.expected = b.delivered = 0
        b.open = []
        b.last_arrived, b.arrived = b.arrived, []
        b.phase_ranks = []
        b.count, b.dropped = b.count - b.dropped, 0
        if b.observed:
            b.observed = [o for o in b.observed if o.phase >= phase]
        self.hb.progress = True

    def completes_nocomplete(self, op: Operation, key: Key, b: Barrier) -> bool:
        """Whether `op`, an arrival with `nocomplete`, completes the phase: undefined (PTX),
        reported; the barrier is not followed further."""
        if getattr(op, "nocomplete", None) is None:
            return False
        related = [Related(b.init, f"initialized with arrivals {b.count}")]
        related += [Related(a, "an arrival of the phase") for a, _ in b.arrived if a is not op]
        # rule: MB11
        self.report(
            error(
                op,
                f"this nocomplete arrival completes phase {b.closed} of {describe_key(key)}: it "
                f"brings the phase's {b.count} arrivals with its bytes balanced, which "
                "mbarrier.arrive.noComplete must not do (undefined behaviour; a phase that "
                "only nocomplete arrivals can complete never completes, and its waiters hang)",
                "drop nocomplete from the arrival that may complete the phase (the last one), "
                "or initialize the barrier with more arrivals",
                *related,
            )
        )
        b.unknown = True
        return True

    # ---- the snapshot ----------------------------------------------------------------------

    def holders(self) -> list[Clock]:
        """The clocks of the phases: the open ones', then the last completed ones'."""
        barriers = self.table.values()
        return [b.open for b in barriers] + [b.done for b in barriers]

    def lag(self, holders: list[Clock]) -> tuple[int, ...]:
        """Whether each clock knows each barrier's last phase, the one before, or less (a
        class that falls further behind waits for a phase two ahead: the longest run shows
        it)."""
        return lags(holders, [(b.comp, b.closed) for b in self.table.values()], -SNAPSHOT_LAG)

    def snapshot(self) -> tuple[object, ...]:
        """The barriers, phases counted from each one's current phase."""
        return tuple(
            (b.arrivals, b.expected, b.delivered, b.unknown, len(b.waiting), b.count,
             b.dropped, b.invalid,
             tuple((o.op, o.cls, o.phase - b.closed, at(b.open, o.cls) >= o.stamp)
                   for o in b.observed))
            for b in self.table.values()
        )  # fmt: skip


def knows_arrivals(clock: Clock, b: Barrier) -> bool:
    """Whether `clock` knows what every arrival of the last completed phase of `b` knew
    (each its own stamp), though it did not observe the phase: a phase of arrivals alone,
    no bytes, completes with its last arrival, so every schedule completes it before what
    this clock's class does next. (A multicast ring's consumer that releases the slot in
    both CTAs of a pair: its arrival on the peer's empty barrier comes after the peer's
    consumer's release of the phase before, through the pair's own ring, though it never
    waits on the peer's barrier.) A phase with bytes completes when they land, which no
    issuer's clock says."""
    if b.last_expected:
        return False
    n, comp = len(clock), b.comp
    return all(v <= (clock[i] if i < n else 0) for i, v in enumerate(b.done) if i != comp)


# ---- a phase that completes before the copies issued for it (P5) --------------------------


def short_bytes(report: Report, op: Operation, key: Key, b: Barrier, nbytes: int) -> None:
    """A copy's bytes spill into the next phase (`spills`): the phase's expect_tx is
    short of the bytes its copies deliver (P5), reported there."""
    closer = b.closed_by
    assert closer is not None
    phase = b.closed - 1
    expected = b.last_expected
    total = expected + nbytes + bytes_after(op)
    wrong = closer.expecters[-1] if closer.expecters else op
    related = [Related(closer.op, f"this copy's bytes complete phase {phase}")]
    related.append(Related(op, f"this copy's {nbytes} bytes land in phase {phase + 1}"))
    if wrong is op:
        related = related[:1]
    # rule: P5
    report(
        error(
            wrong,
            f"phase {phase} of {describe_key(key)} expects {expected} bytes, but the copies "
            f"issued for it deliver {total}: the phase completes before the last of them "
            "lands, and its bytes go to the next phase",
            f"expect {total} bytes (the sum of the copies' boxes) in this "
            f"{wrong.name}, or issue the remaining copies on a phase that expects them",
            *related,
        )
    )
    b.unknown = True


def short_count(report: Report, op: Operation, key: Key, b: Barrier, times: int) -> None:
    """A tracked cp.async copy's arrivals spill into the next phase (`spills`): the
    barrier counts fewer arrivals than the phase's copies make (P5), reported at the
    barrier_init."""
    closer = b.closed_by
    assert closer is not None
    phase = b.closed - 1
    count = b.count
    total = count + times * (1 + copies_after(op))
    # rule: P5
    report(
        error(
            b.init,
            f"{describe_key(key)} counts {count} arrivals a phase, but the cp.async copies "
            f"issued for phase {phase} make {total} (one per issuing thread and copy): "
            f"the phase completes with the first {count}, before the copies that follow "
            "have landed, and their arrivals go to the next phase",
            f"initialize the barrier with arrivals {total} (one per thread that issues "
            "each cp.async copy of a phase)",
            Related(closer.op, f"these arrivals complete phase {phase}"),
            Related(op, f"these {times} arrivals land in phase {phase + 1}"),
        )
    )
    b.unknown = True


def issued_after(op: Operation) -> list[Operation]:
    """The copies that follow `op` in its block on the same barrier, up to the next other op
    on the barrier's group: issued for the same phase as `op`."""
    facts = CopyFacts.of(op)  # type: ignore[arg-type]
    same = []
    after = op.next_op
    while after is not None:
        if isinstance(after, copy.AsyncCopyOp | copy.Im2colLoadOp | copy.Gather4Op):
            other = CopyFacts.of(after)
            if (other.barrier, other.barrier_index) == (facts.barrier, facts.barrier_index):
                same.append(after)
                after = after.next_op
                continue
        if facts.barrier in after.operands:
            break
        after = after.next_op
    return same


def bytes_after(op: Operation) -> int:
    return sum(CopyFacts.of(c).bytes for c in issued_after(op))  # type: ignore[arg-type]


def copies_after(op: Operation) -> int:
    return len(issued_after(op))
