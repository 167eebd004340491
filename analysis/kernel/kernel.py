"""A kernel as the kernel rules read it: its function op and its ops in walk order, walked
once for all the rules (each rule scans the list; walking xDSL's IR is the costly part)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation


@dataclass(frozen=True)
class Kernel:
    op: Operation
    """The function (`func.func` or `gpu.func`)."""
    ops: tuple[Operation, ...]
    """Its ops in walk order, the function first."""

    @staticmethod
    def of(op: Operation) -> Kernel:
        return Kernel(op, tuple(op.walk()))
