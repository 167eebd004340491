"""A module's verification as diagnostics (what copy-opt prints for it), and the one
exception the Python entry points raise for it.

`verify_diagnostics`: op by op and the kernel rules (`analysis.verify`: the path
`compile_module` takes too), each failing op reported at its location, then SSA dominance,
then the protocol; `op_location`: where to report a diagnostic about an op. `failure`: the
`CopyDiagnosticError` for an error raised on a module, whose text is copy-opt's for it
(`analysis.verify.verify_module`, `copy_tools.runtime` and the builders raise it); the
source lines shown come from the text given (`Sources`) or Python's `linecache` (the files
of builder-made ops)."""

from __future__ import annotations

import linecache
import os
import sys
import traceback
from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import CallSiteLoc, FileLineColLoc, FusedLoc, ModuleOp, NameLoc
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import DiagnosticException

from analysis.diagnostics import Diagnostic, SourceFile, SourceLocation, render
from analysis.dominance import non_dominating_uses
from analysis.protocol import check_protocol
from analysis.verify import verification_errors
from copy_dialect.effects import op_name
from copy_dialect.errors import CopyDiagnosticError
from copy_dialect.verification import verification_run

TRACEBACK_ENV = "COPY_OPT_TRACEBACK"

INTERNAL_ERROR_NOTE = (
    "this is a bug in copy-opt or in the dialect or pass it ran, not in the input; "
    f"please report it with the input and command line ({TRACEBACK_ENV}=1 prints "
    "the Python traceback)"
)

UNKNOWN = SourceLocation("<unknown>", 0, 0)


def internal_error(where: str, exc: BaseException, loc: SourceLocation) -> list[Diagnostic]:
    """An error and a note for an unexpected Python exception (a bug, not bad input)."""
    if os.environ.get(TRACEBACK_ENV) == "1":
        traceback.print_exception(exc, file=sys.stderr)
    return [
        Diagnostic("error", loc, f"internal error in {where}: {type(exc).__name__}: {exc}"),
        Diagnostic("note", loc, INTERNAL_ERROR_NOTE),
    ]


def _file_location(loc: Attribute) -> SourceLocation | None:
    """The file position inside a location attribute, if it has one."""
    match loc:
        case FileLineColLoc():
            return SourceLocation(loc.filename.data, loc.line.data, loc.column.data)
        case NameLoc():
            return _file_location(loc.location)
        case CallSiteLoc():
            return _file_location(loc.callee)
        case FusedLoc():
            for inner in loc.locations.data:  # pyright: ignore[reportAttributeAccessIssue]
                if (found := _file_location(inner)) is not None:
                    return found
    return None


def op_message(name: str, message: object) -> str:
    """mlir-opt's `'<op>' op <message>`; a message that names its op first (as the API's
    errors do, where nothing else names it: "'copy.prefetch' needs a target with TMA ...")
    names it once."""
    text = str(message)
    own = f"'{name}' "
    return f"{own}op {text.removeprefix(own)}"


def op_location(op: Operation, fallback: SourceLocation) -> SourceLocation:
    """Where to report a diagnostic about `op`.

    The op's own file location, else (ops created by passes have none) that of the
    nearest enclosing op that has one, else `fallback` (the start of the chunk).
    """
    current: Operation | None = op
    while current is not None:
        if (loc := _file_location(current.location)) is not None:
            return loc
        current = current.parent_op()
    return fallback


def exception_location(exc: BaseException, fallback: SourceLocation) -> SourceLocation:
    """Where a pass or the translation failed: at the op the exception names, if any."""
    op = getattr(exc, "op", None)
    return op_location(op, fallback) if isinstance(op, Operation) else fallback


def verify_diagnostics(
    module: ModuleOp, fallback: SourceLocation, after_pass: str | None, protocol: bool = True
) -> list[Diagnostic]:
    """Verify op by op, nested ops first, and the kernel rules; one error (plus notes) per
    failing op; then SSA
    dominance; then, with `protocol`, the copy protocol of each kernel (its errors and
    warnings). `after_pass` names the pass that ran last, if any (a note blames it). One
    verification run (the protocol analysis reads the geometry the op verifiers decoded)."""
    with verification_run():
        return _verify_diagnostics(module, fallback, after_pass, protocol)


def _verify_diagnostics(
    module: ModuleOp, fallback: SourceLocation, after_pass: str | None, protocol: bool
) -> list[Diagnostic]:
    diagnostics: list[Diagnostic] = []
    for op, exc in verification_errors(module):
        loc = op_location(op, fallback)
        if not isinstance(exc, DiagnosticException):
            diagnostics.extend(internal_error(f"verifier of '{op.name}'", exc, loc))
            continue
        diagnostics.append(Diagnostic("error", loc, op_message(op_name(op), exc)))
        note = getattr(exc, "note", None)
        if isinstance(note, str) and note:
            diagnostics.append(Diagnostic("note", loc, note))
        if after_pass is not None:
            diagnostics.append(
                Diagnostic("note", loc, f"the op was left invalid by pass '{after_pass}'")
            )
    if diagnostics:
        return diagnostics
    # As in mlir-opt, dominance is checked once every op verified.
    diagnostics = dominance_diagnostics(module, fallback, after_pass)
    if diagnostics or not protocol:
        return diagnostics
    # The copy protocol of whole kernels, once every op and value is well formed.
    try:
        findings = check_protocol(module)
    except (RecursionError, MemoryError):
        raise
    except Exception as exc:
        return internal_error("the protocol analysis", exc, fallback)
    for finding in findings:
        loc = op_location(finding.op, fallback)
        message = op_message(op_name(finding.op), finding)
        diagnostics.append(Diagnostic(finding.severity, loc, message))
        for related in finding.related:
            diagnostics.append(Diagnostic("note", op_location(related.op, fallback), related.text))
        diagnostics.append(Diagnostic("note", loc, finding.note or ""))
        if finding.context:
            diagnostics.append(Diagnostic("note", loc, finding.context))
    return diagnostics


def dominance_diagnostics(
    module: ModuleOp, fallback: SourceLocation, after_pass: str | None
) -> list[Diagnostic]:
    """mlir-opt's `operand #N does not dominate this use`, with notes, per bad use."""
    diagnostics: list[Diagnostic] = []
    for use in non_dominating_uses(module):
        loc = op_location(use.user, fallback)
        definer = use.definer
        diagnostics.append(Diagnostic("error", loc, use.message))
        where = loc if definer is None else op_location(definer, fallback)
        diagnostics.append(Diagnostic("note", where, use.defined_here))
        diagnostics.append(Diagnostic("note", loc, use.fix))
        if after_pass is not None:
            diagnostics.append(
                Diagnostic("note", loc, f"the op was left invalid by pass '{after_pass}'")
            )
    return diagnostics


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


def failure(
    exc: DiagnosticException,
    module: Operation,
    sources: Sources,
    *,
    protocol: bool = True,
    stage: str | None = None,
    fallback: SourceLocation | None = None,
) -> CopyDiagnosticError:
    """The CopyDiagnosticError for `exc`, raised on `module` (the IR as the user gave it).

    Where `module` fails verification, copy-opt's diagnostics of it: every failing op, its
    notes, the protocol's related accesses. Else (an error of a later stage: legalize, the
    lowering, the backend) `exc` itself at the op it names, with its note, the stage named.
    `fallback`: where an error with no location is reported (the module's location by
    default)."""
    fallback = fallback or op_location(module, UNKNOWN)
    rules = tuple(getattr(exc, "rules", ()) or ())
    note = getattr(exc, "note", None)
    note = note if isinstance(note, str) and note else None
    checked = verify_diagnostics(module, fallback, None, protocol)  # pyright: ignore[reportArgumentType]
    diagnostics = [d for d in checked if d.severity != "remark"]
    if any(d.severity == "error" for d in diagnostics):
        return diagnostic_error(diagnostics, sources, rules, note)
    if isinstance(exc, CopyDiagnosticError):
        return exc  # already copy-opt's text (raised by `analysis.verify.verify_module`)
    loc = exception_location(exc, fallback)
    message = str(exc) if stage is None else f"{stage} failed: {exc}"
    found = [Diagnostic("error", loc, message)]
    if note:
        found.append(Diagnostic("note", loc, note))
    return diagnostic_error(found, sources, rules, note)
