"""The cut argument of the driver's trip-count choices (`choices.Deferred`): a run of the
longest count with whole laps cut out of every walk of its loops at once stands for the
shorter counts those cuts leave, and, the cuts made the other way, for the longer counts
(a K loop walked once per tile of a persistent tile loop, whose runs are not each other's
prefixes)."""

from __future__ import annotations

from bisect import bisect_left
from math import lcm
from typing import TYPE_CHECKING

from xdsl.ir import Operation

from analysis.protocol.facts import Kernel
from analysis.protocol.run import Walk, steady_lap
from analysis.protocol.steps import Heads

if TYPE_CHECKING:
    from analysis.protocol.choices import Deferred


def cut(
    deferred: Deferred, walk: Walk, kernel: Kernel, longest: int | None = None
) -> tuple[int, set[int]] | None:
    """For a run of the longest (its loops of the choice walked once, or more: a K loop
    in a tile loop, once per tile): the least option n from which on run n is this run
    with its laps cut, and the laps P (None: no such cut).

    A cut removes, in every walk of one loop of the choice (`at`, CTA 0's), the
    iterations from a head h to a head h + m L where the state is the same (a steady
    lap, P divides L): from head h on, run T - m L then does what run T does from head
    h + m L, to its end, every other walk included. The state holds where every other
    agent is, each loop it is in counted from `at`'s iteration (`Walk.snapshot`), so
    each moves as many iterations in the loop it is in at `at`'s depth, and stays in
    the same iterations of the loops around it: a cut is made only at a head where that
    loop is one of the choice for every agent in one (`Walk.beside`), and so that every
    walk of the choice, of every agent in every CTA, loses m L iterations once, each
    walk other than `at`'s must hold exactly one cut (on the clock of heads, `Heads.
    times`). The cut holds no read of n that differs between the two runs: every head
    in it comes before the first head of any walk of the choice that overlaps it from
    which that walk sees its end (its last `tail` iterations, its ring). What the rest
    of the kernel reads of n is the same for the counts from `shape.start` on with the
    period the laps keep to. Only the counts T - m L are cut from T: the other options
    below it run. The same cuts, made the other way, add laps: run T + m L (`longest`:
    T, the longest by default)."""
    longest = deferred.longest if longest is None else longest
    loops = deferred.choice.loops
    if not deferred.spaced or not all(deferred.choice.counts(loop) for loop in loops):
        return None
    every: list[tuple[int, Heads]] = []  # each walk of the choice, with its tail
    for loop in deferred.choice.loops:
        trips = deferred.choice.trips(loop, longest)
        shape = kernel.loops[loop]
        for heads in walk.heads.get(loop, []) + walk.peer_heads.get(loop, []):
            if len(heads.times) != trips or heads.closed is None:
                return None
            every.append((max(shape.depth, shape.lap.tail), heads))
    for at in deferred.choice.loops:
        found = cuts_at(deferred, walk, kernel, at, every, longest)
        if found is not None:
            return found
    return None


def cuts_at(
    deferred: Deferred,
    walk: Walk,
    kernel: Kernel,
    at: Operation,
    every: list[tuple[int, Heads]],
    longest: int,
) -> tuple[int, set[int]] | None:
    """`cut` at the heads of `at`'s walks (`every`: each walk of the choice, with its
    tail) in the run of `longest`."""
    walks = walk.heads.get(at, [])
    if not walks:
        return None
    shape = deferred.choice.cut or deferred.choice.shape
    looped = kernel.loops[at]
    ring = max(looped.depth, looped.lap.tail)
    period = lcm(looped.lap.period, shape.period, *deferred.choice.paces, deferred.step)
    trips = deferred.choice.trips(at, longest)
    firsts: list[int] = []
    laps: set[int] = set()
    cuts: list[int] = []  # when each cut is made (`Heads.times`)
    loops = deferred.choice.loops
    for heads in walks:
        found = steady_lap(walk, heads, ring, period, looped.lap.start)
        if found is None:
            return None
        k, lap = found
        begin = heads.times[k]
        # the first head, after k, from which a walk overlapping this one sees its end
        differs = min(h.times[max(0, len(h.times) - tail)] for tail, h in every
                      if h.times[0] < heads.closed and h.closed > begin)  # fmt: skip
        trusted = bisect_left(heads.times, differs)
        if k + 2 * lap > trusted - 1:
            return None
        cut = next((h for h in range(k, k + lap)
                    if all(loop is None or loop in loops for loop in heads.beside[h])),
                   None)  # fmt: skip
        if cut is None:
            return None
        cuts.append(heads.times[cut])
        firsts.append(deferred.choice.option(at, trips - (trusted - 1 - cut)))
        laps.add(lap)
    mine = {id(h) for h in walks}
    for _, h in every:
        if id(h) not in mine and sum(h.times[0] < t < h.closed for t in cuts) != 1:  # type: ignore[operator]
            return None
    return max(*firsts, shape.start, deferred.options[0]), laps
