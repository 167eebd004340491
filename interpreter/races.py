"""Happens-before and the SMEM access log: what makes a race a race.

Every agent (a CTA's threads outside roles, or one role of `copy.warp_specialize`) has a
vector clock: a component per agent, per mbarrier of the CTA and per group set (an agent's
bulk and cp.async groups). An access is stamped with an epoch, one component and a time:

- a thread access with its agent's (the agent's time advances at each release: an arrival,
  a named barrier, the end of a role);
- an async copy's write with its completion's: the phase of the mbarrier that tracks it
  (`(barrier, phase + 1)`: what a wait on that phase acquires), or its group's retirement
  (`(group set, n)`: what `wait_group` acquires);
- a TMA store's read of SMEM with its group's read retirement (`wait_group read`).

Access A happens before B when B's clock has reached A's epoch, and, for a thread access A
of another agent's (or of a copy its own elected thread issues), when B knows A's warp
released it: a release carries, per warp of its agent (`Agent.warps`), only the accesses
that warp published to the releasing threads. Between threads of one agent, when A's thread
has published its accesses to the agent's threads since (each thread's count in
`Agent.published`: a block or named barrier they all meet publishes every thread's, a wait
on a barrier phase publishes those of the threads that arrived on, or completed bytes of,
that phase). Two accesses of the same SMEM byte race when one writes, they are by different
threads or proxies, and neither happens before the other. Threads' writes that the async
proxy reads must also be fenced (`fence_async_shared`) after them (P4). Races are
reported with the static analysis's rule ids, at the op of the later access, with the
earlier one as the conflicting op: a read by threads or a tensor-core op (wgmma, tcgen05.mma,
tcgen05.cp) before the async write that fills it completes is P1, a write while an async read
(a TMA store's, a peer copy's, a tensor-core op's) may go on P2, any other P3.

The log keeps each access until a later write that happens after it covers its bytes; so a
pipeline keeps about one record per stage and buffer (a buffer only read, again and again,
keeps every read: a later write must be checked against each).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

Clock = dict[int, int]
Epoch = tuple[int, int]
WARP = 32


def join(into: Clock, other: Clock) -> None:
    for component, time in other.items():
        if into.get(component, 0) < time:
            into[component] = time


def sees(clock: Clock, epoch: Epoch) -> bool:
    return clock.get(epoch[0], 0) >= epoch[1]


@dataclass(eq=False)
class Access:
    """One op's accesses of SMEM bytes."""

    write: bool
    asynchronous: bool
    """By the async proxy (a TMA or bulk copy, a cp.async copy)."""
    offsets: np.ndarray
    """The bytes, as offsets in the CTA's SMEM in `unit`s, sorted and unique."""
    threads: np.ndarray | None
    """For a thread access: the thread of each byte (same order); None for a copy."""
    epoch: Epoch
    agent: Any
    """The agent that made it (that issued it, for a copy)."""
    published: np.ndarray | None
    """For a thread access: each byte's thread's `Agent.published` count when it made it."""
    op: Any
    what: str
    fenced: bool = False
    tensor_core: bool = False
    """A tensor-core op's read (wgmma, tcgen05.mma, tcgen05.cp): async, but one before the
    copy that fills its SMEM completes is P1, a read too early, as the analysis has it."""
    elected: bool = False
    """An async access that the agent's elected thread issues (a TMA or bulk copy, not a
    cp.async copy, which each thread issues)."""
    unit: int = 1
    """Bytes per offset: 1 for threads' accesses; 4 or 16 for a copy's (the chunks a cp.async
    or a TMA copy moves are whole 4- or 16-byte units), which keeps its sets small."""
    lo: int = field(init=False)
    hi: int = field(init=False)
    published_all: bool = field(init=False, default=False)
    """For a thread access: every byte's thread has published it to the agent since (the
    counts only grow): no later access of the agent's threads races with it."""
    coarser: dict[int, np.ndarray] = field(init=False, default_factory=dict)
    """`in_units` of each coarser unit asked for, kept: an access stays in the log."""

    def __post_init__(self) -> None:
        u = self.unit
        self.lo = int(self.offsets[0]) * u if self.offsets.size else 0
        self.hi = (int(self.offsets[-1]) + 1) * u if self.offsets.size else 0

    def in_units(self, unit: int) -> np.ndarray:
        """Its offsets in units of `unit` (coarser than its own, or its own)."""
        if unit == self.unit:
            return self.offsets
        got = self.coarser.get(unit)
        if got is None:
            got = self.coarser[unit] = np.unique(self.offsets * self.unit // unit)
        return got


@dataclass(frozen=True)
class Race:
    rule: str
    op: Any
    other: Any
    message: str


def rule_of(earlier: Access, later: Access) -> str:
    if earlier.asynchronous and earlier.write and not later.write:
        if not later.asynchronous or later.tensor_core:
            return "P1"
    if earlier.asynchronous and not earlier.write and later.write:
        return "P2"  # (by threads or a copy: SMEM rewritten while an async read may go on)
    return "P3"


def covers(later: Access, earlier: Access) -> bool:
    """Whether `later` accesses every byte `earlier` does (units nest: 1 | 4 | 16)."""
    eu, lu = earlier.unit, later.unit
    if lu >= eu:
        needed = earlier.offsets * eu // lu
    else:
        needed = (earlier.offsets[:, None] * (eu // lu) + np.arange(eu // lu)).reshape(-1)
    # Both are sorted: `needed` must lie within `later`'s range, and each of its offsets be
    # one of `later`'s (all of the range's when `later` has every offset in it).
    have = later.offsets
    if needed.size == 0:
        return True
    if have.size == 0:
        return False
    first, last = int(have[0]), int(have[-1])
    if int(needed[0]) < first or int(needed[-1]) > last:
        return False
    if last - first + 1 == have.size:
        return True
    return bool((have[np.searchsorted(have, needed)] == needed).all())


def intersect(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The offsets two sorted, unique offset arrays share, and where each is in `a` and in
    `b` (`np.intersect1d(a, b, assume_unique=True, return_indices=True)`, without sorting
    both again)."""
    if not a.size or not b.size:
        empty = np.empty(0, np.int64)
        return a[:0], empty, empty
    at = np.searchsorted(b, a)
    at[at == b.size] = 0
    shared = b[at] == a
    ei = np.flatnonzero(shared)
    return a[ei], ei, at[ei]


class AccessLog:
    """The SMEM accesses of one CTA that a later access may still race with."""

    def __init__(self) -> None:
        self.records: list[Access] = []

    def check(self, access: Access, clock: Clock) -> list[Race]:
        """The races of `access`, made with `clock` (the accessing agent's, or a copy's at
        its issue), against the log; then logs it."""
        races: list[Race] = []
        superseded: list[Access] = []
        for earlier in self.records:
            if earlier.hi <= access.lo or access.hi <= earlier.lo:
                continue
            if not (earlier.write or access.write):
                continue
            race = self._conflict(earlier, access, clock)
            if race is not None:
                races.append(race)
            elif access.write and covers(access, earlier):
                superseded.append(earlier)  # a later access races with this write first
        if superseded:
            dropped = set(map(id, superseded))
            self.records = [r for r in self.records if id(r) not in dropped]
        self.records.append(access)
        return races

    def _conflict(self, earlier: Access, later: Access, clock: Clock) -> Race | None:
        same = earlier.agent is later.agent and not earlier.asynchronous and not later.asynchronous
        unordered = not same and not sees(clock, earlier.epoch)
        unfenced = (
            later.asynchronous and not earlier.asynchronous and earlier.write and not earlier.fenced
        )
        lagging: list[int] = []
        if not (same or unordered) and earlier.threads is not None:
            if earlier.agent is not later.agent:
                # Another agent, which learned of this agent's time through a release made
                # by some of its warps: the other warps' accesses only as far as they were
                # published to those warps (`Agent.release`).
                lagging = earlier.agent.lagging(clock, earlier.epoch[1])
            elif later.elected:
                # A copy the agent's elected thread issues: the other warps' accesses
                # only once published to its warp.
                lagging = earlier.agent.unpublished(earlier.epoch[1])
        if not (same or unordered or unfenced or lagging):
            return None  # (ordered, and fenced where it must be: no byte they share races)
        if same:
            if earlier.published_all:
                return None
            assert earlier.threads is not None
            assert earlier.published is not None
            if (earlier.agent.published[earlier.threads] > earlier.published).all():
                earlier.published_all = True
                return None
        unit = max(earlier.unit, later.unit)
        common, ei, li = intersect(earlier.in_units(unit), later.in_units(unit))
        if common.size == 0:
            return None
        common = common * unit
        if same:
            # Threads of one agent: each thread's accesses are in order; another thread's
            # only once its thread has published them to the agent since.
            assert later.threads is not None
            writers = earlier.threads[ei]
            published = earlier.agent.published[writers] > earlier.published[ei]
            racing = (writers != later.threads[li]) & ~published
            if not np.any(racing):
                return None
            k = int(np.argmax(racing))
            return Race(
                "P3",
                later.op,
                earlier.op,
                f"{later.what} SMEM byte {int(common[k])} (thread {int(later.threads[li][k])}) "
                f"that {earlier.what} (thread {int(writers[k])}) too, with no barrier or "
                "wait between them that orders the two threads",
            )
        if lagging and not unordered:
            # the bytes of the threads' access in the units both share (`ei` indexes units)
            assert earlier.threads is not None
            shared = np.isin(earlier.offsets * earlier.unit // unit, common // unit)
            threads, offsets = earlier.threads[shared], earlier.offsets[shared] * earlier.unit
            racing = np.isin(threads // WARP, lagging)
            if np.any(racing):
                k = int(np.argmax(racing))
                return Race(
                    rule_of(earlier, later),
                    later.op,
                    earlier.op,
                    f"{later.what} SMEM byte {int(offsets[k])} that {earlier.what} (thread "
                    f"{int(threads[k])}), and "
                    + (
                        "the arrival that orders the two was made by other warps: no barrier "
                        f"of warp {int(threads[k]) // WARP} with the arriving threads comes "
                        "between its access and the arrival"
                        if earlier.agent is not later.agent
                        else "the copy is issued by the elected thread, which no barrier "
                        f"met warp {int(threads[k]) // WARP} at since that access"
                    ),
                )
            if not unfenced:
                return None
        if unordered:
            byte = int(common[0])
            return Race(
                rule_of(earlier, later),
                later.op,
                earlier.op,
                f"{later.what} SMEM byte {byte} that {earlier.what}, and nothing orders the "
                "two (no wait, barrier or group retirement between them)",
            )
        if unfenced:
            return Race(
                "P4",
                later.op,
                earlier.op,
                f"{later.what} SMEM byte {int(common[0])} that {earlier.what}, with no "
                "fence_async_shared between the threads' write and the async proxy's access",
            )
        return None

    def fence(self, agent: Any) -> None:
        """`fence_async_shared` by `agent`: its threads' writes so far are fenced."""
        for record in self.records:
            if record.agent is agent and not record.asynchronous:
                record.fenced = True
