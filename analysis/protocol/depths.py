"""How far the state of each loop reaches and how many iterations the driver walks it: the
loop's depth (the ring in its own iterations), the shape its lap must repeat, and the trip
count of its longest run (`periods.LoopShape`), set once per kernel (`analysis.kernel_facts`)."""

from __future__ import annotations

from math import lcm

from xdsl.dialects import scf
from xdsl.ir import Operation, SSAValue

from analysis.protocol.assumptions import Assumptions
from analysis.protocol.counts import pace_of, scaled
from analysis.protocol.periods import LoopShape
from analysis.protocol.records import barrier_pointer
from copy_dialect import ops as copy
from copy_dialect.verify_common import constant_int

MAX_TRIP_COUNTS = 48
"""The most iterations the driver walks a loop."""


def loop_depths(
    shapes: dict[Operation, LoopShape],
    holders: frozenset[Operation],
    ring: int,
    pending: int,
    facts: Assumptions,
) -> None:
    """Each loop's depth (the rings in its own iterations, counted by the ops on barriers,
    each group's ring advanced as often as its most frequent op runs, each of its runs
    taking the ring's next slot as a k loop's acquires and releases do: a tile loop around a
    k loop of 8 advances a ring of 4 by two laps a tile, so that ring reaches one tile back,
    a release of the tile's last slot after the k loop among them, while an accumulator
    ring of 2 used once a tile reaches two; the groups a wait_group leaves in flight), the
    shape its lap must repeat (its own, joined with the loops at its nesting depth that neither
    holds nor is held by it: the other roles' loops, which run beside it), and the
    iterations the driver walks it."""
    nesting = {loop: len(enclosing(loop, shapes)) for loop in shapes}
    for loop, shape in shapes.items():
        shape.pace = pace_of(loop)
        shape.nested = nesting[loop] > 0
    for loop, shape in shapes.items():
        # per barrier group, its width and the most times an op on it runs an iteration
        uses: dict[SSAValue, tuple[int, int]] = {}
        for op in holders:
            if op is loop or not loop.is_ancestor(op):
                continue
            for group, width in groups_of(op):
                most = uses.get(group, (width, 1))[1]
                uses[group] = (width, max(most, advance(op, loop, facts)))
        reach = max(
            (-(-width // most) for width, most in uses.values()),
            default=ring,  # no barrier op inside: the kernel's widest ring
        )
        shape.depth = max(reach, pending + 1)
        shape.lap = shape.shape
        for other, theirs in shapes.items():
            if (
                nesting[other] == nesting[loop]
                and not other.is_ancestor(loop)
                and not loop.is_ancestor(other)
                and not runs_after(other, loop)
            ):
                if shape.paced_with(theirs):  # a consumer of every other tile: in its units
                    shape.lap = shape.lap.join(scaled(theirs.shape, shape.pace[1], theirs.pace[1]))
                else:
                    shape.lap = shape.lap.join(theirs.shape)
        shape.trips = min(walked(shape.depth, shape), MAX_TRIP_COUNTS)


def runs_after(other: Operation, loop: Operation) -> bool:
    """Whether `other` comes, in its block, after `loop` or after a loop to `loop`'s bound (a
    producer's load_tail after its tile loop): its agent runs it once that loop has ended, so
    it does not run beside `loop`'s laps (an agent that ended its loop a ring or more ahead
    of the others is the driver's `choices.lag`), and its iterations are not `loop`'s units."""
    if not isinstance(loop, scf.ForOp):
        return False
    before = other.prev_op
    while before is not None:
        if before is loop or (isinstance(before, scf.ForOp) and before.ub is loop.ub):
            return True
        before = before.prev_op
    return False


def groups_of(op: Operation) -> list[tuple[SSAValue, int]]:
    """The barrier groups `op` uses, with their widths, directly or as a pointer (a
    tcgen05.commit's `copy.barrier_init` group cast to `!llvm.ptr<3>`, perhaps offset by an
    `llvm.getelementptr`): a width is how many of its uses a producer may run ahead of a
    consumer through it."""
    found = []
    for v in op.operands:
        if not isinstance(v.type, copy.BarrierType):
            pointed = barrier_pointer(v)
            v = v if pointed is None else pointed[0]
        if isinstance(v.type, copy.BarrierType):
            found.append((v, v.type.count.data))
    return found


def enclosing(op: Operation, loops: dict[Operation, LoopShape]) -> list[Operation]:
    """The loops of `loops` that hold `op`."""
    found, parent = [], op.parent_op()
    while parent is not None:
        if parent in loops:
            found.append(parent)
        parent = parent.parent_op()
    return found


def advance(op: Operation, loop: Operation, facts: Assumptions) -> int:
    """How many times `op` runs in one iteration of `loop` at least: the product of the
    trip counts of the scf.for loops between them, each its constant count or the least
    that `facts` allow (a K-block count stated `ge 8`); 1 for any other loop."""
    times, parent = 1, op.parent_op()
    while parent is not None and parent is not loop:
        if isinstance(parent, scf.ForOp):
            lb, ub, step = (constant_int(v) for v in (parent.lb, parent.ub, parent.step))
            if ub is None:
                fact = facts.fact(parent.ub) if facts.ops else None
                ub = fact.lo if fact is not None else None
            if lb is not None and ub is not None and step:
                times *= max(1, -(-(ub - lb) // step))
        parent = parent.parent_op()
    return times


def walked(
    depth: int,
    shape: LoopShape,
    period: int = 1,
    start: int = 0,
    step: int = 1,
    whole: bool = False,
) -> int:
    """The iterations the longest run of a loop walks: its first iterations (to `start`),
    two rings and two iterations to settle in (the producer's first lap waits for nothing,
    its second for the first releases; the corpus's loops settle within them), a lap more
    for a loop inside another (a K loop's walks after a persistent kernel's first tile start
    where the tile before left the ring and the other roles), two laps to compare, and a
    ring of last iterations (whose heads a shorter count's end may reach).
    A lap spans whole periods of what the loop and the loops beside it read (`shape.lap`)
    and of `period`, that of what the protocol reads of a chosen count (an epilogue's parity
    of n, from `start` on, `room`); a loop that carries a position of its own
    (`LoopShape.state`: a slot and a phase, as CUTLASS's PipelineState) may need two rings
    a lap. The laps compared also keep to the spacing `step` of the counts tried (a count
    stated a multiple of 8), which settling in does not wait for. `whole`: the walk stands
    for a count of the kernel's own (`general`: a long constant loop made a count), whose
    longest run is walked again from the start where it does not settle
    (`analysis.walk_further`): room for the last ring as well."""
    s = shape.lap
    lap = lcm(depth, s.period, period)
    if shape.state:  # a carried phase that flips once a ring: a lap of two rings
        lap = lcm(lap, 2 * depth)
    settle = 2 * depth + 2 + (lap if shape.nested else 0)
    # (`whole`: the last ring too, which the steady state leaves out, `run.steady_lap`; a
    # nested loop's extra lap leaves room for it in every kernel measured)
    last = max(depth, s.tail) if whole and not shape.nested else max(0, s.tail - depth)
    return max(s.start, start) + settle + 2 * lcm(lap, step) + last


def room(
    shapes: list[LoopShape], period: int, start: int, step: int = 1, whole: bool = False
) -> bool:
    """Walk the loops of a chosen count (`shapes`) far enough for a lap that spans whole
    periods of what the protocol reads of the count (`period`, from `start` on, unless that
    is beyond MAX_TRIP_COUNTS: the counts above are then not covered however far it walks)
    and keeps to the spacing `step` of its options (`whole`: `walked`), all as far as the one
    that needs the most: whether any now walks further."""

    def needs(shape: LoopShape) -> int:
        most = walked(shape.depth, shape, period, start, step, whole)
        if most <= MAX_TRIP_COUNTS:
            return most
        return walked(shape.depth, shape, period, 0, step, whole)

    most = min(max(needs(s) for s in shapes), MAX_TRIP_COUNTS)
    longer = False
    for shape in shapes:
        if most > shape.trips:
            shape.trips = most
            longer = True
    return longer
