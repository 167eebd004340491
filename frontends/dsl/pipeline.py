"""Ring positions of the concise kernel-building API: a ring of `stages` slots, each with a
barrier per slot, gives a position's slot and its barrier phase's parity in one call (as
CUTLASS's `PipelineState` or Gluon's `index, phase`).

Position p (a running count of the ring's uses) is in slot `p % stages`, on lap
`p // stages`; the barrier of its slot completes one phase per lap, so a consumer waits
for the parity of lap `p // stages` and a producer, whose first lap must not wait (the
phase before a barrier's first counts as complete: CUTLASS's producer state starts at
phase 1), for its opposite.

    ring = Ring(4)
    slot, parity = ring.at(p)               # consumer: wait(full, slot, parity)
    slot, parity = ring.producer_at(p)      # producer: wait(empty, slot, parity)"""

from __future__ import annotations

from dataclasses import dataclass

from frontends.dsl.values import Operand, Value, as_ssa
from frontends.locations import helper_module

helper_module(__name__)  # an op made here is located at the line that called it


def parity(lap: Value) -> Value:
    """The i1 parity of phase `lap` of a barrier (`lap % 2 != 0`)."""
    return (lap % 2).ne(0)


@dataclass(frozen=True)
class Ring:
    """A ring of `stages` slots (and a barrier per slot in each barrier group)."""

    stages: int

    def __post_init__(self) -> None:
        if not isinstance(self.stages, int) or self.stages < 1:
            raise ValueError(f"expected a ring of 1 or more stages, got {self.stages!r}")

    def slot(self, p: Operand) -> Value:
        return _value(p) % self.stages

    def lap(self, p: Operand) -> Value:
        return _value(p) // self.stages

    def at(self, p: Operand) -> tuple[Value, Value]:
        """Position p's slot and the parity its consumer waits for (lap's)."""
        slot = self.slot(p)
        return slot, parity(self.lap(p))

    def producer_at(self, p: Operand) -> tuple[Value, Value]:
        """Position p's slot and the parity its producer waits for (the lap before's, the
        phase before the first counting as complete: the opposite of `at`'s)."""
        slot, consumer = self.at(p)
        return slot, consumer ^ True


def _value(p: Operand) -> Value:
    return p if isinstance(p, Value) else Value(as_ssa(p))
