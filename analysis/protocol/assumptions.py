"""The facts a kernel states with `copy.assume` (copy_dialect/assume.py), as the driver of the
protocol analysis uses them: an option that breaks a fact about the value it chooses (a loop
bound, a branch condition, or a value computed like one) is not tried. A trip count assumed
to be at least 1 is not tried as 0; a bound assumed a multiple of 8 is tried at 0, 8, 16.

The facts are the kernel author's claim, not proven here: `--debug-guards` checks them at
run time (AS3), and so does the interpreter. Dropping options stays sound for the counts the
facts allow: where a fact leaves out the longest count the driver tries (the run whose
steady state stands for every longer count), the first longer count it allows is tried in
its place; where a fact allows none of the options, all are tried.

What the IR itself proves about a chosen value joins those facts (`derived`): a constant
divided by a value the analysis does not know (split-K's `k_blocks / splits`, `splits` from
`gpu.grid_dim`) is one of the constant's quotients, so only those are tried."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from math import gcd, lcm

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from copy_dialect import ops as copy
from copy_dialect.verification import ops_of
from copy_dialect.verify_common import constant_int

QUOTIENTS_OF_AT_MOST = 1 << 16
"""The largest dividend whose quotients `derived` lists (at most 2 sqrt(c) of them)."""

UNSIGNED_DIVISIONS = {"arith.divui": False, "arith.ceildivui": True}
SIGNED_DIVISIONS = {"arith.divsi": False, "arith.floordivsi": False, "arith.ceildivsi": True}


@dataclass(frozen=True)
class Fact:
    """What every assumption about one value says together: at least `lo`, at most `hi`
    (None: no bound), a multiple of `step`."""

    lo: int | None
    hi: int | None
    step: int
    among: frozenset[int] | None = None
    """The values it can take at all (None: no such list); with `down`, every value <= 0
    too."""
    down: bool = False

    @staticmethod
    def of(ops: Sequence[copy.AssumeOp]) -> Fact:
        lows = [op.lo for op in ops if op.lo is not None]
        highs = [op.hi for op in ops if op.hi is not None]
        return Fact(
            max(lows) if lows else None,
            min(highs) if highs else None,
            lcm(*(op.step for op in ops)),
        )

    def holds(self, n: int) -> bool:
        lo, hi = self.lo, self.hi
        if (lo is not None and n < lo) or (hi is not None and n > hi) or n % self.step:
            return False
        return self.among is None or n in self.among or (self.down and n <= 0)

    def with_values(self, among: frozenset[int], down: bool) -> Fact:
        """The fact and: the value is one of `among` (or, with `down`, at most 0)."""
        return Fact(self.lo, self.hi, self.step, among, down)

    def first_after(self, start: int, step: int) -> int | None:
        """The least `start + j * step` (j >= 1) the fact allows, None for none."""
        if self.among is not None:
            above = [n for n in self.among if n > start and (n - start) % step == 0]
            return min((n for n in above if self.holds(n)), default=None)
        j = 1
        if self.lo is not None and start + step < self.lo:
            j = -(-(self.lo - start) // step)
        # start + j * step mod `self.step` repeats with period self.step / gcd(step, self.step).
        for k in range(j, j + self.step // gcd(step, self.step)):
            n = start + k * step
            if self.hi is not None and n > self.hi:
                return None
            if self.holds(n):
                return n
        return None


class Assumptions:
    """The kernel's `copy.assume` ops, and the fact about each value the driver asks of
    (every assumption about it, or about a value computed alike: `facts.equal_values`)."""

    def __init__(self, ops: Sequence[copy.AssumeOp]):
        self.ops = tuple(ops)
        self.facts: dict[SSAValue, Fact | None] = {}

    @staticmethod
    def of(fn: func.FuncOp) -> Assumptions:
        return Assumptions([op for op in ops_of(fn) if isinstance(op, copy.AssumeOp)])

    def fact(self, value: Hashable) -> Fact | None:
        """The fact about `value` (a chosen SSA value), None for none: the assumptions
        about it and what the op that computes it proves (`derived`)."""
        if not isinstance(value, SSAValue):
            return None
        if value not in self.facts:
            fact = None
            if self.ops:
                # facts.py holds the kernel's Assumptions: its comparison is imported at use.
                from analysis.protocol.facts import equal_values

                canon, _ = equal_values([value, *(op.value for op in self.ops)])
                same = [op for op in self.ops if op.value is value or canon.get(op.value) is value]
                fact = Fact.of(same) if same else None
            values = derived(value)
            if values is not None:
                fact = (fact or Fact(None, None, 1)).with_values(*values)
            self.facts[value] = fact
        return self.facts[value]

    def multiple(self, value: SSAValue) -> int:
        """What `value` is stated a multiple of (1 when nothing is stated): a counter that
        grows by it each iteration then repeats its residues sooner (`periods.rem`)."""
        fact = self.fact(value) if self.ops else None
        return 1 if fact is None else fact.step

    def options(self, value: Hashable, options: Sequence[int]) -> Sequence[int]:
        """The `options` for `value` (a branch condition's 1 and 0) that its fact allows;
        all of them where it allows none."""
        fact = self.fact(value)
        if fact is None:
            return options
        return [o for o in options if fact.holds(o)] or options

    def trips(self, bound: Hashable, lb: int, step: int, counts: int) -> list[int]:
        """The values tried for the bound of a loop `for i = lb to bound step step`: the
        bounds of 0 to `counts` iterations that the fact about `bound` allows; where it
        leaves out `counts` iterations, the first longer count it allows in their place."""
        bounds = [lb + n * step for n in range(counts + 1)]
        fact = self.fact(bound)
        if fact is None:
            return bounds
        kept = [b for b in bounds if fact.holds(b)]
        longer = None if fact.holds(bounds[-1]) else fact.first_after(bounds[-1], step)
        if longer is not None:
            kept.append(longer)
        return kept or bounds


def derived(value: SSAValue) -> tuple[frozenset[int], bool] | None:
    """The values `value` can take, as its op proves them, for a constant c (0 <= c <=
    `QUOTIENTS_OF_AT_MOST`) divided by a value that is not a constant: c's quotients by
    1, 2, ... (a divisor of 0 is undefined behaviour in `arith`), with 0 for the divisors
    above c (rounded down); a signed division may also divide by a negative value, whose
    quotients are at most 0 (the flag). None for any other value."""
    op = value.owner
    if not isinstance(op, Operation) or len(op.operands) != 2:
        return None
    ceil = UNSIGNED_DIVISIONS.get(op.name, SIGNED_DIVISIONS.get(op.name))
    c = constant_int(op.operands[0])
    if ceil is None or c is None or not 0 <= c <= QUOTIENTS_OF_AT_MOST:
        return None
    if constant_int(op.operands[1]) is not None:
        return None  # (a constant: the value is a constant the walk computes)
    quotients = {0} if c == 0 or not ceil else set()
    d = 1
    while d <= c:
        q = -(-c // d) if ceil else c // d
        quotients.add(q)
        # the next divisor with another quotient
        d = (-(-c // (q - 1)) if q > 1 else c + 1) if ceil else c // q + 1
    return frozenset(quotients), op.name in SIGNED_DIVISIONS
