"""Plain `xdsl-opt`'s errors as diagnostics, not tracebacks (installed by the universe).

xDSL 0.75's `xdsl-opt` lets every `DiagnosticException` (a parse error, a verifier error, a
failed pass) escape `main`, so Python prints a traceback, and xDSL's `Universe` (dialects,
passes, targets, frontends, none of whose names may clash with xDSL's) has no hook for error
reporting. What a plugin can do is what this module does: when the `xdsl.universe` entry
point is loaded inside the `xdsl-opt` program, it installs a `sys.excepthook` that prints such
an exception as a diagnostic: `FILE:LINE:COL: error: MESSAGE` with the source line for a
parse error; the message, xDSL's generic-form dump with the op underlined, and the copy
dialect's fix note for a verifier error. Exit status 1 as before; any other exception (a bug)
keeps its traceback, and so does everything with COPY_OPT_TRACEBACK=1.

xdsl-opt's parser gives ops no source locations, so a verifier error cannot be put at its
line: copy-opt can, and a note says so.
"""

from __future__ import annotations

import os
import sys
from types import TracebackType

TRACEBACK_ENV = "COPY_OPT_TRACEBACK"
XDSL_OPT_MODULE = "xdsl.tools.xdsl_opt"
PROGRAM = "xdsl-opt"
LOCATION_NOTE = (
    "xdsl-opt knows no source locations for ops; copy-opt reports this error at its line "
    "and column, with the source line (copy-opt FILE)"
)


def running_xdsl_opt() -> bool:
    """Whether this process is the `xdsl-opt` program (its script or `python -m`)."""
    main = sys.modules.get("__main__")
    if main is None:
        return False
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name == XDSL_OPT_MODULE:
        return True
    entry = getattr(main, "main", None)
    return getattr(entry, "__module__", None) == XDSL_OPT_MODULE


def install() -> None:
    """Install the hook, once, in the xdsl-opt program only."""
    if not running_xdsl_opt() or os.environ.get(TRACEBACK_ENV) == "1":
        return
    if getattr(sys.excepthook, "copy_dialect_hook", False):
        return
    previous = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        text = diagnostic_text(exc)
        if text is None:
            previous(kind, exc, tb)
        else:
            sys.stderr.write(text)
            sys.stderr.flush()

    hook.copy_dialect_hook = True  # pyright: ignore[reportFunctionMemberAccess]
    sys.excepthook = hook


def diagnostic_text(exc: BaseException) -> str | None:
    """The diagnostic for an xDSL DiagnosticException or ParseError; None for anything else."""
    from xdsl.utils.exceptions import DiagnosticException, ParseError

    if isinstance(exc, ParseError):
        context = exc.span.print_with_context(None).splitlines()[1:]
        lines = [f"{exc.span.get_location()}: error: {exc.msg.strip()}", *context]
        return "\n".join(lines) + "\n"
    if not isinstance(exc, DiagnosticException):
        return None
    lines = [f"{PROGRAM}: error: {exc}"]
    for note in getattr(exc, "__notes__", ()):
        lines.append(str(note).rstrip("\n"))
    note = getattr(exc, "note", None)
    if isinstance(note, str) and note:
        lines.append(f"{PROGRAM}: note: {note}")
    lines.append(f"{PROGRAM}: note: {LOCATION_NOTE}")
    return "\n".join(lines) + "\n"
