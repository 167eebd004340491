"""The driver of the protocol analysis: which functions are kernels, which unknowns are
worth choosing, and the runs over every choice; findings of all runs, once each."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import permutations
from math import lcm

from xdsl.dialects import func, scf
from xdsl.ir import BlockArgument, Operation, SSAValue

from analysis.protocol.assumptions import Assumptions
from analysis.protocol.choices import (
    CountChoice,
    Deferred,
    by_role,
    count_choice,
    describe,
    nested_count,
    spacing,
    uncovered,
)
from analysis.protocol.depths import MAX_TRIP_COUNTS, loop_depths, room
from analysis.protocol.facts import CopyFacts, Kernel, LoopCount, block_size, equal_values
from analysis.protocol.findings import ProtocolFinding, Related, warning
from analysis.protocol.general import Budget, Unproven, general_kernel
from analysis.protocol.periods import LoopShape, Shape, loop_shape
from analysis.protocol.run import Infeasible, Walk, run_kernel, steady_lap
from analysis.protocol.steps import Choose
from copy_dialect import ops as copy
from copy_dialect.verification import ops_of, verification_run
from copy_dialect.verify_common import constant_int

MAX_RUNS = 512
"""Runs (choices of trip counts and branches) per kernel before the analysis gives up."""

MAX_PERMUTED_ROLES = 2
"""Roles up to which every priority order is run; beyond, each role first once (its
rotation). Three roles under their 3 rotations (each role first, each ordered pair of roles
in one of them) give the verdicts of all 6 orders on every one of the 671 corpus mutants the
kernel rules pass (scripts/mutations.py's set at 6e6836e); one order alone misses a two-phases-
ahead wait that (0, 2, 1) and (2, 0, 1) expose."""


def protocol_ops(fn: func.FuncOp) -> frozenset[Operation]:
    """The copy ops of `fn` and every op that holds one (a `copy.assume` states a fact, it
    takes no part in the protocol)."""
    found: set[Operation] = set()
    for op in ops_of(fn):
        if op.name.startswith("copy.") and not isinstance(op, copy.AssumeOp):
            parent = op.parent_op()
            while parent is not None and parent is not fn and parent not in found:
                found.add(parent)
                parent = parent.parent_op()
            found.add(op)
    return frozenset(found)


def kernel_facts(
    fn: func.FuncOp, holders: frozenset[Operation], only: dict[SSAValue, int] | None = None
) -> Kernel:
    """What every run of the kernel shares, in one pass over the ops that hold copy ops
    (`only`: `Kernel.only`)."""
    loops: list[SSAValue] = []
    conds: list[SSAValue] = []
    geometry: dict[Operation, CopyFacts] = {}
    shapes: dict[Operation, LoopShape] = {}
    ring, pending, roles = 1, 0, 0
    facts = Assumptions.of(fn)
    for op in (op for op in ops_of(fn) if op in holders):  # in program order: deterministic
        kind = type(op)
        if kind in CopyFacts.OPS:
            geometry[op] = CopyFacts.of(op)  # type: ignore[arg-type]
        elif kind is scf.ForOp:
            loops.append(op.ub)  # type: ignore[attr-defined]
            shapes[op] = loop_shape(op, holders, facts.multiple)  # type: ignore[arg-type]
        elif kind is scf.WhileOp:
            shapes[op] = loop_shape(op, holders, facts.multiple)  # type: ignore[arg-type]
        elif kind is scf.IfOp:
            conds.append(op.cond)  # type: ignore[attr-defined]
        elif kind is copy.BarrierInitOp:
            t = op.result.type  # type: ignore[attr-defined]
            if isinstance(t, copy.BarrierType):
                ring = max(ring, t.count.data)
        elif kind is copy.WaitGroupOp:
            pending = max(pending, op.pending.value.data)  # type: ignore[attr-defined]
        elif kind is copy.WarpSpecializeOp:
            roles = max(roles, len(op.roles))  # type: ignore[attr-defined]
    # The iterations a loop's state reaches across: a barrier group's ring, or the groups a
    # wait_group leaves in flight (a committed store waited `pending` iterations later).
    depth = max(ring, pending + 1)
    loop_depths(shapes, holders, ring, pending, facts)
    trips = max((s.trips for s in shapes.values()), default=min(4 * depth + 4, MAX_TRIP_COUNTS))
    predicates = [g.predicate for g in geometry.values() if g.predicate is not None]
    canon, aliases = equal_values([*loops, *conds, *predicates])
    same_bound(shapes, canon)
    return Kernel(
        fn, block_size(fn), frozenset(loops), trips, pending, holders, {}, geometry,
        {}, canon, aliases, roles, shapes, strided_counts(shapes), facts, only or {},
    )  # fmt: skip


def same_bound(shapes: dict[Operation, LoopShape], canon: dict[SSAValue, SSAValue]) -> None:
    """Loops to one bound (each role's tile loop to %count, a value computed alike) are
    walked as far as the one that needs the most: the driver tries that count for all of
    them (`ops_scf.trip_options`), and a role whose own loop would settle sooner (a producer
    a ring ahead) is still part of the lap of the others (an MMA warp's accumulator stage
    and phase, carried tile to tile), so its steady state is looked for in that run."""
    groups: dict[SSAValue, list[LoopShape]] = {}
    for op, shape in shapes.items():
        if isinstance(op, scf.ForOp):
            groups.setdefault(canon.get(op.ub, op.ub), []).append(shape)
    for group in groups.values():
        most = max(shape.trips for shape in group)
        for shape in group:
            shape.trips = most


def strided_counts(loops: Iterable[Operation]) -> dict[Operation, LoopCount]:
    """The loops whose trip count the driver chooses itself: each `scf.for` whose start or
    step is not a constant (a grid-stride loop over tiles) and each `scf.while` (a loop over
    a work counter), with its choice: one for the loops computed alike (the same start,
    bound and step; the same test of the same values carried the same way), as every
    role's tile loop."""
    chosen = [
        loop
        for loop in loops
        if isinstance(loop, scf.WhileOp)
        or (
            isinstance(loop, scf.ForOp)
            and (constant_int(loop.lb) is None or constant_int(loop.step) is None)
        )
    ]
    canon, _ = equal_values([v for loop in chosen for v in loop.operands])
    first: dict[object, LoopCount] = {}
    counts = {}
    for loop in chosen:
        counts[loop] = first.setdefault(signature(loop, canon), LoopCount(loop))
    return counts


def signature(loop: Operation, canon: dict[SSAValue, SSAValue]) -> object:
    """What a loop computes its trip count from, with its own block arguments as positions
    and the values from outside it as their canonical representatives."""
    memo: dict[SSAValue, object] = {}

    def of(v: SSAValue) -> object:
        if v in memo:
            return memo[v]
        memo[v] = ("cycle",)
        owner = v.block.parent_op() if isinstance(v, BlockArgument) else v.owner
        inside = owner is loop or (isinstance(owner, Operation) and loop.is_ancestor(owner))
        if not inside:
            found: object = canon.get(v, v)
        elif isinstance(v, BlockArgument):
            found = ("arg", loop.regions.index(v.block.parent), v.index)
        else:
            op = v.owner
            props = tuple(sorted((k, str(p)) for k, p in op.properties.items()))
            found = (op.name, props, tuple(of(o) for o in op.operands))
        memo[v] = found
        return found

    if isinstance(loop, scf.ForOp):
        return ("for", of(loop.lb), of(loop.ub), of(loop.step))
    assert isinstance(loop, scf.WhileOp)
    before = loop.before_region.blocks[0].last_op
    after = loop.after_region.blocks[0].last_op
    assert before is not None
    assert after is not None
    return (
        "while",
        tuple(of(v) for v in loop.arguments),
        tuple(of(v) for v in before.operands),
        tuple(of(v) for v in after.operands),
    )


def priority_orders(roles: int) -> list[tuple[int, ...]]:
    """The role priorities a choice is run under: both orders of 2 roles, else each role
    first once (the others after it in order): each role gets to run ahead of the others.
    The first alone when its run was ordered (`HappensBefore.ordered`: every order then
    makes the same run)."""
    if roles <= 1:
        return [()]
    if roles <= MAX_PERMUTED_ROLES:
        return list(permutations(range(roles)))
    return rotations(roles)


def rotations(n: int) -> list[tuple[int, ...]]:
    """Each of 0 .. n - 1 first once, the others after it in order."""
    return [tuple(range(r, n)) + tuple(range(r)) for r in range(n)]


def cta_orders(ranks: int) -> list[tuple[int, ...]]:
    """The priorities of a cluster's CTAs a choice is run under with each priority order of
    its roles, when its first run is not ordered: the CTA that forks its roles last first
    (`run.Walk.ctas`, empty), then each CTA first once, the others after it in rank order.
    Which CTA's arrival a barrier counts toward a phase depends on their schedule as much as
    the roles': a multicast GEMM whose producer arrives on the next slot's full barrier
    over-arrives only when CTA 0 runs ahead of CTA 1, and a gather4 GEMM's only when CTA 1
    runs ahead (the corpus mutants `next barrier` of gemm_multicast_cluster2 and
    gather4_multicast_moe)."""
    if ranks <= 1:
        return [()]
    return [(), *rotations(ranks)]


def quick_order(roles: int) -> tuple[int, ...]:
    """The order each choice of a kernel with roles is run under first: the roles last to
    first. A kernel lists its producer before the roles that consume what it loads
    (CUTLASS's and FA3's warp roles, the corpus); with the consumers first, a producer runs
    only while they all wait, so the roles stay within a ring of each other: the loops
    settle sooner and a run of a short count ends sooner after its first role leaves its
    loop (`choices.lag`), 15-30% fewer steps on the tcgen05 GEMMs of the corpus. A run of it
    that is ordered and finds nothing stands for every order (`HappensBefore.ordered`); one
    that finds an error or is not ordered is dropped and the priority orders run instead,
    the producer first: a mistake is met sooner after the op that makes it when the producer
    runs ahead (on the corpus's 1,162 mutants the first error is at the mutated op for 412
    of them with the producer first, 347 with the consumers first)."""
    return tuple(reversed(range(roles)))


def unequal_counts(bindings: dict[SSAValue, int]) -> str | None:
    """When the run chose different trip counts for loops computed differently (two roles'
    tile loops that step differently, say), how each computes its count: a hang or race
    found then may come from the roles walking different tiles."""
    counts = [(key, n) for key, n in by_role(bindings) if isinstance(key, LoopCount)]
    if len({n for _, n in counts}) < 2:
        return None
    loops = "; ".join(f"{key.where()}loop over %{key.name_hint} takes {n} ({key.how()})"
                      for key, n in counts)  # fmt: skip
    return (
        f"here {loops}: if the loops walk the same tiles, compute their starts, tests and "
        "steps alike"
    )


def unsteady_loops(
    walk: Walk, kernel: Kernel, unsettled: set[Operation] | None = None
) -> list[ProtocolFinding]:
    """For the run with the most iterations of each loop whose trip count was chosen: a
    warning unless the loop reached a steady state (`steady_lap`) that what the protocol reads
    in it repeats with (`periods`): then the counts tried stand for every count. The loops
    that were walked too few iterations to settle, or did not settle, join `unsettled`
    (walking them further may settle them; an opaque loop cannot)."""
    found = []
    for loop, walks in walk.heads.items():
        shape = kernel.loops[loop]
        # Every walk of the loop in this run (a K loop's, once per tile): each must settle,
        # as the counts not tried add laps to each.
        full = [heads for heads in walks if len(heads) >= kernel.trips_of(loop)]
        if not full:
            continue
        tail = max(shape.depth, shape.lap.tail)
        if shape.opaque:
            reason = shape.opaque[0]
            # rule: P10
            found.append(
                warning(
                    loop,
                    "cannot prove the copies of this loop for every trip count: "
                    f"{reason.why}, which the steady-state proof cannot repeat",
                    "compute ring slots, parities and conditions from the induction variable "
                    "with arith ops (i mod S, (i / S) mod 2, a comparison with a constant or "
                    "with the loop's bound), or check the kernel at run time with "
                    "--debug-guards",
                    *([Related(reason.op, "here")] if reason.op is not None else []),
                )
            )
            continue
        s = shape.lap
        lap = lcm(shape.depth, s.period)
        heads = min(full, key=len)
        if s.start + 2 * lap + tail > len(heads):
            found.append(too_long(loop, s, lap, tail, len(heads)))
            if unsettled is not None:
                unsettled.add(loop)
            continue
        unsteady = next((h for h in full if steady_lap(walk, h, tail, s.period, s.start) is None),
                        None)  # fmt: skip
        if unsteady is not None:
            heads = unsteady
            if unsettled is not None:
                unsettled.add(loop)
            # rule: P10
            found.append(
                warning(
                    loop,
                    f"cannot prove the copies of this loop for more than {len(heads)} "
                    "iterations: it reaches no steady state the analysis can repeat (a lap "
                    "of iterations that leaves the barriers, groups and buffers as it found "
                    "them)",
                    "compute ring slots and parities from the induction variable (i mod S, "
                    "(i / S) mod 2), or check the kernel at run time with --debug-guards",
                )
            )
    return found


def too_long(loop: scf.ForOp, s: Shape, lap: int, tail: int, walked: int) -> ProtocolFinding:
    """The warning for a loop whose proof needs more iterations than the analysis walks:
    a lap of `lap` twice, after iteration `s.start`, before the last `tail`."""
    if s.start + 2 * lap + tail - walked <= s.start and s.starter is not None:
        what, op, note = (
            f"'{s.starter.name}' holds the same value only from iteration {s.start} on",
            s.starter,
            "settles late",
        )
    elif s.witness is not None:
        what, op, note = (
            f"'{s.witness.name}' repeats every {s.period} iterations",
            s.witness,
            "repeats with this period",
        )
    else:
        what, op, note = f"what it reads repeats every {s.period} iterations", None, ""
    # rule: P10
    return warning(
        loop,
        f"cannot prove the copies of this loop for every trip count: {what}, and the proof "
        f"needs two laps of {lap} iterations from iteration {s.start} on and {tail} after "
        f"them, more than the {walked} the analysis walks",
        "write the loop as a nest (an outer loop over tiles around the loop over k-blocks), "
        "so that each loop repeats within a few iterations, or check the kernel at run time "
        "with --debug-guards",
        *([Related(op, note)] if op is not None else []),
    )


def check_kernel(fn: func.FuncOp) -> list[ProtocolFinding]:
    holders = protocol_ops(fn)
    if not holders:
        return []
    general = general_kernel(fn, holders)
    if general is not None:
        clone, n, count = general
        try:
            if not check_as_written(clone, protocol_ops(clone), Budget(n, count)):
                return []  # proven for its long loops' count (`general`)
        except Unproven:
            pass
    return check_as_written(fn, holders)


def check_as_written(
    fn: func.FuncOp, holders: frozenset[Operation], budget: Budget | None = None
) -> list[ProtocolFinding]:
    """The findings of every run of `fn`, its loops walked for their trip counts; with a
    `budget`, `fn` is a general kernel (`general`) of one count, whose runs stay within
    it."""
    if len(fn.body.blocks) != 1:
        # rule: P10
        return [
            warning(
                fn,
                "cannot prove the copy protocol of a function with several blocks (cf branches)",
                "write the control flow with scf.if and scf.for",
            )
        ]
    kernel = kernel_facts(fn, holders, {budget.n: budget.count} if budget else {})
    unsettled: set[Operation] = set()
    found = run_choices(fn, kernel, unsettled, budget)
    if not any(f.severity == "error" for f in found) and walk_further(kernel, unsettled):
        # A loop that settles late (a pingpong's tile loop from tile 6, a lap of 4): the
        # same proof over longer walks, once (the findings of the shorter are dropped).
        found = run_choices(fn, kernel, None, budget)
    return found


def walk_further(kernel: Kernel, unsettled: set[Operation]) -> bool:
    """Give each loop of `unsettled` two more laps to settle in (up to MAX_TRIP_COUNTS):
    whether any got more."""
    longer = False
    for loop in unsettled:
        count = kernel.counts.get(loop)  # loops that share a count walk its first loop's
        shape = kernel.loops[count.loop if count is not None else loop]
        more = min(shape.trips + 2 * lcm(shape.depth, shape.lap.period), MAX_TRIP_COUNTS)
        if more > shape.trips:
            shape.trips = more
            longer = True
    return longer


def make_room(kernel: Kernel, counting: CountChoice, step: int = 1) -> bool:
    """Walk the loops of a chosen count far enough for a lap that what the protocol reads of
    the count repeats with too (`depths.room`: an epilogue's parity of n may repeat every two
    rings where the loops' own reads repeat every ring), and that keeps to the options'
    spacing `step` (a count stated a multiple of 8: `Deferred.step`): whether they now walk
    further."""
    if counting.obstacle is not None:
        return False
    period = lcm(counting.shape.period, *counting.paces)
    owners = {kernel.counts[loop].loop if loop in kernel.counts else loop
              for loop in counting.loops}  # fmt: skip
    shapes = [kernel.loops[loop] for loop in owners if loop in kernel.loops]
    return room(shapes, period, counting.shape.start, step, counting.value in kernel.only)


def run_choices(
    fn: func.FuncOp, kernel: Kernel, unsettled: set[Operation] | None, budget: Budget | None
) -> list[ProtocolFinding]:
    """Every run of `kernel`'s choices under every priority order, and their findings
    (each once); the loops whose longest run did not settle join `unsettled`; each run is
    charged to `budget` (`general.Unproven` past it)."""
    orders = [(roles, ctas) for ctas in cta_orders(kernel.cluster.ranks)
              for roles in priority_orders(kernel.roles)]  # fmt: skip
    quick = kernel.roles > 1
    if quick:  # order 0: `quick_order`, then the priority orders from 1
        orders = [(quick_order(kernel.roles), ()), *orders]
    found: dict[tuple[object, ...], tuple[int, ProtocolFinding]] = {}
    # The runs to do: (bindings, priority order, the deferrals whose longest choice the
    # bindings take), and deferrals. A trip count is tried at its longest first: the runs
    # of the others follow, and only those the longest's steady state does not stand for.
    work: list[tuple[dict[SSAValue, int], int, tuple[Deferred, ...]] | Deferred] = [({}, 0, ())]
    choices: dict[object, CountChoice | None] = {}
    deferrals: list[Deferred] = []
    runs = 0
    while work:
        item = work.pop()
        if isinstance(item, Deferred):
            value = item.choice.value
            # (the run of the count a kernel's one count comes down to by whole laps must
            # hold laps too: the deferral settles it, `Deferred.lapped`)
            work.extend(({**item.bindings, value: o}, item.order,  # type: ignore[dict-item]
                         (*item.outer, item) if o == item.lapped else item.outer)
                        for o in reversed(item.kept()))  # fmt: skip
            continue
        bindings, order, longest = item
        runs += 1
        if runs > MAX_RUNS:
            # rule: P10
            finding = warning(
                fn,
                f"cannot prove the copy protocol: it depends on more than {MAX_RUNS} "
                "combinations of trip counts and branch conditions",
                nested_count(kernel, choices)
                or "split the kernel, or check it at run time with --debug-guards",
            )
            found.setdefault(finding.key, (0, finding))
            deferrals = []  # given up: no count's cover to report on top
            break
        this_run: list[ProtocolFinding] = []
        try:
            watched = frozenset(d.choice.value for d in longest  # (`Deferred.lapped`)
                                if bindings.get(d.choice.value) == d.lapped)  # type: ignore[call-overload]  # fmt: skip
            walk = run_kernel(kernel, bindings, this_run.append, *orders[order], watched)
        except Choose as choice:
            options = list(choice.options)
            if choice.value not in choices:
                choices[choice.value] = count_choice(kernel, choice.value)
            counting = choices[choice.value]
            if counting is not None and make_room(kernel, counting, spacing(options)):
                work.append(item)  # again, with the longer walk's options
                continue
            if counting is not None and len(options) > 2:
                only = kernel.only.get(choice.value)  # type: ignore[call-overload]
                deferred = Deferred(bindings, counting, options, order, longest, only)
                deferrals.append(deferred)
                work.append(deferred)
                work.append(({**bindings, choice.value: options[-1]}, order,  # type: ignore[dict-item]
                             (*longest, deferred)))  # fmt: skip
            else:
                work.extend(({**bindings, choice.value: o}, order, longest)  # type: ignore[dict-item]
                            for o in reversed(options))  # fmt: skip
            continue
        except Infeasible:
            continue
        erred = any(f.severity == "error" for f in this_run)
        if budget is not None:  # (the quick order's error is not final: it runs again)
            budget.charge(len(walk.events), bindings, erred and not (quick and order == 0))
        if quick and order == 0 and (erred or not walk.state.hb.ordered):
            work.append((bindings, 1, longest))  # (`quick_order`)
            continue
        for deferred in longest:
            deferred.settled(walk, kernel)
        # The other priority orders look for what this one could not see; a mistake it
        # found is reported once, as it found it. A run whose barriers counted the same
        # arrivals in every order (`HappensBefore.ordered`) is the same run in each.
        if order == int(quick) and not walk.state.hb.ordered and not erred:
            work.extend((bindings, o, longest) for o in range(len(orders) - 1, order, -1))
        this_run += unsteady_loops(walk, kernel, unsettled)
        differ = unequal_counts(bindings)
        size = sum(n for key, n in bindings.items()
                   if isinstance(key, LoopCount) or key in kernel.loop_bounds)  # fmt: skip
        for finding in this_run:
            # Each finding as the run with the fewest iterations found it (the first of
            # those: branches as the driver tries them, taken first).
            if finding.key not in found or size < found[finding.key][0]:
                finding.context = describe(bindings, kernel)
                if differ and finding.severity == "error":
                    finding.note = f"{finding.note}; {differ}"
                found[finding.key] = (size, finding)
    if not any(f.severity == "error" for _, f in found.values()):
        for finding in uncovered(deferrals, kernel):
            found.setdefault(finding.key, (0, finding))
        if unsettled is not None:  # a count's walks that did not settle may settle further
            unsettled.update(loop for d in deferrals if d.unsteady for loop in d.choice.loops
                             if not kernel.loops[loop].opaque)  # fmt: skip
    return [finding for _, finding in found.values()]


def check_protocol(module: Operation) -> list[ProtocolFinding]:
    """Errors and warnings of every kernel (function holding copy ops) in `module`."""
    findings: list[ProtocolFinding] = []
    with verification_run():  # (joins the run of `verify_module`, or is one)
        for op in ops_of(module):
            if isinstance(op, func.FuncOp):
                findings += check_kernel(op)
    return findings
