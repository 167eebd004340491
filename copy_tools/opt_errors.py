"""copy-opt's own failures: command-line and tool errors (one `copy-opt: error:` line),
internal errors (a bug, not the input: an error and a note), and its nesting limit."""

from __future__ import annotations

from collections.abc import Callable

from analysis.report import INTERNAL_ERROR_NOTE as INTERNAL_ERROR_NOTE  # shared with Python
from analysis.report import TRACEBACK_ENV as TRACEBACK_ENV
from analysis.report import internal_error as internal_error
from copy_tools.diagnostics import Diagnostic, SourceLocation

TOOL_NAME = "copy-opt"
STDIN_NAME = "<stdin>"

RECURSION_LIMIT = 100_000
"""Python frames allowed; about 10 000 levels of nested regions or 12 000 of `[`."""

NESTING_TOO_DEEP = (
    "nesting too deep: more than copy-opt's limit of {limit} Python frames while {stage}"
)


class ToolError(Exception):
    """A problem outside the input text: printed as one `copy-opt: error:` line."""


class UsageError(ToolError):
    """A bad command line."""


def guard_recursion(
    stage: str, loc: SourceLocation, action: Callable[[], list[Diagnostic]]
) -> list[Diagnostic]:
    try:
        return action()
    except RecursionError:
        message = NESTING_TOO_DEEP.format(limit=RECURSION_LIMIT, stage=stage)
        return [Diagnostic("error", loc, message)]
