"""copy-opt's own failures: command-line and tool errors (one `copy-opt: error:` line),
internal errors (a bug, not the input: an error and a note), and its nesting limit."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable

from copy_tools.diagnostics import Diagnostic, SourceLocation

TOOL_NAME = "copy-opt"
STDIN_NAME = "<stdin>"
TRACEBACK_ENV = "COPY_OPT_TRACEBACK"

RECURSION_LIMIT = 100_000
"""Python frames allowed; about 10 000 levels of nested regions or 12 000 of `[`."""

INTERNAL_ERROR_NOTE = (
    "this is a bug in copy-opt or in the dialect or pass it ran, not in the input; "
    f"please report it with the input and command line ({TRACEBACK_ENV}=1 prints "
    "the Python traceback)"
)
NESTING_TOO_DEEP = (
    "nesting too deep: more than copy-opt's limit of {limit} Python frames while {stage}"
)


class ToolError(Exception):
    """A problem outside the input text: printed as one `copy-opt: error:` line."""


class UsageError(ToolError):
    """A bad command line."""


def internal_error(where: str, exc: BaseException, loc: SourceLocation) -> list[Diagnostic]:
    """An error and a note for an unexpected Python exception (a bug, not bad input)."""
    if os.environ.get(TRACEBACK_ENV) == "1":
        traceback.print_exception(exc, file=sys.stderr)
    return [
        Diagnostic("error", loc, f"internal error in {where}: {type(exc).__name__}: {exc}"),
        Diagnostic("note", loc, INTERNAL_ERROR_NOTE),
    ]


def guard_recursion(
    stage: str, loc: SourceLocation, action: Callable[[], list[Diagnostic]]
) -> list[Diagnostic]:
    try:
        return action()
    except RecursionError:
        message = NESTING_TOO_DEEP.format(limit=RECURSION_LIMIT, stage=stage)
        return [Diagnostic("error", loc, message)]
