"""The facts a kernel states with `copy.assume` (copy_dialect/assume.py), as the driver of the
protocol analysis uses them: an option that breaks a fact about the value it chooses (a loop
bound, a branch condition, or a value computed like one) is not tried. A trip count assumed
to be at least 1 is not tried as 0; a bound assumed a multiple of 8 is tried at 0, 8, 16.

The facts are the kernel author's claim, not proven here: `--debug-guards` checks them at
run time (AS3), and so does the interpreter. Dropping options stays sound for the counts the
facts allow: where a fact leaves out the longest count the driver tries (the run whose
steady state stands for every longer count), the first longer count it allows is tried in
its place; where a fact allows none of the options, all are tried."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from math import gcd, lcm

from xdsl.dialects import func
from xdsl.ir import SSAValue

from copy_dialect import ops as copy
from copy_dialect.verification import ops_of


@dataclass(frozen=True)
class Fact:
    """What every assumption about one value says together: at least `lo`, at most `hi`
    (None: no bound), a multiple of `step`."""

    lo: int | None
    hi: int | None
    step: int

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
        return (lo is None or n >= lo) and (hi is None or n <= hi) and n % self.step == 0

    def first_after(self, start: int, step: int) -> int | None:
        """The least `start + j * step` (j >= 1) the fact allows, None for none."""
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
        """The fact about `value` (a chosen SSA value), None for none."""
        if not self.ops or not isinstance(value, SSAValue):
            return None
        if value not in self.facts:
            # facts.py holds the kernel's Assumptions: its comparison is imported at use.
            from analysis.protocol.facts import equal_values

            canon, _ = equal_values([value, *(op.value for op in self.ops)])
            same = [op for op in self.ops if op.value is value or canon.get(op.value) is value]
            self.facts[value] = Fact.of(same) if same else None
        return self.facts[value]

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
