"""copy-opt's diagnostics for the Python entry points: a parse, verification, legalize or
compile error becomes one `CopyDiagnosticError` whose text is what copy-opt prints for the
same IR (`FILE:LINE:COL: error: ...`, the source line and a caret, every note).

The locations are the ops' own: those of parsed text (named `<string>`, or the name the
caller gives), or of builder-made ops, which `frontends.locations` gives the Python line
that made them (their source lines come from Python's `linecache`). The errors and notes
are copy-opt's (`opt_verify.verify_diagnostics`, `opt_parser.parse_chunk`): the Python
error and the CLI's say the same thing at the same place.
"""

from __future__ import annotations

import linecache
import sys
from collections.abc import Mapping, Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from analysis.verify import verify_module as _verify_module
from copy_dialect.errors import CopyDiagnosticError
from copy_tools.diagnostics import Diagnostic, SourceFile, SourceLocation, render, split_chunks
from copy_tools.opt_parser import parse_chunk
from copy_tools.opt_verify import exception_location, op_location, verify_diagnostics
from frontends.locations import caller_frame, frame_position

STRING_NAME = "<string>"
"""The file name of MLIR text given as a string (copy-opt's is `<stdin>` for its input)."""

UNKNOWN = SourceLocation("<unknown>", 0, 0)


class Sources:
    """The text behind each file name a diagnostic may name: the MLIR text given, and
    Python files (of builder-made ops) read through `linecache`."""

    def __init__(self, given: Mapping[str, SourceFile] = {}):  # noqa: B006 (never mutated)
        self._files = dict(given)

    def get(self, name: str) -> SourceFile | None:
        if name not in self._files:
            lines = linecache.getlines(name)
            self._files[name] = SourceFile(name, "".join(lines)) if lines else None
        return self._files[name]

    def render(self, diagnostics: Sequence[Diagnostic]) -> str:
        return "".join(render(d, self.get(d.location.file)) for d in diagnostics)


def diagnostic_error(
    diagnostics: Sequence[Diagnostic],
    sources: Sources,
    rules: tuple[str, ...] = (),
    note: str | None = None,
) -> CopyDiagnosticError:
    """The exception for `diagnostics` (at least one error)."""
    table = tuple(
        (d.severity, (d.location.file, d.location.line, d.location.col), d.message)
        for d in diagnostics
    )
    return CopyDiagnosticError(sources.render(diagnostics).rstrip("\n"), table, rules, note)


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
    """`analysis.verify.verify_module`, its error raised as a CopyDiagnosticError."""
    try:
        _verify_module(module, protocol=protocol)
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
    """The CopyDiagnosticError for `exc`, raised on `module` (the IR as the user gave it).

    Where `module` fails verification, copy-opt's diagnostics of it: every failing op, its
    notes, the protocol's related accesses. Else (an error of a later stage: legalize, the
    lowering, the backend) `exc` itself at the op it names, with its note, the stage named.
    """
    fallback = fallback_location(module)
    rules = tuple(getattr(exc, "rules", ()) or ())
    note = getattr(exc, "note", None)
    note = note if isinstance(note, str) and note else None
    checked = verify_diagnostics(module, fallback, None, protocol)  # pyright: ignore[reportArgumentType]
    diagnostics = [d for d in checked if d.severity != "remark"]
    if any(d.severity == "error" for d in diagnostics):
        return diagnostic_error(diagnostics, sources, rules, note)
    loc = exception_location(exc, fallback)
    message = str(exc) if stage is None else f"{stage} failed: {exc}"
    found = [Diagnostic("error", loc, message)]
    if note:
        found.append(Diagnostic("note", loc, note))
    return diagnostic_error(found, sources, rules, note)
