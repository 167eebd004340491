"""How far the state of each loop reaches and how many iterations the driver walks it: the
loop's depth (the ring in its own iterations), the shape its lap must repeat, and the trip
count of its longest run (`periods.LoopShape`), set once per kernel (`analysis.kernel_facts`)."""

from __future__ import annotations

from math import lcm

from xdsl.dialects import scf
from xdsl.ir import Operation

from analysis.protocol.assumptions import Assumptions
from analysis.protocol.counts import pace_of, scaled
from analysis.protocol.periods import LoopShape, Shape
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
    roles: bool,
    facts: Assumptions,
) -> None:
    """Each loop's depth (the rings in its own iterations, counted by the ops on barriers,
    each with its own group's ring: a tile loop around a k loop of 8 advances a ring of 4 by
    two laps a tile, so that ring reaches one tile back, while an accumulator ring of 2 used
    once a tile reaches two; the groups a wait_group leaves in flight), the shape
    its lap must repeat (its own, joined with the loops at its nesting depth that neither
    holds nor is held by it: the other roles' loops, which run beside it), and the
    iterations the driver walks it."""
    nesting = {loop: len(enclosing(loop, shapes)) for loop in shapes}
    for loop, shape in shapes.items():
        shape.pace = pace_of(loop)
    for loop, shape in shapes.items():
        rings = ((op, ring_of(op)) for op in holders if op is not loop and loop.is_ancestor(op))
        reach = max(
            (-(-width // max(advance(op, loop, facts), 1)) for op, width in rings if width),
            default=ring,  # no barrier op inside: the kernel's widest ring
        )
        shape.depth = max(reach, pending + 1)
        shape.lap, spread = shape.shape, shape.values
        for other, theirs in shapes.items():
            if (
                nesting[other] == nesting[loop]
                and not other.is_ancestor(loop)
                and not loop.is_ancestor(other)
            ):
                if shape.paced_with(theirs):  # a consumer of every other tile: in its units
                    shape.lap = shape.lap.join(scaled(theirs.shape, shape.pace[1], theirs.pace[1]))
                    spread = spread.join(scaled(theirs.values, shape.pace[1], theirs.pace[1]))
                else:
                    shape.lap = shape.lap.join(theirs.shape)
                    spread = spread.join(theirs.values)
        shape.trips = min(max(walked(shape.depth, shape, roles, spread), 4 * shape.depth + 4),
                          MAX_TRIP_COUNTS)  # fmt: skip


def ring_of(op: Operation) -> int:
    """The widest barrier group `op` uses (0: none), directly or as a pointer (a
    tcgen05.commit's `copy.barrier_init` group cast to `!llvm.ptr<3>`, perhaps offset by an
    `llvm.getelementptr`): how many of its uses a producer may run ahead of a consumer
    through it."""
    widest = 0
    for v in op.operands:
        if not isinstance(v.type, copy.BarrierType):
            pointed = barrier_pointer(v)
            v = v if pointed is None else pointed[0]
        if isinstance(v.type, copy.BarrierType):
            widest = max(widest, v.type.count.data)
    return widest


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


def walked(depth: int, shape: LoopShape, roles: bool, spread: Shape) -> int:
    """The iterations the longest run of a loop walks: enough for its first iterations
    (to `start`), then laps and its last iterations: four rings; with a longer lap, two
    rings and three laps; with roles, which settle into their lap after two rings (the
    producer's first lap waits for nothing, its second for the first releases), two laps
    after three rings. A loop that carries a position of its own (`LoopShape.state`: a
    slot and a phase, as CUTLASS's PipelineState) may need two rings a lap. `spread`: what
    it and the loops beside it read, parities as plain values (`LoopShape.values`): the
    walk makes room for a lap of their period, which a count's reads may need."""
    s = spread.join(shape.lap)
    lap = lcm(depth, s.period)
    if shape.state:  # a carried phase that flips once a ring: a lap of two rings
        lap = lcm(lap, 2 * depth)
    trips = 4 * depth + 4 if lap == depth else max(4 * depth + 4, 2 * depth + 3 * lap)
    if roles:
        trips = max(trips, 3 * depth + 2 * lap)
    return s.start + trips + max(0, s.tail - depth)
