"""Vector clocks: what happens before what between the thread classes of concurrent roles.

A component is a thread class (the block's thread 0 and its other threads; a role's first
warp and its other warps), a barrier (its value: the phases of it known complete) or a named
barrier (the generations known complete). A class's clock says, per component, how far it
knows that component's history: an event stamped `(c, v)` (class c's v-th event) happens
before whatever a class does once its clock has `clock[c] >= v`.

An `End` is what a reader must know before it may touch what a record guards: the stamps
of the accesses, the phase that completes a TMA load, the sync after a wait_group."""

from __future__ import annotations

Clock = list[int]
Stamp = tuple[int, int]
End = tuple[Stamp, ...]


def join(a: Clock, b: Clock) -> Clock:
    """The clock that knows what either knows (a new list)."""
    if not a:
        return b.copy()
    if len(a) == len(b):
        return list(map(max, a, b))
    if len(a) < len(b):
        a, b = b, a
    return [*map(max, a[: len(b)], b), *a[len(b) :]]


def meet(a: Clock, b: Clock) -> Clock:
    """The clock that knows what both know (a new list)."""
    n = min(len(a), len(b))
    return list(map(min, a[:n], b[:n]))


def at(clock: Clock, component: int) -> int:
    return clock[component] if component < len(clock) else 0


def knows(clock: Clock, end: End | None) -> bool:
    """Whether `clock` knows every stamp of `end` (None: not ended yet)."""
    if end is None:
        return False
    n = len(clock)
    return all(c < n and clock[c] >= v for c, v in end)


def raise_to(clock: Clock, component: int, value: int) -> Clock:
    """`clock` with `component` at least `value` (in place, padded as needed)."""
    if component >= len(clock):
        clock.extend([0] * (component + 1 - len(clock)))
    if clock[component] < value:
        clock[component] = value
    return clock
