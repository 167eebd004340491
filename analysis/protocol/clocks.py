"""Vector clocks: what happens before what between the thread classes of concurrent roles.

A component is a thread class (the block's thread 0 and its other threads; a role's first
warp and its other warps), a barrier (its value: the phases of it known complete) or a named
barrier (the generations known complete). A class's clock says, per component, how far it
knows that component's history: an event stamped `(c, v)` (class c's v-th event) happens
before whatever a class does once its clock has `clock[c] >= v`.

An `End` is what a reader must know before it may touch what a record guards: the stamps
of the accesses, the phase that completes a TMA load, the sync after a wait_group.

`HappensBefore` keeps the clocks of one CTA's thread classes while the analysis walks its
kernel: every part of the protocol state (`state`) stamps, syncs and compares through it.

- Threads are in classes, each with a vector clock: outside roles, thread 0 (which issues
  TMA copies, expect_tx and bulk groups) and the block's other threads; in a role, its
  first warp (which holds the role's elected thread) and its other warps. A clock says what
  its class knows happened before: a barrier phase it observed (directly or through
  others), another class's access, a wait_group's sync."""

from __future__ import annotations

Clock = list[int]
Stamp = tuple[int, int]
End = tuple[Stamp, ...]


def join(a: Clock, b: Clock) -> Clock:
    """The clock that knows what either knows (a new list)."""
    if not a:
        return b.copy()
    # (comprehensions, not `map(max, ...)`: a call of `max` per component costs 4x more)
    if len(a) == len(b):
        return [x if x > y else y for x, y in zip(a, b, strict=True)]
    if len(a) < len(b):
        a, b = b, a
    return [*[x if x > y else y for x, y in zip(a, b, strict=False)], *a[len(b) :]]


def join_all(clocks: list[Clock]) -> Clock:
    """The clock that knows what any of `clocks` knows (a new list, unless there is one):
    `join` of them all, the same list once."""
    if len(clocks) == 1:
        return clocks[0]
    first, *rest = clocks
    joined = first
    for c in rest:
        if c is not first:
            joined = join(joined, c)
    return joined if joined is not first else first.copy()


def meet(a: Clock, b: Clock) -> Clock:
    """The clock that knows what both know (a new list)."""
    return [x if x < y else y for x, y in zip(a, b, strict=False)]


def at(clock: Clock, component: int) -> int:
    return clock[component] if component < len(clock) else 0


def knows(clock: Clock, end: End | None) -> bool:
    """Whether `clock` knows every stamp of `end` (None: not ended yet)."""
    if end is None:
        return False
    n = len(clock)
    for c, v in end:
        if c >= n or clock[c] < v:
            return False
    return True


def common(clocks: list[Clock]) -> Clock | None:
    """What every clock of `clocks` knows (None for no clocks: then everything is):
    `known_to(common(clocks), end)` is `all(knows(k, end) for k in clocks)`, at the cost of
    one `knows` per end (`meet` of them all)."""
    if not clocks:
        return None
    if len(clocks) == 1:
        return clocks[0]
    first, *rest = clocks
    met = first
    for c in rest:
        met = meet(met, c)
    return met


class Meet:
    """`common(clocks)` of several clocks, computed a component at a time as `knows` reads
    it: pruning the records of a cluster's CTAs asks for the few components their ends
    name, of clocks as wide as every CTA's classes and barriers together."""

    __slots__ = ("clocks", "n", "known")

    def __init__(self, clocks: list[Clock]):
        self.clocks = clocks
        self.n = min(map(len, clocks))
        self.known: dict[int, int] = {}

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, c: int) -> int:
        got = self.known.get(c)
        if got is None:
            got = self.known[c] = min(k[c] for k in self.clocks)
        return got


def lazy_common(clocks: list[Clock]) -> Clock | None:
    """`common(clocks)` for `known_to` to read: of two clocks or more, a `Meet`, which
    computes only the components the ends it is asked about name."""
    if len(clocks) < 2:
        return common(clocks)
    return Meet(clocks)  # type: ignore[return-value]


def known_to(clock: Clock | None, end: End | None) -> bool:
    """`knows`, with None (`common` of no clocks) knowing everything."""
    return clock is None or knows(clock, end)


def lags(holders: list[Clock], marks: list[tuple[int, int]], floor: int) -> tuple[int, ...]:
    """Per clock of `holders` and per (component, count) of `marks`: how far the clock knows
    the component from that count (`at(clock, component) - count`, at least `floor`)."""
    found: list[int] = []
    for h in holders:
        n = len(h)
        found += [d if (d := (h[c] if c < n else 0) - k) > floor else floor for c, k in marks]
    return tuple(found)


def raise_to(clock: Clock, component: int, value: int) -> Clock:
    """`clock` with `component` at least `value` (in place, padded as needed)."""
    if component >= len(clock):
        clock.extend([0] * (component + 1 - len(clock)))
    if clock[component] < value:
        clock[component] = value
    return clock


class HappensBefore:
    """The thread classes of one CTA and their clocks (a component per class, barrier and
    named barrier), which classes run now, whether roles run at once, and whether a blocked
    role may go on."""

    def __init__(self) -> None:
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
        self.ordered = True
        """Whether every arrival, expected byte and delivered byte on a barrier phase, and
        every arrival at a named barrier's generation, came from a class that knew the phase
        (generation) before it complete: then each counts toward the same phase in every
        schedule of the roles, every role's walk is the same in each, and so are the checks,
        which compare clocks (`analysis.run_choices` runs the other priority orders only
        when a run was not so)."""
        self.relaxed: dict[object, Stamp] = {}
        """Per relaxed arrival (op and class), its own component and how many times it was
        made: what a waiter learns of it is that it happened, not what its class did."""

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

    def relaxed_arrival(self, key: object, c: int) -> tuple[Clock, Stamp]:
        """An arrival of class `c` that releases nothing (`.relaxed`): the clock it gives the
        phase and its stamp. The clock holds what had completed before it, which stays
        complete: the barrier phases and named-barrier generations `c` knows complete (the
        copies they completed landed), the tensor-core reads a wgmma wait retired; and its
        own stamp (a component of its own: a waiter learns that it happened). It drops every
        class component: the threads' own accesses, which only a release orders for
        another CTA (a load may still be reading, a store not yet visible)."""
        comp, count = self.relaxed.get(key) or (self.new_component(), 0)
        stamp = self.relaxed[key] = (comp, count + 1)
        clocks = self.clocks
        clock = [0 if k in clocks else v for k, v in enumerate(clocks[c])]
        return raise_to(clock, *stamp), stamp

    def knows_all(self, classes: tuple[int, ...], end: End | None) -> bool:
        return all(knows(self.clocks[c], end) for c in classes)

    def live_clocks(self) -> list[Clock]:
        """The clocks of the classes that run now."""
        return [self.clocks[c] for c in self.live]
