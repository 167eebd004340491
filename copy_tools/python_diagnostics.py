"""copy-opt's diagnostics for the Python entry points: a parse, verification, legalize or
compile error becomes one `CopyDiagnosticError` whose text is what copy-opt prints for the
same IR (`FILE:LINE:COL: error: ...`, the source line and a caret, every note).

The locations are the ops' own: those of parsed text (named `<string>`, or the name the
caller gives), or of builder-made ops, which `frontends.locations` gives the Python line
that made them (their source lines come from Python's `linecache`). The errors and notes
are copy-opt's (`analysis.report.verify_diagnostics`, `opt_parser.parse_chunk`): the Python
error and the CLI's say the same thing at the same place.
"""

from __future__ import annotations

import sys

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from analysis.report import UNKNOWN, Sources, op_location
from analysis.report import diagnostic_error as diagnostic_error
from analysis.report import failure as _failure
from analysis.verify import check_module
from copy_dialect.errors import CopyDiagnosticError
from copy_tools.diagnostics import Diagnostic, SourceFile, SourceLocation, split_chunks
from copy_tools.opt_parser import parse_chunk
from frontends.locations import caller_frame, frame_position

STRING_NAME = "<string>"
"""The file name of MLIR text given as a string (copy-opt's is `<stdin>` for its input)."""


def python_caller() -> SourceLocation:
    """Where the user called the entry point: the first frame outside the project's
    packages (the fallback location of IR that has none)."""
    frame = sys._getframe(1)
    while frame is not None:
        module = str(frame.f_globals.get("__name__", "")).partition(".")[0]
        if module not in INTERNAL_PACKAGES:
            found = caller_frame(frame)
            if found is not None:
                return SourceLocation(*frame_position(found))
        frame = frame.f_back
    return UNKNOWN


INTERNAL_PACKAGES = (
    "copy_tools", "copy_dialect", "analysis", "passes", "frontends", "runtime", "xdsl",
    "interpreter", "contextlib",
)  # fmt: skip
"""Packages the fallback location skips: the user's call is outside them."""


def parse(ctx: Context, text: str, name: str = STRING_NAME) -> tuple[ModuleOp, Sources]:
    """Parse MLIR text as copy-opt does (every op located in `name`); a parse error raises
    the CopyDiagnosticError copy-opt prints for it."""
    source = SourceFile(name, text)
    chunk = split_chunks(source, split=False)[0]
    diagnostics: list[Diagnostic] = []
    module = parse_chunk(ctx, source, chunk, True, diagnostics)
    sources = Sources({name: source})
    if module is None:
        raise diagnostic_error(diagnostics, sources)
    return module, sources


def fallback_location(module: Operation) -> SourceLocation:
    """The module's location, else the user's call (a module built in Python has none)."""
    found = op_location(module, UNKNOWN)
    return found if found != UNKNOWN else python_caller()


def verify(module: Operation, *, protocol: bool = True, sources: Sources | None = None) -> None:
    """`analysis.verify.verify_module`, its error raised as a CopyDiagnosticError whose
    source lines are those of `sources`."""
    try:
        check_module(module, protocol=protocol)
    except DiagnosticException as exc:
        raise failure(exc, module, sources or Sources(), protocol=protocol) from None


def failure(
    exc: DiagnosticException,
    module: Operation,
    sources: Sources,
    *,
    protocol: bool = True,
    stage: str | None = None,
) -> CopyDiagnosticError:
    """`analysis.report.failure`, an error with no location reported at the module's, else
    at the user's call (`fallback_location`)."""
    return _failure(
        exc, module, sources, protocol=protocol, stage=stage, fallback=fallback_location(module)
    )
