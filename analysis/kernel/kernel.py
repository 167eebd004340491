"""A kernel as the kernel rules read it: its function op and its ops in walk order, walked
once for all the rules (each rule scans the list; walking xDSL's IR is the costly part), and
indexed once by op class, so that a rule about a few kinds of ops reads only those
(`instances`, `with_trait`) instead of testing every op of the kernel."""

from __future__ import annotations

from dataclasses import dataclass, field
from heapq import merge
from typing import TypeVar, cast

from xdsl.ir import Operation
from xdsl.traits import OpTrait

from copy_dialect.verification import ops_of

OpT = TypeVar("OpT", bound=Operation)


@dataclass(frozen=True)
class Kernel:
    op: Operation
    """The function (`func.func` or `gpu.func`)."""
    ops: tuple[Operation, ...]
    """Its ops in walk order, the function first."""
    positions: dict[type[Operation], list[int]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """Per op class, where its ops lie in `ops` (ascending)."""

    @staticmethod
    def of(op: Operation) -> Kernel:
        ops = ops_of(op)
        positions: dict[type[Operation], list[int]] = {}
        for n, o in enumerate(ops):
            at = positions.get(type(o))
            if at is None:
                positions[type(o)] = [n]
            else:
                at.append(n)
        return Kernel(op, ops, positions)

    def instances(self, *classes: type[OpT]) -> list[OpT]:
        """The ops that are instances of one of `classes`, in walk order: `[o for o in
        self.ops if isinstance(o, classes)]`."""
        found = self._at([at for t, at in self.positions.items() if issubclass(t, classes)])
        return cast(list[OpT], found)

    def with_trait(self, trait: type[OpTrait]) -> list[Operation]:
        """The ops whose class has a trait of type `trait` (traits are the class's), in walk
        order: `[o for o in self.ops if o.has_trait(trait)]`."""
        return self._at([at for t, at in self.positions.items() if t.has_trait(trait)])

    def _at(self, lists: list[list[int]]) -> list[Operation]:
        ops = self.ops
        if len(lists) == 1:
            return [ops[n] for n in lists[0]]
        return [ops[n] for n in merge(*lists)]
