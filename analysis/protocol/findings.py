"""What the protocol analysis reports: errors (a kernel that races, hangs or leaves work in
flight) and warnings (what it cannot prove), each at the op it concerns, with the ops it
races with as notes and the fix.

A finding is a `CopyVerifyException`, so that its rule id is read, as for every check of the
dialect, from the `# rule: ID` comment above the line that makes it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from xdsl.ir import Operation

from copy_dialect.errors import CopyVerifyException, check_sites

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Related:
    """An op a finding refers to (the copy a read races with, the wait that returns at once),
    and what it is to the finding."""

    op: Operation
    text: str


class ProtocolFinding(CopyVerifyException):
    """An error or warning of the protocol analysis at `op`.

    `str(self)` is the message, `self.note` the fix, `self.related` the ops it names, in the
    order copy-opt prints them as notes; `self.context` says for which trip counts or branch
    of the kernel it was found, when the analysis chose them."""

    def __init__(
        self,
        severity: Severity,
        op: Operation,
        message: str,
        note: str,
        related: tuple[Related, ...] = (),
    ):
        super().__init__(message, note=note)
        self.severity: Severity = severity
        self.op = op
        self.related = related
        self.context = ""

    @property
    def key(self) -> tuple[object, ...]:
        """Findings of several runs of one kernel (trip counts, branches, ring slots) are one
        finding when they are of one rule at one op."""
        return (self.severity, id(self.op), self.rules)


Report = Callable[[ProtocolFinding], None]
"""Where the parts of the analysis hand their findings (the run's first error ends it)."""


def error(op: Operation, message: str, note: str, *related: Related) -> ProtocolFinding:
    return _made_here(ProtocolFinding("error", op, message, note, related))


def warning(op: Operation, message: str, note: str, *related: Related) -> ProtocolFinding:
    return _made_here(ProtocolFinding("warning", op, message, note, related))


def _made_here(finding: ProtocolFinding) -> ProtocolFinding:
    """The finding's rule ids are those of the check that called `error` or `warning`."""
    finding.origin = check_sites(sys._getframe(2))
    return finding
