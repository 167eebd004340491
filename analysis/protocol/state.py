"""The protocol state of one CTA while the analysis walks its kernel: barrier phases, the
async copies in flight, the bulk and cp.async groups of each issuer, what threads touched,
named barriers and TMEM. Each transition checks the rules it can break (P1..P13) and hands
a finding to `report`.

The model (docs/design.md, "The protocol analysis"):
- Threads are in classes, each with a vector clock (`clocks`): outside roles, thread 0
  (which issues TMA copies, expect_tx and bulk groups) and the block's other threads; in a
  role, its first warp (which holds the role's elected thread) and its other warps. A clock
  says what its class knows happened before: a barrier phase it observed (directly or
  through others), another class's access, a wait_group's sync.
- A barrier of a group counts arrivals and transaction bytes per phase; a phase *closes*
  when it has `arrivals` arrivals and its bytes expected equal its bytes delivered (it then
  completes once its copies land). Copies deliver to the phase open when they are issued.
  A phase's clock joins its arrivals' and copies' clocks (and the phase before); a class
  that observes the phase (`barrier_wait`) joins it, and then knows the phase (the barrier's
  component of its clock).
- `barrier_wait` on parity q, by a class that knows k phases, waits for phase k when
  q == k % 2; otherwise it returns at once (the phase of parity q is the one before). A
  phase may complete only after every wait on the phase before it has returned (in
  happens-before order): else a waiter may miss the parity flip (the barrier runs two phases
  ahead).
- SMEM is a set of buffers (`copy.alloc_smem` results), each access a region: the buffer
  and its known leading indices (a ring slot); unknown indices may alias any slot, and a
  hazard through them is a warning, not an error. Each access, copy and TMA store read is a
  record with the stamps (`End`) a later conflicting access must know."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue

from analysis.protocol.clocks import Clock, End, Stamp, at, join, knows, raise_to
from analysis.protocol.findings import ProtocolFinding, Related, error, warning

Index = int | None
Key = tuple[SSAValue, int]
"""A barrier: its group (a `copy.barrier_init` result) and its index."""
Report = Callable[[ProtocolFinding], None]

SNAPSHOT_LAG = 1
"""How far behind a barrier's current phase a clock's knowledge of it is told apart in a
snapshot: a class that lags further has its wait two phases ahead reported in the run with
the most iterations (its fills are told apart by `seen` too)."""


class Deadlock(Exception):
    """The walk cannot go on: the kernel hangs at the op reported."""


@dataclass(frozen=True)
class Region:
    buffer: SSAValue
    index: tuple[Index, ...]

    def overlap(self, other: Region) -> str:
        """ "yes", "maybe" (an unknown index may alias) or "no"."""
        if self.buffer != other.buffer:
            return "no"
        maybe = False
        for a, b in zip(self.index, other.index, strict=False):
            if a is None or b is None:
                maybe = True
            elif a != b:
                return "no"
        return "maybe" if maybe else "yes"

    def show(self) -> str:
        name = f"%{self.buffer.name_hint}" if self.buffer.name_hint else "the SMEM buffer"
        if not self.index:
            return name
        return f"{name}[{', '.join('?' if i is None else str(i) for i in self.index)}]"


@dataclass
class Observation:
    """A class observed phase `phase` of a barrier by a wait (`op`, by `who`); its clock then
    read `stamp` in its own component. The next phase must complete after it."""

    cls: int
    phase: int
    stamp: int
    op: Operation
    who: str
    at_once: bool = False
    """A wait on the parity of a phase the class observed already: it returns at once only
    while the next phase has not completed."""


@dataclass
class Waiter:
    """Threads blocked in `op` until phase `target` of a barrier completes."""

    op: Operation
    who: str
    target: int


@dataclass
class Barrier:
    init: Operation
    count: int
    comp: int
    """Its component of the clocks: the phases a class knows complete."""
    closed: int = 0
    arrivals: int = 0
    expected: int = 0
    delivered: int = 0
    open: Clock = field(default_factory=list)
    """What the arrivals and copies of the open phase know (joined)."""
    done: Clock = field(default_factory=list)
    """The clock of the last completed phase (`closed - 1`): what its observers learn."""
    observed: list[Observation] = field(default_factory=list)
    waiting: list[Waiter] = field(default_factory=list)
    early_wait: tuple[Operation, int] | None = None
    """The last wait of a parity whose phase had completed already (returned at once)."""
    unknown: bool = False
    """An op on the group had an index or count the analysis could not follow."""
    arrived: list[tuple[Operation, str]] = field(default_factory=list)
    """The arrivals of the open phase, and who made them."""
    last_arrived: list[tuple[Operation, str]] = field(default_factory=list)
    """The arrivals of the phase that completed last."""
    dropped: int = 0
    """Arrivals the open phase's arrive_drops take off every later phase's count."""
    invalid: Operation | None = None
    """The copy.barrier_inval that ended the barrier (until a copy.barrier_reinit)."""


@dataclass
class Fill:
    """An async write of SMEM: a TMA load (on `key`, `phase`) or a cp.async copy, by `who`."""

    op: Operation
    region: Region
    key: Key | None
    phase: int
    end: End | None
    """What a reader must know: the phase that completes the load, the sync after the
    wait_group that completes the cp.async group (None while it is in flight)."""
    reported: bool = False
    """A race with it was reported: it is not reported again (one error per mistake)."""


@dataclass
class Access:
    op: Operation
    region: Region
    write: bool
    end: End
    """The stamps of the classes that made it."""
    who: str


@dataclass
class StoreRead:
    """A TMA store whose issuer waited its reads, at `end`; others must know `end`."""

    op: Operation
    region: Region
    end: End


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


@dataclass
class MapState:
    """A tensor map in global memory (`copy.tensormap_global`): the copies through it the
    analysis has not seen complete, and its last rewrite not yet made visible to the TMA
    unit (rules TU10-TU12)."""

    loads: dict[tuple[Operation, Key], End] = field(default_factory=dict)
    """Each load through the map (by op and barrier): what completes its latest issue (a
    later phase of one barrier completes after the earlier ones)."""
    stores: dict[Operation, Groups] = field(default_factory=dict)
    """Each store through the map, and the groups of its issuer (in flight while a group
    holds it)."""
    replaced: Operation | None = None
    """The last `tensormap_replace`, until a `tensormap_fence_acquire` after a release."""
    released: bool = False


@dataclass
class Generation:
    """The open generation of a named barrier: who arrived, with which thread count."""

    threads: int
    first: Operation
    arrived: int = 0
    clock: Clock = field(default_factory=list)
    members: list[tuple[object, Operation, int, str]] = field(default_factory=list)
    """(agent, op, threads it brings, who)."""


@dataclass
class NamedBarrier:
    comp: int
    completed: int = 0
    current: Generation | None = None
    gens: dict[int, Clock] = field(default_factory=dict)
    """The clocks of the generations completed last (what their syncers learn)."""
    last: list[tuple[Operation, str]] = field(default_factory=list)
    """The ops that met at the last completed generation."""


class Classes:
    """Which thread classes (0: thread 0, 1: the others) a set of the block's threads holds
    (outside roles)."""

    def __init__(self, mask: int | None):
        """`mask`: a bit set of thread ids, -1 for every thread, None for unknown threads."""
        self.members: tuple[int, ...] = (
            (0, 1) if mask is None else tuple(c for c, bits in ((0, 1), (1, ~1)) if mask & bits)
        )


def describe_key(key: Key) -> str:
    group, index = key
    name = f"%{group.name_hint}" if group.name_hint else "the barrier group"
    return f"barrier {index} of {name}"


def describe_map(tensor_map: SSAValue) -> str:
    return f"%{tensor_map.name_hint}" if tensor_map.name_hint else "of the copy"


def describe_ops(ops: list[tuple[Operation, str]]) -> str:
    return ", ".join(sorted({who for _, who in ops}))


class State:
    def __init__(self, report: Report):
        self.report = report
        self.width = 0
        self.clocks: dict[int, Clock] = {}
        self.class_names: dict[int, str] = {}
        """Each class, for messages: "thread 0 of the block", "the other warps of role 1"."""
        self.live: list[int] = []
        """The classes of the threads that run now (the block's, or the roles' that have not
        ended): a record every one of them knows can no longer race."""
        self.concurrent = False
        """Roles run: records outlive the syncs of the one who made them."""
        self.progress = False
        """A phase or generation completed, or a role ended: a blocked role may go on."""
        self.barriers: dict[Key, Barrier] = {}
        self.groups: dict[SSAValue, tuple[Operation, int]] = {}
        """Each barrier group: its barrier_init and its size."""
        self.fills: list[Fill] = []
        self.group_sets: list[Groups] = []
        """The groups of every issuer: their stores read, their cp.async copies write."""
        self.reads_done: list[StoreRead] = []
        self.pending_cap = 0
        """The largest `pending` of the kernel's wait_groups: read-done groups beyond it
        can no longer make a difference (`snapshot`)."""
        self.accesses: dict[tuple[object, ...], Access] = {}
        """By op, region, kind and classes: a later access of the same kind stands for an
        earlier one (its stamps are later)."""
        self.unfenced: list[Access] = []
        """Threads' SMEM writes no copy.fence_async_shared has yet made visible to the
        async proxy (TMA, tcgen05.cp)."""
        self.fenced: list[tuple[Access, End]] = []
        """Writes a role fenced, and the sync after its fence, not yet known to all."""
        self.named: dict[int, NamedBarrier] = {}
        self.tmem_live: dict[SSAValue, Operation] = {}
        self.tmem_loads: dict[SSAValue, Operation] = {}
        self.tmem_stores: dict[SSAValue, Operation] = {}
        self.maps: dict[SSAValue, MapState] = {}
        self.tracked: set[Operation] = set()
        """The mbarrier-tracked cp.async copies seen (their threads arrive on a barrier)."""

    # ---- clocks ------------------------------------------------------------------------

    def new_component(self) -> int:
        self.width += 1
        return self.width - 1

    def new_class(self, clock: Clock) -> int:
        c = self.new_component()
        self.clocks[c] = raise_to(clock.copy(), c, 0)
        return c

    def stamp(self, c: int) -> Stamp:
        clock = self.clocks[c]
        clock[c] += 1
        return (c, clock[c])

    def stamps(self, classes: tuple[int, ...]) -> End:
        return tuple(self.stamp(c) for c in classes)

    def sync(self, classes: tuple[int, ...]) -> Stamp:
        """The classes meet (a block or role barrier): each knows what any knew. Returns the
        stamp that says "after this sync"."""
        mark = self.stamp(classes[0])
        clocks = self.clocks
        joined = clocks[classes[0]]
        for c in classes[1:]:
            joined = join(joined, clocks[c])
        for c in classes:
            clocks[c] = joined.copy()
        return mark

    def knows_all(self, classes: tuple[int, ...], end: End | None) -> bool:
        return all(knows(self.clocks[c], end) for c in classes)

    def known(self, c: int, key: Key) -> int:
        """The phases of the barrier that class c knows complete."""
        return at(self.clocks[c], self.barriers[key].comp)

    def prune(self) -> None:
        """Drop the records every running class knows: nothing can race with them."""
        live = self.live
        if not live:
            return
        clocks = [self.clocks[c] for c in live]
        if self.accesses:
            self.accesses = {
                key: a
                for key, a in self.accesses.items()
                if not all(knows(k, a.end) for k in clocks)
            }
        if self.fills:
            self.fills = [f for f in self.fills if not self._known_by(f, clocks)]
        if self.reads_done:
            self.reads_done = [
                r for r in self.reads_done if not all(knows(k, r.end) for k in clocks)
            ]
        if self.fenced:
            self.fenced = [f for f in self.fenced if not all(knows(k, f[1]) for k in clocks)]
        for m in self.maps.values():
            m.loads = {
                k: end for k, end in m.loads.items() if not all(knows(c, end) for c in clocks)
            }

    def snapshot(self) -> tuple[object, ...]:
        """The state as far as what follows depends on it, phases counted from each
        barrier's current one (a lap of a ring advances them all: the snapshot repeats),
        each record with the clocks that know it (not the clocks' counts, which grow)."""
        barriers = list(self.barriers.values())
        named = list(self.named.values())
        holders = [self.clocks[c] for c in self.live]
        holders += [b.open for b in barriers] + [b.done for b in barriers]
        holders += [n.gens[n.completed - 1] for n in named if n.completed]
        holders += [n.current.clock for n in named if n.current]

        def seen(end: End | None) -> int:
            return sum(1 << i for i, h in enumerate(holders) if knows(h, end))

        def region(r: Region) -> tuple[object, ...]:
            return (r.buffer, r.index)

        # Whether a clock knows a barrier's last phase, the one before, or less (a class
        # that falls further behind waits for a phase two ahead: the longest run shows it).
        lag = tuple(
            max(-SNAPSHOT_LAG, at(h, b.comp) - b.closed) for h in holders for b in barriers
        )
        lag += tuple(
            max(-SNAPSHOT_LAG, at(h, n.comp) - n.completed) for h in holders for n in named
        )
        state_of_barriers = tuple(
            (b.arrivals, b.expected, b.delivered, b.unknown, len(b.waiting), b.count,
             b.dropped, b.invalid,
             tuple((o.op, o.cls, o.phase - b.closed, at(b.open, o.cls) >= o.stamp)
                   for o in b.observed))
            for b in barriers
        )  # fmt: skip
        fills = tuple(
            (f.op, region(f.region), f.key, f.phase - (self.barriers[f.key].closed if f.key else 0),
             seen(f.end))
            for f in self.fills
        )  # fmt: skip
        groups = tuple(
            (
                tuple((op, region(r)) for op, r in g.bulk_open),
                tuple(tuple((op, region(r)) for op, r in grp) for grp in g.bulk_fifo),
                min(g.bulk_read, self.pending_cap),
                tuple(f.op for f in g.cp_open),
                tuple(tuple(f.op for f in grp) for grp in g.cp_fifo),
            )
            for g in self.group_sets
        )
        generations = tuple(
            None
            if n.current is None
            else (n.current.threads, n.current.arrived, tuple(m[1] for m in n.current.members))
            for n in named
        )
        return (
            lag,
            state_of_barriers,
            fills,
            groups,
            tuple((a.op, region(a.region), a.write, seen(a.end)) for a in self.accesses.values()),
            tuple((a.op, region(a.region), a.end and tuple(c for c, _ in a.end))
                  for a in self.unfenced),
            tuple((a.op, region(a.region), seen(end)) for a, end in self.fenced),
            tuple((r.op, region(r.region), seen(r.end)) for r in self.reads_done),
            generations,
            tuple(self.tmem_live),
            tuple(self.tmem_stores),
            tuple(
                (v, m.replaced, m.released, tuple((k, seen(e)) for k, e in m.loads.items()),
                 tuple(m.stores))
                for v, m in self.maps.items()
            ),
        )  # fmt: skip

    # ---- barriers ----------------------------------------------------------------------

    def init_group(self, op: Operation, group: SSAValue, size: int, count: int) -> None:
        self.groups[group] = (op, size)
        for i in range(size):
            self.barriers[(group, i)] = Barrier(op, count, self.new_component())

    def barrier(self, key: Key) -> Barrier:
        return self.barriers[key]

    def arrive(
        self,
        op: Operation,
        key: Key,
        times: int,
        tx: int,
        contributors: tuple[int, ...],
        who: str,
        how: str | None = None,
    ) -> None:
        """`times` arrivals (and `tx` bytes expected) by `who`, whose classes `contributors`
        each have a thread among the arriving ones. `how` says how many arrivals one
        execution of the op makes (for the fix), when it is not one per thread."""
        b = self.barriers[key]
        if b.unknown:
            return
        b.expected += tx
        left = b.count - b.arrivals
        # rule: P5
        if times > left:
            if how is None:
                how = (
                    "barrier_arrive is made by every thread that reaches it: put it under "
                    "`scf.if` on thread 0"
                )
            fix = f"arrive {left} times ({how}), or "
            if op in self.tracked:
                fix = f"{how}: "
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
        b.arrivals += times
        for c in contributors:
            b.open = join(b.open, self.clocks[c])
        b.arrived.append((op, who))
        self._close(op, key, b)

    def deliver(self, op: Operation, key: Key, nbytes: int, issuer: int | None) -> int:
        """A copy's bytes go to the barrier's open phase (`issuer`: the class that issued
        it, None when its arrival brought its clock already); returns that phase."""
        b = self.barriers[key]
        phase = b.closed
        if b.unknown:
            return phase
        b.delivered += nbytes
        if issuer is not None:
            b.open = join(b.open, self.clocks[issuer])
        self._close(op, key, b)
        return phase

    def _close(self, op: Operation, key: Key, b: Barrier) -> None:
        if b.arrivals < b.count:
            return
        # rule: P5
        if b.delivered > b.expected:
            self.report(
                error(
                    op,
                    f"phase {b.closed} of {describe_key(key)} receives {b.delivered} bytes but "
                    f"expects {b.expected}",
                    "its waiters are released before all the data has landed: expect "
                    f"{b.delivered} bytes (copy.barrier_arrive_expect_tx), or let the copies "
                    "arrive themselves",
                    *(Related(a, "an arrival of the phase") for a, _ in b.arrived),
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
        self._overtaken(key, b, phase, clock)
        b.done = clock
        b.closed += 1
        b.arrivals = b.expected = b.delivered = 0
        b.open = []
        b.last_arrived, b.arrived = b.arrived, []
        b.count, b.dropped = b.count - b.dropped, 0
        if b.observed:
            b.observed = [o for o in b.observed if o.phase >= phase]
        self.progress = True

    def _overtaken(self, key: Key, b: Barrier, phase: int, clock: Clock) -> None:
        """Phase `phase` completes (with `clock`): every wait that observes the phase before
        must have returned before, in happens-before order; else a waiter can miss that
        phase and take this one's parity flip for it (P6)."""
        if phase == 0 or not (b.waiting or b.observed):
            return
        late: list[tuple[Operation, str]] = [
            (w.op, w.who) for w in b.waiting if w.target == phase - 1
        ]
        overtaken = [
            o for o in b.observed if o.phase == phase - 1 and at(clock, o.cls) < o.stamp
        ]
        for o in overtaken:
            if o.at_once:
                self.names_next(o.op, key, (phase - 1) % 2, phase, o.who)
        late += [(o.op, o.who) for o in overtaken]
        if not late:
            return
        wait_op, who = late[0]
        threads = who
        if overtaken and not b.waiting:
            threads = self.class_names.get(overtaken[0].cls, who)
        arrivers = describe_ops(b.arrived) or "its copies"
        if threads.startswith("the other warps of "):
            fix = (
                f"let only the first warp of {who} run this loop (scf.if on %t / 32 == 0 "
                "around it: the other warps wait for nothing there), or synchronize "
                f"{who}'s warps after this wait (its barrier: copy.fence_async_shared or "
                "copy.wait_group), so that every warp that waits has observed phase "
                f"{phase - 1} before phase {phase} can complete"
            )
        elif {w for _, w in b.arrived} <= {who}:
            fix = (
                f"synchronize {who} between this wait and the arrivals of phase {phase} (a "
                "block or role barrier: copy.wait_group or copy.fence_async_shared), so that "
                f"all its threads have observed phase {phase - 1} before phase {phase} can "
                "complete"
            )
        else:
            fix = (
                f"throttle {arrivers}: before it arrives on phase {phase} of "
                f"{describe_key(key)}, make it wait (copy.barrier_wait) on a barrier that {who} "
                "arrives on after this wait (a consumer-release barrier per slot)"
            )
        # rule: P6
        self.report(
            error(
                wait_op,
                f"{describe_key(key)} may be two phases ahead of this wait: phase {phase} can "
                f"complete before {threads} observe phase {phase - 1} here (nothing orders the "
                f"arrivals of phase {phase} after this wait), and parity {(phase - 1) % 2} then "
                f"names phase {phase + 1}",
                fix,
                *(Related(a, f"{w} arrives on phase {phase} here") for a, w in b.arrived),
            )
        )
        raise Deadlock

    def wait_targets(
        self,
        op: Operation,
        key: Key,
        parity: int,
        observers: tuple[int, ...],
        who: str,
        role: bool = False,
    ) -> list[tuple[int, int]]:
        """For a wait on `parity` by the classes `observers`: the classes that wait for a
        phase, and the phase (the others return at once). In a role, a wait on the parity
        of the phase before returns at once only while the next phase has not completed:
        that phase must not complete before it (it would then wait for the one after)."""
        b = self.barriers[key]
        targets = []
        comp = b.comp
        clocks = self.clocks
        for c in observers:
            clock = clocks[c]
            k = clock[comp] if comp < len(clock) else 0
            if k % 2 != parity:
                if role and b.closed > k:
                    self.names_next(op, key, parity, k, who)
                if b.closed > k:
                    b.early_wait = (op, parity)
                elif role and k > 0:
                    clock[c] += 1
                    b.observed.append(Observation(c, k - 1, clock[c], op, who, True))
                continue
            if b.closed > k + 1:
                self.check_ahead(op, key, parity, k, who)
            targets.append((c, k))
        return targets

    def names_next(self, op: Operation, key: Key, parity: int, k: int, who: str) -> None:
        """A wait on the parity of phase k - 1 (observed) once phase k has completed: it
        waits for phase k + 1 (P6)."""
        size = self.groups[key[0]][1]
        # rule: P6
        self.report(
            error(
                op,
                f"this wait on parity {parity} can wait for phase {k + 1} of {describe_key(key)}"
                f": {who} has observed "
                + (f"its phases up to {k - 1}, of this parity" if k else "no phase of it yet")
                + f", and the wait returns at once only while phase {k} has not completed "
                f"(then parity {parity} names phase {k + 1})",
                f"wait on parity {k % 2} for phase {k}: flip the parity every lap of the ring "
                f"of {size} barriers, (i / {size}) mod 2 (arith.divui, arith.remui, arith.cmpi ne)",
            )
        )
        raise Deadlock

    def check_ahead(self, op: Operation, key: Key, parity: int, k: int, who: str) -> None:
        b = self.barriers[key]
        # rule: P6
        if b.closed > k + 1:
            others = {w for _, w in b.last_arrived} - {who}
            related = [
                Related(a, f"{w} arrives on phase {k + 1} here")
                for a, w in (b.last_arrived if others and b.closed == k + 2 else [])
            ]
            fix = (
                "a barrier must not run more than one phase ahead of its waiters: add a "
                f"copy.barrier_wait for phase {k} (parity {parity}) between the arrivals "
                f"of phase {k} and those of phase {k + 1}"
            )
            if others:
                fix = (
                    f"throttle {', '.join(sorted(others))}: before it arrives on phase {k + 1} "
                    f"of {describe_key(key)}, make it wait (copy.barrier_wait) on a barrier that "
                    f"{who} arrives on after this wait observes phase {k} (a consumer-release "
                    "barrier per slot)"
                )
            self.report(
                error(
                    op,
                    f"{describe_key(key)} may be two phases ahead of this wait: phases {k} "
                    f"and {k + 1} can both complete before it, and parity {parity} then "
                    f"names phase {k + 2}, which nothing completes",
                    fix,
                    *related,
                )
            )
            raise Deadlock

    def observe(
        self, op: Operation, key: Key, targets: list[tuple[int, int]], who: str, role: bool
    ) -> None:
        """The classes of `targets` return from the wait: they know the barrier's last phase.
        A role's observation is remembered: the next phase must complete after it. (Outside
        roles, the block barriers of the wait_groups keep the block's threads within a phase
        of each other, docs/design.md; the block's waits are not checked so.)"""
        b = self.barriers[key]
        if b.unknown:
            return
        for c, k in targets:
            if b.closed > k + 1:
                self.check_ahead(op, key, (k % 2), k, who)
            clock = join(self.clocks[c], b.done)
            self.clocks[c] = clock
            clock[c] += 1
            if role:
                b.observed.append(Observation(c, k, clock[c], op, who))
        if self.concurrent:
            self.prune()
        elif self.fills:
            self.prune_fills()

    def prune_fills(self) -> None:
        clocks = [self.clocks[c] for c in self.live]
        known = self._known_by
        self.fills = [f for f in self.fills if not known(f, clocks)]

    def hang(
        self, op: Operation, key: Key, k: int, others: list[Related], concurrent: bool
    ) -> None:
        """The wait `op` for phase k never returns: report why (P5 or P6)."""
        b = self.barriers[key]
        related = [Related(b.init, f"initialized with arrivals {b.count}")]
        related += [Related(a, f"an arrival on phase {k}") for a, _ in b.arrived]
        related += others
        # rule: P5
        if b.arrivals == b.count:
            self.report(
                error(
                    op,
                    f"this wait never returns: phase {k} of {describe_key(key)} expects "
                    f"{b.expected} bytes but its copies deliver {b.delivered}",
                    f"expect {b.delivered} bytes, or issue the copies that deliver the other "
                    f"{b.expected - b.delivered} before the wait",
                    *related,
                )
            )
            raise Deadlock
        copies = [a for a, _ in b.arrived if a in self.tracked]
        # rule: P5
        if copies and b.arrivals < b.count:
            self.report(
                error(
                    op,
                    f"this wait never returns: phase {k} of {describe_key(key)} counts "
                    f"{b.count} arrivals, but its cp.async copies make {b.arrivals} (one per "
                    "issuing thread and copy) and nothing else arrives",
                    f"initialize the barrier with arrivals {b.arrivals} (one per thread that "
                    "issues each cp.async copy of a phase), or arrive on it "
                    f"{b.count - b.arrivals} more times",
                    *related,
                )
            )
            raise Deadlock
        tail = "nothing arrives while it waits"
        fix = (
            f"arrive on {describe_key(key)} ({b.count - b.arrivals} more) before the "
            f"wait, or wait on parity {(k + 1) % 2} (the phase before, complete at once)"
        )
        if concurrent:
            tail = "nothing else arrives: every other role is blocked or has ended"
        if others:
            blocked = "; ".join(r.text.replace(" is blocked here, at", " waits at") for r in others)
            fix = (
                f"arrive on {describe_key(key)} ({b.count - b.arrivals} more) before the wait, "
                f"from a role that does not wait for this one first ({blocked}): let one of "
                "the roles arrive before it waits"
            )
        # rule: P6
        self.report(
            error(
                op,
                f"this wait never returns: phase {k} of {describe_key(key)} has {b.arrivals} "
                f"of its {b.count} arrivals when the wait is reached, and {tail}",
                fix,
                *related,
            )
        )
        raise Deadlock

    # ---- mbarrier breadth: arrive_drop, expect_tx, complete_tx, nocomplete, inval --------

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
        b = self.barriers[key]
        if b.unknown:
            return
        b.dropped += times
        self.arrive(op, key, times, tx, contributors, who, how)

    def expect(self, op: Operation, key: Key, nbytes: int, contributors: tuple[int, ...]) -> None:
        """`copy.barrier_expect_tx`: the open phase expects `nbytes` more, with no arrival."""
        b = self.barriers[key]
        if b.unknown:
            return
        b.expected += nbytes
        for c in contributors:
            b.open = join(b.open, self.clocks[c])

    def complete_tx(
        self, op: Operation, key: Key, nbytes: int, contributors: tuple[int, ...]
    ) -> None:
        """`copy.barrier_complete_tx`: the threads of `contributors` complete `nbytes` of the
        open phase (released to its observers, as an arrival's)."""
        b = self.barriers[key]
        if b.unknown:
            return
        b.delivered += nbytes
        for c in contributors:
            b.open = join(b.open, self.clocks[c])
        self._close(op, key, b)

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

    def live_barrier(self, op: Operation, key: Key) -> bool:
        """Whether `key` may be used: not invalidated since its last init (MB8)."""
        b = self.barriers[key]
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

    def inval_group(self, op: Operation, group: SSAValue) -> bool:
        """`copy.barrier_inval` (after its block barrier): each barrier of the group ends. Its
        open phase must be empty, and no TMA load may still land on it (MB10)."""
        found = self.groups.get(group)
        if found is None:
            return True
        for i in range(found[1]):
            key = (group, i)
            b = self.barriers[key]
            if b.unknown:
                continue
            if not self.live_barrier(op, key):
                return False
            live = tuple(self.live)
            pending = [f for f in self.fills if f.key == key and not self.fill_known(f, live)]
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
            b = self.barriers[key]
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
            old = self.barriers[key]
            start = old.closed + (old.closed & 1)
            for c in self.live:
                raise_to(self.clocks[c], old.comp, start)
            self.barriers[key] = Barrier(op, count, old.comp, closed=start)
        return True

    # ---- named barriers ----------------------------------------------------------------

    def named_arrive(
        self,
        op: Operation,
        barrier: int,
        threads: int,
        brings: int,
        classes: tuple[int, ...],
        agent: object,
        who: str,
        free: int | None,
    ) -> tuple[NamedBarrier, int]:
        """`who` (its classes, `brings` threads) arrives at named barrier `barrier`, counting
        `threads`: the generation it joins (P13)."""
        nb = self.named.get(barrier)
        if nb is None:
            nb = self.named[barrier] = NamedBarrier(self.new_component())
        cur = nb.current
        g = nb.completed
        if cur is None:
            previous = ((nb.comp, g),)
            # rule: P13
            if g > 0 and not self.knows_all(classes, previous):
                own = ""
                if free is not None and who not in {w for _, w in nb.last}:
                    own = (
                        f"give {who} a barrier of its own if it should not meet "
                        f"{describe_ops(nb.last)} (copy.named_barrier_sync {free}, {threads}), "
                        "or "
                    )
                self.report(
                    error(
                        op,
                        f"{who}'s arrival at named barrier {barrier} may count toward its "
                        f"generation {g - 1} ({describe_ops(nb.last)} met there): nothing "
                        "orders it after that generation completes, so their warps can meet "
                        "at one generation",
                        f"{own}make {who} wait for generation {g - 1} first: "
                        "copy.named_barrier_sync instead of copy.named_barrier_arrive there, or "
                        "a copy.barrier_wait on a barrier the others arrive on after it",
                        *(Related(o, f"{w} meets at generation {g - 1} here") for o, w in nb.last),
                    )
                )
                raise Deadlock
            cur = nb.current = Generation(threads, op)
        # rule: P13
        if threads != cur.threads:
            self.report(
                error(
                    op,
                    f"named barrier {barrier} counts {threads} threads here but "
                    f"{cur.threads} where {describe_ops([(o, w) for _, o, _, w in cur.members])} "
                    "arrived at the same generation: all who meet at a generation must give "
                    "the same count",
                    "count the threads of all the roles that meet here on every op of this "
                    f"generation: copy.named_barrier_sync {barrier}, {cur.arrived + brings}",
                    Related(cur.first, f"{cur.threads} threads here"),
                )
            )
            raise Deadlock
        # rule: P13
        if any(m[0] is agent for m in cur.members):
            self.report(
                error(
                    op,
                    f"{who} arrives twice at generation {g} of named barrier {barrier} "
                    f"({cur.arrived + brings} of its {threads} threads would be {who}'s)",
                    f"make {who} wait for the generation (copy.named_barrier_sync) before it "
                    "arrives again, or count only the threads that meet here: "
                    f"copy.named_barrier_arrive {barrier}, {cur.arrived + brings}",
                    Related(cur.members[0][1], f"{who} arrives here first"),
                )
            )
            raise Deadlock
        # rule: P13
        if cur.arrived + brings > threads:
            meeting = [(o, w) for _, o, _, w in cur.members] + [(op, who)]
            self.report(
                error(
                    op,
                    f"{cur.arrived + brings} threads meet at generation {g} of named barrier "
                    f"{barrier} ({describe_ops(meeting)}), which counts {threads}: the extra "
                    "threads are undefined behaviour (they may complete it, or the next one)",
                    f"count {cur.arrived + brings} threads on every op that meets here "
                    f"(copy.named_barrier_sync {barrier}, {cur.arrived + brings}), or use "
                    "another barrier id for the roles that should not meet",
                    *(Related(o, f"{w} arrives here") for o, w in meeting[:-1]),
                )
            )
            raise Deadlock
        cur.arrived += brings
        for c in classes:
            cur.clock = join(cur.clock, self.clocks[c])
        cur.members.append((agent, op, brings, who))
        if cur.arrived == cur.threads:
            nb.gens[g] = raise_to(cur.clock, nb.comp, g + 1)
            nb.gens.pop(g - 4, None)
            nb.completed = g + 1
            nb.last = [(o, w) for _, o, _, w in cur.members]
            nb.current = None
            self.progress = True
        return nb, g

    def named_stuck(self, op: Operation, barrier: int, others: list[Related]) -> None:
        nb = self.named[barrier]
        cur = nb.current
        assert cur is not None
        meeting = [(o, w) for _, o, _, w in cur.members]
        # rule: P13
        self.report(
            error(
                op,
                f"this named barrier never completes: generation {nb.completed} of named "
                f"barrier {barrier} counts {cur.threads} threads, and {cur.arrived} "
                f"({describe_ops(meeting)}) arrive before every role is blocked or has ended",
                f"count the {cur.arrived} threads that meet here (copy.named_barrier_sync "
                f"{barrier}, {cur.arrived}), or make the missing roles reach named barrier "
                f"{barrier}",
                *others,
            )
        )
        raise Deadlock

    # ---- SMEM --------------------------------------------------------------------------

    def _known_by(self, fill: Fill, clocks: list[Clock]) -> bool:
        if fill.key is not None and self.barriers[fill.key].unknown:
            return True
        end = fill.end
        return end is not None and all(knows(k, end) for k in clocks)

    def fill_known(self, fill: Fill, classes: tuple[int, ...]) -> bool:
        return self._known_by(fill, [self.clocks[c] for c in classes])

    def _cp_in_flight(self) -> list[Fill]:
        return [
            f
            for g in self.group_sets
            if g.cp_open or g.cp_fifo
            for f in (*g.cp_open, *(f for grp in g.cp_fifo for f in grp))
        ]

    def read(self, op: Operation, region: Region, readers: tuple[int, ...], reader: str) -> None:
        """`reader` (threads, a TMA store, tcgen05.cp) of the classes `readers` reads
        `region`."""
        for fill in [*self.fills, *self._cp_in_flight()]:
            overlap = region.overlap(fill.region)
            if overlap == "no" or fill.reported or self.fill_known(fill, readers):
                continue
            self._unfinished(op, region, fill, reader, overlap)
            fill.reported = True
            return

    def _unfinished(self, op: Operation, region: Region, fill: Fill, reader: str, how: str) -> None:
        filled = "it" if fill.region == region else fill.region.show()
        what = f"{reader} reads {region.show()} before the copy that fills {filled} completes"
        related = [Related(fill.op, "the copy that fills it")]
        if fill.key is None:
            fix = (
                "commit the copy (copy.commit_group cp_async) and wait for its group "
                "(copy.wait_group cp_async 0) before the read"
            )
            if fill.end is not None:
                fix = (
                    "the role that issued the copy waited for it, but nothing orders this read "
                    "after that wait: arrive on a barrier after the wait_group and wait on it "
                    "before the read"
                )
        else:
            b = self.barriers[fill.key]
            parity = fill.phase % 2
            fix = (
                f"wait on {describe_key(fill.key)} for phase {fill.phase} "
                f"(copy.barrier_wait with parity {parity}) before the read"
            )
            if b.early_wait is not None:
                wait_op, q = b.early_wait
                related.append(
                    Related(
                        wait_op,
                        f"this wait on parity {q} returns at once: the phase of parity {q} "
                        f"had completed already; the copy arrives on phase {fill.phase}, "
                        f"parity {parity}",
                    )
                )
                size = self.groups[fill.key[0]][1]
                fix = (
                    f"wait on parity {parity}: flip the parity every lap of the ring of {size} "
                    f"barriers, (i / {size}) mod 2 (arith.divui, arith.remui, arith.cmpi ne)"
                )
        if how == "maybe":
            # rule: P1
            maybe = f"cannot prove that {reader} reads {region.show()} only after the copy that "
            maybe += f"fills {filled} completes"
            self.report(warning(op, maybe, fix, *related))
            return
        # rule: P1
        self.report(error(op, what, fix, *related))

    def refill(
        self,
        op: Operation,
        region: Region,
        writer: str,
        issuers: tuple[int, ...],
        by_threads: bool = False,
    ) -> None:
        """An async copy, or threads (`by_threads`), `writer` of the classes `issuers`, is
        about to write `region`. (Races between threads are not the copy protocol's: threads
        after threads are not checked.)"""
        self._in_flight_reads(op, region, writer, issuers)
        for access in () if by_threads else self.accesses.values():
            overlap = region.overlap(access.region)
            if overlap == "no" or self.knows_all(issuers, access.end):
                continue
            how = "write" if access.write else "read"
            message = (
                f"{writer} writes {region.show()} while other threads may still access it "
                f"(threads {how} it before, with no block barrier in between)"
            )
            fix = (
                "put a block barrier between the threads' accesses and the copy "
                "(copy.fence_async_shared after thread writes, gpu.barrier after reads)"
            )
            if self.concurrent:
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
            # rule: P3
            self.report(
                (warning if overlap == "maybe" else error)(
                    op, message, fix, Related(access.op, f"the threads {how} it here")
                )
            )
            return
        for fill in [*self.fills, *self._cp_in_flight()]:
            overlap = region.overlap(fill.region)
            if overlap == "no" or fill.reported or self.fill_known(fill, issuers):
                continue
            fill.reported = True
            # rule: P3
            self.report(
                (warning if overlap == "maybe" else error)(
                    op,
                    f"{writer} writes {region.show()} while an earlier copy may still be "
                    "writing it",
                    "wait for the earlier copy first (copy.barrier_wait on its phase, or "
                    "copy.wait_group for its group)"
                    + (
                        "; when another role reads the slot, wait on the barrier it arrives on "
                        "once it is done with the slot (copy.barrier_wait on a consumer-release "
                        "barrier)"
                        if self.concurrent
                        else ""
                    ),
                    Related(fill.op, "the earlier copy"),
                )
            )
            return

    def _in_flight_reads(
        self, op: Operation, region: Region, writer: str, issuers: tuple[int, ...]
    ) -> None:
        pending = [
            (store, source, None)
            for g in self.group_sets
            if g.bulk_open or g.bulk_fifo
            for store, source in (*g.bulk_open, *(s for group in g.bulk_fifo for s in group))
        ]
        if self.reads_done:
            pending += [
                (r.op, r.region, r.end)
                for r in self.reads_done
                if not self.knows_all(issuers, r.end)
            ]
        for store, source, end in pending:
            overlap = region.overlap(source)
            if overlap == "no":
                continue
            fix = (
                "commit the store and wait until it has read its source "
                "(copy.commit_group bulk, then copy.wait_group bulk 0 read_only, or a "
                "count that covers its group) before the write"
            )
            if end is not None:
                fix = (
                    "the role that issued the store waited for its reads, but nothing orders "
                    "this write after that wait: let that role arrive on a barrier after its "
                    "copy.wait_group (a consumer-release barrier) and wait on it before the write"
                )
            # rule: P2
            self.report(
                (warning if overlap == "maybe" else error)(
                    op,
                    f"{writer} writes {region.show()} while a TMA store from it may still be "
                    "reading it",
                    fix,
                    Related(store, "the TMA store that reads it"),
                )
            )
            return

    def thread_access(
        self, op: Operation, region: Region, write: bool, members: tuple[int, ...], who: str
    ) -> None:
        if write:
            self.refill(op, region, "threads' store", members, by_threads=True)
        else:
            self.read(op, region, members, "threads' load")
        access = Access(op, region, write, self.stamps(members), who)
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

    def tma_load(
        self,
        op: Operation,
        region: Region,
        key: Key,
        expect: int,
        nbytes: int,
        issuer: int,
        who: str,
    ) -> End:
        """The load; returns what completes it (the phase its barrier closes)."""
        self.refill(op, region, "the TMA load", (issuer,))
        self.stamp(issuer)
        if expect:
            self.arrive(op, key, 1, expect, (issuer,), who)
        phase = self.deliver(op, key, nbytes, None if expect else issuer)
        b = self.barriers[key]
        # A later phase of the same barrier is known only after this one: the new fill of
        # the region stands for an earlier one on that barrier.
        if self.concurrent:
            self.fills = [f for f in self.fills if f.key != key or f.region != region]
        end = ((b.comp, phase + 1),)
        self.fills.append(Fill(op, region, key, phase, end))
        return end

    def peer_write(
        self,
        op: Operation,
        region: Region,
        key: Key,
        nbytes: int,
        issuers: tuple[int, ...],
        writer: str,
    ) -> None:
        """A DSMEM write (`copy.peer_store`, `copy.peer_copy`) of the classes `issuers`, as
        this CTA receives it: every CTA of the cluster runs the same program and sends to a
        permutation of the ranks, so at this point a peer writes `region` of this CTA and
        completes `nbytes` on barrier `key` (docs/design.md, "Distributed shared memory").
        The writes of one phase are parts of one transfer: they do not race each other."""
        b = self.barriers[key]
        phase = b.closed
        ours = [f for f in self.fills if f.key == key and f.phase == phase and f.op is op]
        if not ours:
            self.refill(op, region, writer, issuers)
        self.stamps(issuers)
        if not b.unknown:
            b.delivered += nbytes
            for c in issuers:
                b.open = join(b.open, self.clocks[c])
            self._close(op, key, b)
        if not any(f.region == region for f in ours):
            self.fills.append(Fill(op, region, key, phase, ((b.comp, phase + 1),)))

    def cp_async(
        self, op: Operation, region: Region, groups: Groups, issuers: tuple[int, ...]
    ) -> None:
        self.refill(op, region, "the cp.async copy", issuers)
        self.stamps(issuers)
        groups.cp_open.append(Fill(op, region, None, 0, None))

    def tracked_cp_async(
        self,
        op: Operation,
        region: Region,
        key: Key,
        times: int,
        issuers: tuple[int, ...],
        who: str,
        how: str | None,
    ) -> None:
        """An mbarrier-tracked cp.async copy (`cp.async.mbarrier.arrive.noinc`): the threads
        of the classes `issuers` write `region`, and each of the `times` threads arrives once
        on `key` when its chunks have landed, so the phase its arrivals complete completes
        the copy: a reader must observe that phase, as for a TMA load. (The arrivals are
        counted when the copy is issued: the phase cannot complete before them.)"""
        self.refill(op, region, "the cp.async copy", issuers)
        self.tracked.add(op)
        b = self.barriers[key]
        phase = b.closed
        self.arrive(op, key, times, 0, issuers, who, how)
        if self.concurrent:
            self.fills = [f for f in self.fills if f.key != key or f.region != region]
        self.fills.append(Fill(op, region, key, phase, ((b.comp, phase + 1),)))

    def tma_store(self, op: Operation, region: Region, groups: Groups, issuer: int) -> None:
        self.read(op, region, (issuer,), "the TMA store")
        self.async_read(op, region, "the TMA store", (issuer,))
        self.stamp(issuer)
        groups.bulk_open.append((op, region))

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
            if overlap == "no" or self.knows_all(issuers, end):
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

    def fence(self, classes: tuple[int, ...], everyone: bool) -> None:
        """`classes` fence their writes and meet (`everyone`: the whole block)."""
        mark = self.sync(classes)
        if everyone:
            self.unfenced = []
            self.fenced = []
        else:
            mine = set(classes)
            kept = []
            for access in self.unfenced:
                if {c for c, _ in access.end} <= mine:
                    self.fenced = [
                        f for f in self.fenced
                        if (f[0].op, f[0].region) != (access.op, access.region)
                    ]
                    self.fenced.append((access, (mark,)))
                else:
                    kept.append(access)
            self.unfenced = kept
        self.after_sync(everyone)

    def after_sync(self, everyone: bool) -> None:
        """A block barrier (`everyone`) or a role barrier: drop what every thread knows."""
        if everyone and not self.concurrent:
            self.accesses = {}
            self.fenced = []
            self.reads_done = []
            if self.fills:
                self.prune_fills()
            return
        self.prune()

    # ---- groups --------------------------------------------------------------------------

    def commit(self, groups: Groups, bulk: bool) -> None:
        if bulk:
            groups.bulk_fifo.append(groups.bulk_open)
            groups.bulk_open = []
        else:
            groups.cp_fifo.append(groups.cp_open)
            groups.cp_open = []

    def wait_group(
        self,
        groups: Groups,
        bulk: bool,
        pending: int,
        read_only: bool,
        classes: tuple[int, ...],
        everyone: bool,
    ) -> None:
        """The issuer of `groups` waits for all but `pending` groups, then its `classes` meet
        (`everyone`: a block barrier)."""
        mark = self.sync(classes)
        if bulk:
            total = groups.bulk_read + len(groups.bulk_fifo)
            done = max(0, total - pending)
            reads = max(0, done - groups.bulk_read)
            if self.concurrent:
                done_now = [
                    StoreRead(op, r, (mark,)) for g in groups.bulk_fifo[:reads] for op, r in g
                ]
                # The same store's later reads, waited later by the same role, stand for
                # its earlier ones.
                later = {(r.op, r.region) for r in done_now}
                self.reads_done = [r for r in self.reads_done if (r.op, r.region) not in later]
                self.reads_done += done_now
            del groups.bulk_fifo[:reads]
            groups.bulk_read = max(groups.bulk_read, done)
            if not read_only:
                groups.bulk_read -= done
        else:
            keep = max(0, len(groups.cp_fifo) - pending)
            if self.concurrent:
                for g in groups.cp_fifo[:keep]:
                    for fill in g:
                        fill.end = (mark,)
                        self.fills.append(fill)
            groups.cp_fifo = groups.cp_fifo[keep:]
        self.after_sync(everyone)

    # ---- tensor maps in global memory ------------------------------------------------

    def map_state(self, tensor_map: SSAValue) -> MapState:
        return self.maps.setdefault(tensor_map, MapState())

    def map_copy(
        self,
        op: Operation,
        tensor_map: SSAValue,
        key: Key | None,
        end: End | None,
        groups: Groups,
    ) -> None:
        """A copy through `tensor_map` (a load on barrier `key`, completed at `end`, or a
        store of `groups`): the map must have been acquired since its last rewrite."""
        m = self.map_state(tensor_map)
        if m.replaced is not None:
            how = (
                "after tensormap_fence_release but with no tensormap_fence_acquire since"
                if m.released
                else "with neither tensormap_fence_release nor tensormap_fence_acquire since"
            )
            # rule: TU11
            self.report(
                error(
                    op,
                    f"Expected the map {describe_map(tensor_map)} to be acquired after it was "
                    f"rewritten, got a copy through it {how}: the TMA unit may read the old map",
                    "add copy.tensormap_fence_release after the rewrites and "
                    f"copy.tensormap_fence_acquire {describe_map(tensor_map)} before the copy",
                    Related(m.replaced, "the map is rewritten here"),
                )
            )
            m.replaced = None
        if key is not None and end is not None:
            m.loads.pop((op, key), None)
            m.loads[(op, key)] = end
        elif key is None:
            m.stores[op] = groups

    def map_replace(self, op: Operation, tensor_map: SSAValue, issuer: int) -> None:
        """`issuer` rewrites the map: no copy through it may still be in flight (TU10)."""
        m = self.map_state(tensor_map)
        clock = self.clocks[issuer]
        for (copy_op, key), end in m.loads.items():
            if self.barriers[key].unknown or knows(clock, end):
                continue
            # rule: TU10
            self.report(
                error(
                    op,
                    f"Expected the copies through the map {describe_map(tensor_map)} to be "
                    "complete before it is rewritten, got a load through it that may still "
                    f"be in flight (its {describe_key(key)} phase not observed)",
                    f"wait on {describe_key(key)} (copy.barrier_wait) before the "
                    "copy.tensormap_replace, or on a barrier its consumers arrive on after "
                    "they waited for it",
                    Related(copy_op, "the load through the map"),
                )
            )
            break
        for store, groups in m.stores.items():
            if not any(o is store for o, _ in groups.bulk_open) and not any(
                o is store for grp in groups.bulk_fifo for o, _ in grp
            ):
                continue
            # rule: TU10
            self.report(
                error(
                    op,
                    f"Expected the copies through the map {describe_map(tensor_map)} to be "
                    "complete before it is rewritten, got a store through it that may still "
                    "be in flight (its bulk group not waited)",
                    "commit the store (copy.commit_group bulk) and wait for it "
                    "(copy.wait_group bulk 0) before the copy.tensormap_replace",
                    Related(store, "the store through the map"),
                )
            )
            break
        m.loads = {}
        m.stores = {}
        m.replaced = op
        m.released = False

    def map_release(self, tensor_map: SSAValue) -> None:
        m = self.map_state(tensor_map)
        if m.replaced is not None:
            m.released = True

    def map_acquire(self, op: Operation, tensor_map: SSAValue) -> None:
        m = self.map_state(tensor_map)
        if m.replaced is None:
            return
        # rule: TU12
        if not m.released:
            self.report(
                error(
                    op,
                    f"Expected a tensormap_fence_release of {describe_map(tensor_map)} between "
                    "its rewrite and this acquire, got none: the acquire orders nothing",
                    "add copy.tensormap_fence_release after the copy.tensormap_replace ops "
                    "and before the acquire",
                    Related(m.replaced, "the map is rewritten here"),
                )
            )
        m.replaced = None

    # ---- TMEM --------------------------------------------------------------------------

    def tmem_alloc(self, op: Operation, tmem: SSAValue) -> None:
        self.tmem_live[tmem] = op

    def tmem_dealloc(self, op: Operation, tmem: SSAValue) -> None:
        self._tmem_stores_done(op, tmem, "frees")
        self.tmem_live.pop(tmem, None)

    def tmem_load(self, op: Operation, tmem: SSAValue) -> None:
        self._tmem_stores_done(op, tmem, "reads")
        for result in op.results:
            self.tmem_loads[result] = op

    def _tmem_stores_done(self, op: Operation, tmem: SSAValue, verb: str) -> None:
        store = self.tmem_stores.get(tmem)
        if store is None:
            return
        # rule: P12
        self.report(
            error(
                op,
                f"this op {verb} TMEM that a tcgen05.st may still be writing",
                "wait for the store first: copy.tmem_wait store",
                Related(store, "the store"),
            )
        )
        del self.tmem_stores[tmem]

    def tmem_store(self, op: Operation, tmem: SSAValue) -> None:
        self.tmem_stores[tmem] = op

    def tmem_wait(self, load: bool) -> None:
        if load:
            self.tmem_loads.clear()
        else:
            self.tmem_stores.clear()

    def use(self, op: Operation) -> None:
        """`op` uses its operands: none may be a tcgen05.ld result not yet waited for."""
        for operand in op.operands:
            load = self.tmem_loads.get(operand)
            if load is None:
                continue
            # rule: P11
            self.report(
                error(
                    op,
                    "this op uses the registers of a tcgen05.ld before they are loaded",
                    "wait for the load first: copy.tmem_wait load",
                    Related(load, "the load"),
                )
            )
            del self.tmem_loads[operand]

    # ---- the join and the exit -----------------------------------------------------------

    def role_end(self, op: Operation, groups: Groups) -> None:
        """A role ends at the join: the block's wait_groups after it are issued by thread 0,
        not by the role's elected thread, so the role must leave no group in flight (P7)."""
        who = groups.who
        if groups.bulk_open:
            # rule: P7
            self.report(
                error(
                    op,
                    f"{who} ends with a TMA store it never committed: after the join, the "
                    "block's bulk groups are thread 0's, which do not hold it",
                    f"commit it and wait for it in {who} (copy.commit_group bulk, then "
                    "copy.wait_group bulk 0 read_only) before the role's end",
                    Related(groups.bulk_open[0][0], "the store"),
                )
            )
        unread = [s for group in groups.bulk_fifo for s, _ in group]
        if unread:
            # rule: P7
            self.report(
                error(
                    op,
                    f"{who} ends while a TMA store it committed may still read its SMEM: "
                    "after the join, the block's wait_group is issued by thread 0 and does "
                    f"not wait for {who}'s groups",
                    f"wait for the store's group in {who} (copy.wait_group bulk 0 read_only) "
                    "before the role's end",
                    Related(unread[0], "the store"),
                )
            )
        cp = [f for f in groups.cp_open + [f for g in groups.cp_fifo for f in g] if not f.reported]
        if cp:
            fix = "copy.commit_group cp_async, then " if groups.cp_open else ""
            # rule: P7
            self.report(
                error(
                    op,
                    f"{who} ends while a cp.async copy of its threads may still be writing "
                    "its SMEM: after the join, no wait_group waits for it",
                    f"{fix}copy.wait_group cp_async 0 in {who} before the role's end",
                    Related(cp[0].op, "the copy"),
                )
            )

    def exit(self, op: Operation, groups: Groups, classes: tuple[int, ...]) -> None:
        """Nothing may be in flight when the kernel returns (its SMEM is freed)."""
        unread = [s for s, _ in (*groups.bulk_open, *(s for g in groups.bulk_fifo for s in g))]
        if groups.bulk_open:
            # rule: P7
            self.report(
                error(
                    op,
                    "the kernel returns with a TMA store that was never committed",
                    "commit it (copy.commit_group bulk) and wait for it (copy.wait_group "
                    "bulk 0) before the return",
                    Related(groups.bulk_open[0][0], "the store"),
                )
            )
        elif unread:
            # rule: P7
            self.report(
                error(
                    op,
                    "the kernel returns while a committed TMA store may still read its SMEM",
                    "wait for the store's group (copy.wait_group bulk 0) before the return",
                    Related(unread[0], "the store"),
                )
            )
        cp = [f for f in groups.cp_open + [f for g in groups.cp_fifo for f in g] if not f.reported]
        if cp:
            fix = "copy.commit_group cp_async, then " if groups.cp_open else ""
            # rule: P7
            self.report(
                error(
                    op,
                    "the kernel returns while a cp.async copy may still be writing its SMEM",
                    f"{fix}copy.wait_group cp_async 0 before the return",
                    Related(cp[0].op, "the copy"),
                )
            )
        for fill in self.fills:
            if fill.reported or fill.key is None:
                continue
            if not any(self.fill_known(fill, (c,)) for c in classes):
                what = "cp.async copy" if fill.op in self.tracked else "TMA load"
                # rule: P7
                self.report(
                    error(
                        op,
                        f"the kernel returns while a {what} may still be writing its SMEM",
                        f"copy.barrier_wait on {describe_key(fill.key)} for phase "
                        f"{fill.phase} (parity {fill.phase % 2}) before the return",
                        Related(fill.op, f"the {what.split()[-1]}"),
                    )
                )
                break
        for store in self.tmem_stores.values():
            # rule: P12
            self.report(
                error(
                    op,
                    "the kernel returns while a tcgen05.st may still be writing TMEM",
                    "copy.tmem_wait store before the return",
                    Related(store, "the store"),
                )
            )
        for tmem, alloc in self.tmem_live.items():
            # rule: P8
            self.report(
                error(
                    op,
                    "the kernel returns without freeing its TMEM",
                    f"copy.tmem_dealloc {'%' + tmem.name_hint if tmem.name_hint else 'it'} "
                    "before the return (TMEM stays allocated to the SM otherwise)",
                    Related(alloc, "the allocation"),
                )
            )
