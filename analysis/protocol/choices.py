"""The driver's trip-count choices: which loops a count counts (`count_choice`), which of
its options the runs of the longest stand for (`Deferred`), whether those runs cover the
counts not tried (`Deferred.gap`, `uncovered`), and how a finding names the choices it was
found for (`describe`)."""

from __future__ import annotations

import itertools
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from math import gcd, lcm

from xdsl.dialects import scf
from xdsl.ir import Operation, SSAValue

from analysis.protocol.counts import base, count_shape
from analysis.protocol.cuts import cut
from analysis.protocol.facts import Kernel, LoopCount
from analysis.protocol.findings import ProtocolFinding, Related, warning
from analysis.protocol.periods import Opaque, Shape
from analysis.protocol.run import Walk, steady_lap
from copy_dialect.verify_common import constant_int


def by_role(bindings: dict[SSAValue, int]) -> list[tuple[SSAValue, int]]:
    """The bindings in the order the driver made them, but the counts of several roles'
    loops role by role, whichever role asked first (as a message names them)."""
    items = list(bindings.items())
    at = [i for i, (key, _) in enumerate(items) if isinstance(key, LoopCount)]
    ranked = sorted((items[i] for i in at), key=lambda kn: kn[0].where())  # type: ignore[attr-defined]
    for i, item in zip(at, ranked, strict=True):
        items[i] = item
    return items


def describe(bindings: dict[SSAValue, int], kernel: Kernel) -> str:
    parts = []
    for value, chosen in by_role(bindings):
        if isinstance(value, LoopCount):
            parts.append(value.describe(chosen))
            continue
        name = f"%{value.name_hint}" if value.name_hint else "a value"
        if value in kernel.loop_bounds:
            parts.append(f"{name} = {chosen}")
        else:
            parts.append(f"{name} {'true' if chosen else 'false'}")
    return "found for " + ", ".join(parts) if parts else ""


def spacing(options: list[int]) -> int:
    """The spacing of a choice's options, in order (1: consecutive, or a single one; a
    fact's multiple)."""
    return gcd(*(b - a for a, b in itertools.pairwise(options))) or 1


class Deferred:
    """The trip counts of a choice other than its longest, tried after the runs of the
    longest: those its loops' steady state does not already stand for."""

    def __init__(
        self,
        bindings: dict[SSAValue, int],
        choice: CountChoice,
        options: list[int],
        order: int,
        outer: tuple[Deferred, ...],
        only: int | None = None,
    ):
        self.bindings = bindings
        self.choice = choice
        self.longest = options[-1]
        self.options = options[:-1]
        self.step = spacing(options)
        """The options' spacing (1: consecutive; a fact's multiple): a lap must keep to it."""
        consecutive = options == list(range(options[0], self.longest + 1))
        self.reduce = choice.obstacle is None and consecutive
        """Whether the runs of the longest may stand for options below it (consecutive:
        a count the lap leads to from a longer one is one of them)."""
        self.spaced = (choice.obstacle is None or choice.cut is not None) and options == list(
            range(options[0], self.longest + 1, self.step)
        )
        """Whether the options are evenly spaced (a fact's multiple): a cut of laps that
        keep to the spacing leads from the longest to one of them (`cut`)."""
        self.gap: Opaque | None = choice.obstacle
        """Why the counts above the longest are not covered (None: every run of the longest
        settled in every walk of its loops with a lap they repeat with, `settled`)."""
        self.order = order
        self.outer = outer
        """The deferrals whose longest choice this one's runs belong to."""
        self.fewer: int | None = 0
        """The option from which on every option repeats one below it (None: a run of the
        longest did not settle)."""
        self.laps: set[int] = set()
        """The laps P by which they repeat (n behaves as n - P from `fewer` on)."""
        self.only = only
        """The one count the kernel has (`Kernel.only`), where it has one."""
        self.cut_fewer: int | None = 0
        """The option from which on every option is a cut of the longest's run, when its
        laps are a multiple of the laps `cut_laps` (None: a run of the longest had no cut)."""
        self.cut_laps: set[int] = set()
        self.lapped: int | None = None
        """The count below the longest whose run must hold laps that repeat in every walk
        at once (`cut`), where the one count the kernel has is that count and laps more
        (`uncut`)."""
        self.seen = False
        self.unsteady = False
        """Whether the gap is a walk of the longest that reached no steady state (a longer
        walk may: `analysis.walk_further`)."""
        self.ahead: bool | SSAValue = False
        """Whether the gap is a loop another ran ahead of beyond their rings (the loops
        uncoupled: a K loop of no k-block a tile lets a producer finish every tile first),
        and the bound the run took as 0 where one did (`empty_loop`)."""

    def settled(self, walk: Walk, kernel: Kernel) -> None:
        """A run of the longest option ended: from which option on its loops repeat, and
        whether they cover the counts above it.

        Below: run n is run T's up to the first read of n that differs (the first loop of
        the choice, in any CTA, to leave at n or to see its end in a condition; what the
        rest reads of n is the same from n = `shape.start` on, `CountChoice`): the heads of
        a loop before that point, measured on run T's clock (`trusted_heads`), are run T's.
        From iteration k + P on run T's heads repeat with its lap P (`steady_lap`), and
        what the protocol reads of n repeats with P: run n then behaves as run n - P from
        its last such head on, down to an option below the threshold (`first_covered`;
        where a loop of the choice is paced or walked more than once, the heads before its
        last `tail` iterations, its ring or how far the agent that ends first led it,
        `lag`). The state at a head holds every agent's (`Walk.snapshot`), so the heads of
        one loop walked to the longest count stand for the others of the choice (the
        consumer's loop from 1 to n that ends an iteration earlier).

        Above: every walk of the choice's loops to the longest (each tile's, for a K loop)
        must settle with a lap P that what the protocol reads of n repeats with (from n =
        `start` on, every `period`) and that keeps to the options' spacing, so that run n is
        run n - P with a lap more in each walk, down to the counts tried (`gap` otherwise).

        Cut: the same run with whole laps cut out of every walk at once (`cut`), which also
        holds where the loops are walked once per tile; `kept` runs the options neither
        argument covers."""
        if self.lapped is not None and walk.bindings.get(self.choice.value) == self.lapped:  # type: ignore[call-overload]
            # the run of the count the kernel's count comes down to by whole laps
            if cut(self, walk, kernel, self.lapped) is None:
                why = (f"in its run of {self.lapped}, the count {self.only} comes down to by "
                       "whole laps, no lap repeats in every walk at once")  # fmt: skip
                self.gap = Opaque(self.choice.loops[0], why)
            return
        shape = self.choice.shape
        covering = self.gap is None and not self.last(kernel)
        walked = False
        firsts: list[int] = []
        # a loop of the choice walked more than once (a K loop, once per tile): no loop's
        # heads are run n's prefix past the first walk (only cuts stand for shorter counts);
        # nor where the options are not consecutive or the count has an `obstacle`
        repeated = not self.reduce or any(
            len(walk.heads.get(loop, [])) > 1 for loop in self.choice.loops
        )
        for loop in self.choice.loops:
            if not self.choice.counts(loop):
                continue  # (a loop that starts elsewhere: `obstacle`, every count is tried)
            looped = kernel.loops[loop]
            trips = self.choice.trips(loop, self.longest)
            walks = walk.heads.get(loop, [])
            # walked once, to its longest (its start is 1: the count n - 1; a loop walked
            # more than once, a K loop in a tile loop, is not run n's prefix past its first)
            once = not repeated and len(walks) == 1 and len(walks[0]) == trips
            ring = max(looped.depth, looped.lap.tail)
            lead = lag(walk, loop, self.choice.loops) if once else 0
            tail = max(ring, lead)
            if not (covering or once):
                continue
            # a lap the count's reads repeat with too (an epilogue's parity of n may repeat
            # every two rings where the loop's own reads repeat every ring)
            period = lcm(looped.lap.period, shape.period, *self.choice.paces, self.step)
            laps = [steady_lap(walk, h, tail, period, looped.lap.start)
                    for h in walks if len(h) == trips]  # fmt: skip
            if covering:
                ahead = lead > ring
                self.cover(loop, laps, lead if ahead else 0,
                           empty_loop(walk, kernel) if ahead else None)  # fmt: skip
                covering = self.gap is None
            if not once:
                continue
            walked = True
            found = laps[0]
            if found is None or any(found[1] % p for p in (shape.period, *self.choice.paces)):
                if not (self.ahead and self.gap is not None and empty_loop(walk, kernel)):
                    self.fewer = None
                # (else a run with a loop bound of 0, whose loops met no ring, that left the
                # counts uncovered: the P10 warning of `uncovered` names the fact that rules
                # the 0 out, and the runs of the other bounds still settle the options: a
                # persistent GEMM's K of 0 among its runtime K-block counts does not make
                # every tile count run under every K)
                continue
            if self.fewer is None:
                continue  # (a walk of an earlier run did not settle: every option runs)
            k, lap = found
            first = self.first_covered(walk, kernel, loop, k, lap)
            if first is None:
                first = self.choice.option(loop, k + lap + tail)
            # n - P must be an option too, and read n as n does
            firsts.append(max(first, shape.start + lap, self.options[0] + lap))
            self.laps.add(lap)
        if not walked:
            self.fewer = None
        elif self.fewer is not None:
            # One loop's heads suffice: the state at each holds the whole CTA's.
            self.fewer = max(self.fewer, min(firsts))
        # The other argument, for every run: its laps cut in every walk at once (a K loop
        # walked once per tile, `cut`); `kept` runs the options neither covers.
        found = cut(self, walk, kernel) if self.cut_fewer is not None else None
        if found is None:
            self.cut_fewer = None
        else:
            self.cut_fewer = max(self.cut_fewer, found[0])
            self.cut_laps |= found[1]
        self.seen = True

    def first_covered(
        self, walk: Walk, kernel: Kernel, loop: Operation, k: int, lap: int
    ) -> int | None:
        """The least option from which on every run n below the longest is run n - `lap`
        shifted by a lap, measured on the run of the longest (None: a loop of the choice
        is paced or walked more than once, its heads not those of one count). Run n is run
        T's up to the first read of n that differs (`trusted`): head j of `loop` in run n
        and head j - P in run n - P, both before it, are run T's heads j and j - P, the
        same state when j - P >= k; from there the two runs read their counts alike."""
        if not self.reduce:
            return None
        trusted = self.trusted_heads(walk, kernel, loop)
        if trusted is None:
            return None
        low = self.options[0] + lap
        for n in range(self.longest - 1, low - 1, -1):
            if min(trusted(n), trusted(n - lap) + lap) - 1 - lap < k:
                return n + 1
        return low

    def trusted_heads(
        self, walk: Walk, kernel: Kernel, loop: Operation
    ) -> Callable[[int], int] | None:
        """For `loop`'s walk in the run of the longest: how many of its heads come before
        run n reads n differently from run T, as a function of n. The first such read is
        the earliest, over every walk of every loop of the choice in every CTA, of the head
        that loop leaves at in run n, or of the head from which its conditions see the end
        (`Shape.tail`: `i + 1 < n`); what the rest of the kernel reads of n is the same for
        the options from `shape.start` on (`count_shape`)."""
        walks = []
        for other in self.choice.loops:
            trips = self.choice.trips(other, self.longest)
            theirs = walk.heads.get(other, []) + walk.peer_heads.get(other, [])
            if len(walk.heads.get(other, [])) != 1 or any(len(h.times) != trips for h in theirs):
                return None
            walks += [(other, kernel.loops[other].lap.tail, h.times) for h in theirs]
        mine = walk.heads[loop][0].times

        def trusted(n: int) -> int:
            differs = min(
                times[max(0, self.choice.trips(other, n) - tail)] for other, tail, times in walks
            )
            return bisect_right(mine, differs)

        return trusted

    def cover(
        self,
        loop: Operation,
        laps: list[tuple[int, int] | None],
        lead: int = 0,
        empty: SSAValue | None = None,
    ) -> None:
        """The `gap` the steady laps of `loop`'s walks to the longest leave, if any; `lead`:
        how far beyond its ring the first loop to end led it (its last heads are then not
        those of a longer run), `empty`: a bound the run took as giving no iteration."""
        shape = self.choice.shape
        for found in laps:
            if found is None and lead:
                why = (f"it still had {lead} iterations to go when another loop of its count "
                       "ended, more than its rings reach (the longest run is not the start of "
                       "a longer one)")  # fmt: skip
                self.gap = Opaque(loop, why)
                self.ahead = empty or True
                return
            if found is None:
                self.gap = Opaque(loop, "it reaches no steady state")
                self.unsteady = True
                return
            lap = found[1]
            if any(lap % p for p in (shape.period, *self.choice.paces, self.step)):
                why = f"what it reads of its count repeats every {shape.period} counts"
                self.gap = Opaque(shape.witness or loop, why)
                return
            if shape.start + lap > self.longest + self.step:
                why = f"its count is read differently from {shape.start} on"
                self.gap = Opaque(shape.starter or loop, why)
                return

    def last(self, kernel: Kernel) -> bool:
        """Whether the facts about n allow no count above the longest (`le`, or the
        quotients of a constant, `assumptions.derived`): nothing to cover."""
        value = self.choice.value
        fact = kernel.assumptions.fact(value) if isinstance(value, SSAValue) else None
        if fact is None:
            return False
        if fact.hi is not None and fact.hi <= self.longest:
            return True
        return fact.among is not None and not fact.down and max(fact.among) <= self.longest

    def kept(self) -> list[int]:
        """The options still to run: every one when a run of the longest did not settle
        or the options are not consecutive, else those below `fewer` that no cut of the
        longest's run gives; for a kernel of one count (`only`), the one that count
        behaves as."""
        if self.only is not None and self.unsteady and self.gap is not None:
            # (a kernel of one count whose longest run did not settle: no run below proves
            # it; the P10 warning of `uncovered` stands, or a longer walk replaces this one)
            return []
        prefix = self.shortened() if self.seen else None
        cuts = self.uncut() if self.seen and self.cut_fewer is not None else None
        if self.only is None and cuts is not None and prefix is not None:
            # An option either argument covers need not run: a run the prefix argument
            # leads to (n - P, below `fewer`) that is a cut of the longest's run does what
            # that run does.
            return [o for o in prefix if o in cuts[0]]
        if cuts is not None and (prefix is None or len(cuts[0]) < len(prefix)):
            kept, clear, lapped = cuts
            if clear:
                self.gap = None
            self.lapped = lapped
            return kept
        return self.options if prefix is None else prefix

    def shortened(self) -> list[int] | None:
        """`kept` by the prefix argument (`settled`): the options below `fewer`, of those
        for a kernel of one count the one it behaves as (None: no such argument)."""
        if self.fewer is None or not self.reduce:
            return None
        below = [o for o in self.options if o < self.fewer]
        if self.only is None or not self.laps or (self.only > self.longest and self.gap):
            return below
        n = self.stands_for(self.only)
        if n == self.longest:
            return []  # (its run is the longest's)
        return [n] if n in below else below

    def uncut(self) -> tuple[list[int], bool, int | None]:
        """`kept` by cuts (`cut`): the options below `cut_fewer` and those no cut of the
        longest gives (not T - m L); for a kernel of one count n, the one count m it behaves
        as, if that is not a cut: n itself, or for n above the longest, the count m = n - j L
        of the last lap (run n is run n - L with a lap more in each walk, down to m, whose
        run must then hold such laps too: `lapped`). With whether the choice's `gap` is no
        longer one (below) and the count to check so."""
        laps = lcm(*self.cut_laps)
        fewer = self.cut_fewer or 0
        rest = [o for o in self.options if o < fewer or (self.longest - o) % laps]
        n = self.only
        if n is None:
            return rest, False, None
        clear = False
        if n > self.longest:
            # The cuts made the other way add laps to the run of the longest (or of the
            # count n comes down to): they stand for n where what the count's reads need of
            # a run is only that its heads' state repeats (the choice's `obstacle`, a value
            # a loop carries, is then not one), from the longest on.
            if self.gap is not self.choice.obstacle or fewer > self.longest:
                return rest, False, None
            clear = self.gap is not None
        m = n if n <= self.longest else self.longest - (self.longest - n) % laps
        if m not in rest and (m == self.longest or m in self.options):
            return [], clear, None  # (its run is the longest's, or a cut of it)
        if m not in self.options:
            return rest, False, None
        return [m], clear, m if n > m else None

    def stands_for(self, n: int) -> int:
        """The count below `fewer` that count `n` behaves as: n - P behaves as n from
        `fewer` on, for each lap P the runs of the longest settled with (one per priority
        order and loop, `settled`); a step of their multiple L is L / P steps of P, each from
        at least fewer - min(P) + P, so n goes down by L to at least fewer - min(P)."""
        if n <= self.longest and n < (self.fewer or 0):
            return n
        laps = lcm(*self.laps)
        low = (self.fewer or 0) - min(self.laps)
        return low + (n - low) % laps


MOD_RING = (
    "compute what the protocol reads from the count as a function of it mod the ring (no "
    "comparison with a constant beyond the counts tried), or check the kernel at run time "
    "with --debug-guards"
)


def ahead_note(ahead: bool | SSAValue) -> str:
    """The fix for loops one ran ahead of beyond their rings: the fact that keeps an inner
    loop the run took empty (`empty_loop`) from being so."""
    if isinstance(ahead, SSAValue):
        name, kind = f"%{ahead.name_hint}", ahead.type
        return (
            f"in the runs with {name} = 0 the loops meet no ring; if every launch's {name} is "
            f"at least 1, state it after its definition (copy.assume {name} ge 1 : {kind}), "
            "or check the kernel at run time with --debug-guards"
        )
    return (
        "keep the loops in step through their rings (a loop that runs no iteration lets "
        "another run ahead: state with copy.assume that it runs at least one), or check the "
        "kernel at run time with --debug-guards"
    )


def empty_loop(walk: Walk, kernel: Kernel) -> SSAValue | None:
    """A loop bound the run took as giving no iteration (a K-block count of 0), by name."""
    for value, chosen in walk.bindings.items():
        if chosen == 0 and isinstance(value, SSAValue) and value in kernel.loop_bounds:
            if value.name_hint:
                return value
    return None


def lag(walk: Walk, loop: Operation, loops: list[Operation]) -> int:
    """The iterations `loop` (walked once) still had to go when the first other loop of its
    choice ended: how far the agent that ends first led this one. Run n is run T's only up to
    the heads before an agent reads n differently, so `loop`'s last heads to trust in run n
    are those before its lag (a consumer two rings behind a producer that ends at n)."""
    ends = [h.closed for other in loops if other is not loop
            for h in walk.heads.get(other, ()) if h.closed is not None]  # fmt: skip
    if not ends:
        return 0
    first = min(ends)
    return sum(1 for t in walk.heads[loop][0].times if t > first)


@dataclass
class CountChoice:
    """A choice of the driver that is a trip count: a grid-stride or work-counter loop's
    count (`LoopCount`), or the upper bound n of scf.for loops with constant starts and a
    step of 1; `loops`: those it counts; `shape`: how the rest of what the protocol reads
    depends on it (`counts.count_shape`)."""

    value: object
    counted: bool
    loops: list[Operation]
    shape: Shape
    paces: tuple[int, ...] = ()
    """The c of the loops that run floor((n + b) / c) iterations: a lap must shift their
    counts by whole iterations."""
    obstacle: Opaque | None = None
    """Why no run of a few counts stands for the others (a read of n that does not repeat
    with it, a loop that does not start at a constant): every count tried is then one the
    proof covers, and no other."""

    offsets: dict[Operation, int] = field(default_factory=dict)
    """The d of the loops to n + d (a consumer's loop to n - 1)."""

    cut: Shape | None = None
    """Where the `obstacle` is a value a loop carries: how what the protocol reads depends
    on the count when every value a loop's heads hold is taken as the same for every count,
    as a cut of whole laps keeps it (`cuts.cut`; None: no such shape)."""

    def counts(self, loop: Operation) -> bool:
        """Whether the option gives `loop`'s trip count (its start a constant, `trips`)."""
        return self.counted or constant_int(loop.lb) is not None  # type: ignore[attr-defined]

    def trips(self, loop: Operation, option: int) -> int:
        if self.counted:
            return option
        assert isinstance(loop, scf.ForOp)
        lb = constant_int(loop.lb)
        assert lb is not None  # count_choice
        return max(0, option + self.offsets.get(loop, 0) - lb)

    def option(self, loop: Operation, trips: int) -> int:
        if self.counted:
            return trips
        assert isinstance(loop, scf.ForOp)
        lb = constant_int(loop.lb)
        assert lb is not None
        return lb + trips - self.offsets.get(loop, 0)


def count_choice(kernel: Kernel, value: object) -> CountChoice | None:
    """`value` as a trip-count choice (with an `obstacle` when no run of a few counts can
    stand for the others: they are then all tried), or None when it counts no loop."""
    if isinstance(value, LoopCount):
        # n is the loops' count itself: what the protocol reads of it is what they leave
        loops = [loop for loop, key in kernel.counts.items() if key is value]
        trips = {loop: (1, 0) for loop in loops}
        got = count_shape(kernel.fn, set(), loops, kernel.protocol_ops, trips,  # type: ignore[arg-type]
                          kernel.assumptions.multiple)  # fmt: skip
        if isinstance(got, Opaque):
            return CountChoice(value, True, loops, Shape(), (), got)
        return CountChoice(value, True, loops, got)
    if not isinstance(value, SSAValue) or value not in kernel.loop_bounds:
        return None
    chosen = {value, *kernel.aliases.get(value, ())}
    loops: list[scf.ForOp] = []
    offsets: dict[Operation, int] = {}
    for bound, offset in bounds_of(chosen):
        for use in bound.uses:
            op = use.operation
            if isinstance(op, scf.ForOp) and use.index == 1 and op in kernel.loops:
                if constant_int(op.step) == 1 and base(op.lb) in chosen:
                    # from n + a to n + b (a load_tail after the ring position): b - a
                    # iterations for every n, its reads of n are `count_shape`'s
                    continue
                if constant_int(op.lb) is None or constant_int(op.step) != 1:
                    why = "its start is not a constant or its step is not 1"
                    return CountChoice(value, False, [op], Shape(), (), Opaque(op, why))
                loops.append(op)
                offsets[op] = offset
    if not loops:
        return None
    # the loops that run floor((n + b) / c) iterations (a pingpong consumer's share)
    paced = [loop for loop, shape in kernel.loops.items()
             if shape.pace[0] in chosen and loop not in loops]  # fmt: skip
    loops += paced  # type: ignore[arg-type]
    trips = {loop: (1, offsets[loop] - lb) for loop in loops
             if loop in offsets and (lb := constant_int(loop.lb)) is not None}  # fmt: skip
    shape = count_shape(kernel.fn, chosen, loops, kernel.protocol_ops, trips,  # type: ignore[arg-type]
                        kernel.assumptions.multiple)  # fmt: skip
    paces = tuple(kernel.loops[loop].pace[1] for loop in paced)
    if isinstance(shape, Opaque):
        held = {loop: s.state for loop, s in kernel.loops.items() if s.state}
        cut = count_shape(kernel.fn, chosen, loops, kernel.protocol_ops, trips,  # type: ignore[arg-type]
                          kernel.assumptions.multiple, held) if held else None  # fmt: skip
        found = CountChoice(value, False, list(loops), Shape(), paces, shape, offsets)
        found.cut = cut if isinstance(cut, Shape) else None
        return found
    return CountChoice(value, False, list(loops), shape, paces, None, offsets)


def bounds_of(chosen: set[SSAValue]) -> list[tuple[SSAValue, int]]:
    """The values `chosen` (n) and n plus or minus a constant, with that constant: the
    upper bounds of the loops the count n counts."""
    found = [(v, 0) for v in chosen]
    for v in chosen:
        for use in v.uses:
            op = use.operation
            if op.name in ("arith.addi", "arith.subi") and use.index == 0:
                c = constant_int(op.operands[1])
                if c is not None:
                    found.append((op.results[0], -c if op.name == "arith.subi" else c))
    return found


def uncovered(deferrals: list[Deferred], kernel: Kernel) -> list[ProtocolFinding]:
    """A warning for each trip count whose counts above the longest tried no run covers
    (`Deferred.gap`): none of them was tried, and none behaves like one that was."""
    found = []
    for d in deferrals:
        if not d.seen or d.gap is None:
            continue
        loop = d.choice.loops[0]
        name = describe({d.choice.value: d.longest}, kernel).removeprefix("found for ")
        # rule: P10
        found.append(
            warning(
                loop,
                f"cannot prove the copies of this loop beyond the counts tried (up to {name}): "
                f"{d.gap.why}, so a count not tried need not behave like one tried",
                ahead_note(d.ahead) if d.ahead else MOD_RING,
                *([Related(d.gap.op, "here")] if d.gap.op not in (None, loop) else []),
            )
        )
    return found


def nested_count(kernel: Kernel, choices: dict[object, CountChoice | None]) -> str | None:
    """For the P10 warning of too many runs: when a bound count's loops run inside a
    grid-stride or work-counter loop (a persistent kernel's K loop in its tile loop, every
    K tried under every tile count), the facts that let a few counts stand for all, as a note: K a
    multiple of the ring's lap and at least one lap (every tile then starts in the same
    slot and phase); None otherwise."""
    outer = [o for c in choices.values() if c is not None and c.counted for o in c.loops]
    for value, choice in choices.items():
        if choice is None or choice.counted or not isinstance(value, SSAValue):
            continue
        if not value.name_hint:
            continue
        if not any(o.is_ancestor(loop) for o in outer for loop in choice.loops):
            continue
        shapes = [kernel.loops[loop] for loop in choice.loops]
        lap = lcm(*(s.lap.period for s in shapes), *(2 * s.depth for s in shapes))
        name, kind = f"%{value.name_hint}", value.type
        return (
            f"if every launch's {name} is a multiple of {lap} and at least {lap}, state it "
            f"after its definition (copy.assume {name} multiple_of {lap} : {kind} and "
            f"copy.assume {name} ge {lap} : {kind}): every tile then starts in the same ring "
            "slot and phase, and a few counts stand for all (--debug-guards checks the facts "
            "at run time); else split the kernel, or check it at run time with --debug-guards"
        )
    return None
