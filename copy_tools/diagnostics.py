"""Source text, diagnostics and `--verify-diagnostics` checking for copy-opt.

Everything here is independent of xDSL's IR: it deals with the input text (decoding,
`// -----` chunks), with diagnostics (`FILE:LINE:COL: error: msg`, rendered like mlir-opt
with the source line and a caret: `analysis.diagnostics`, which the Python entry points
share, re-exported here), and with the `expected-*` comments that `--verify-diagnostics`
checks the produced diagnostics against.

Lines are 1-based; columns are 1-based and count Unicode code points (mlir-opt counts
bytes; the two agree on ASCII input).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from analysis.diagnostics import Diagnostic as Diagnostic  # the diagnostics themselves
from analysis.diagnostics import Severity as Severity
from analysis.diagnostics import SourceFile as SourceFile
from analysis.diagnostics import SourceLocation as SourceLocation
from analysis.diagnostics import escape_control_chars as escape_control_chars
from analysis.diagnostics import render as render
from analysis.diagnostics import render_all as render_all

SPLIT_MARKER = "// -----"
"""The line that separates chunks with `--split-input-file` (and joins output chunks)."""

_SPLIT_LINE = re.compile(r"^[ \t]*// -----[^\n]*(?:\n|\Z)", re.MULTILINE)
_BOM = "\ufeff"


@dataclass(frozen=True)
class Chunk:
    """A part of the input processed on its own (the whole input without splitting)."""

    text: str
    start: int
    """Index of the chunk's first character in the whole input text."""
    first_line: int
    """Line of the whole input on which the chunk starts."""
    last_line: int
    """Last line of the whole input that belongs to the chunk."""


class InvalidInputEncoding(Exception):
    """The input is not valid UTF-8; `diagnostic` says where."""

    def __init__(self, source: SourceFile, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.source = source
        self.diagnostic = diagnostic


def decode_source(name: str, data: bytes) -> SourceFile:
    """Decode the input as UTF-8, or raise InvalidInputEncoding at the first bad byte.

    A leading byte-order mark is replaced by a space, so that columns stay the same.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        shown = SourceFile(name, data.decode("utf-8", errors="replace"))
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, line_start) + 1
        col = len(data[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        message = (
            f"invalid UTF-8 byte 0x{data[exc.start]:02x}: the input must be UTF-8 encoded MLIR text"
        )
        raise InvalidInputEncoding(
            shown, Diagnostic("error", SourceLocation(name, line, col), message)
        ) from None
    if text.startswith(_BOM):
        text = " " + text[1:]
    return SourceFile(name, text)


def split_chunks(source: SourceFile, split: bool) -> list[Chunk]:
    """The chunks of the input: split on `// -----` lines if `split`, else one chunk.

    The marker lines belong to no chunk, so a chunk's first line is the line after its
    marker, and positions in a chunk map back to the whole input through `Chunk.start`.
    """
    text = source.text
    if not split:
        return [Chunk(text, 0, 1, source.line_count)]
    chunks: list[Chunk] = []
    start = 0
    for marker in _SPLIT_LINE.finditer(text):
        chunks.append(_make_chunk(source, start, marker.start()))
        start = marker.end()
    chunks.append(_make_chunk(source, start, len(text)))
    return chunks


def _make_chunk(source: SourceFile, start: int, end: int) -> Chunk:
    first_line = source.location(start).line
    last_line = source.location(max(start, end - 1)).line
    return Chunk(source.text[start:end], start, first_line, last_line)


# --- --verify-diagnostics ------------------------------------------------------------

_DIRECTIVE = re.compile(
    r"expected-(?P<severity>error|warning|note|remark)(?P<re>-re)?"
    r"(?: *@(?P<offset>[+-][0-9]+|above|below))?"
    r"(?P<body> *\{\{(?P<message>.*)\}\})?"
)
_REGEX_PART = re.compile(r"\{\{(.*?)\}\}")


@dataclass
class Expectation:
    """One `expected-*` comment: a diagnostic that must be produced at `line`."""

    severity: Severity
    line: int
    """The line the diagnostic is expected on."""
    location: SourceLocation
    """Where the `expected-*` comment itself is (for 'was not produced' errors)."""
    text: str
    """The message as written between `{{` and `}}`."""
    pattern: re.Pattern[str] | None = None
    """For `expected-*-re`: literal text with `{{regex}}` parts, compiled."""
    matched: bool = field(default=False, compare=False)

    def matches(self, message: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(message) is not None
        return self.text in message


def _compile_expectation_regex(text: str) -> re.Pattern[str]:
    """`a {{[0-9]+}} b` matches `a `, then the regex `[0-9]+`, then ` b` (mlir-opt -re)."""
    parts: list[str] = []
    last = 0
    for m in _REGEX_PART.finditer(text):
        parts.append(re.escape(text[last : m.start()]))
        parts.append(f"(?:{m.group(1)})")
        last = m.end()
    parts.append(re.escape(text[last:]))
    return re.compile("".join(parts))


def parse_expectations(
    source: SourceFile, chunk: Chunk
) -> tuple[list[Expectation], list[Diagnostic]]:
    """Collect the `expected-*` comments of a chunk, and errors for malformed ones.

    Supports `expected-error {{msg}}` (same line), `@+N`/`@-N` (relative line),
    `@above`/`@below` (nearest line before/after that has no `expected-*` comment),
    the `-re` suffix (`{{regex}}` parts inside the message), and the severities
    error, warning, note and remark, like mlir-opt.
    """
    found: list[tuple[int, re.Match[str]]] = []
    for line in range(chunk.first_line, chunk.last_line + 1):
        text = source.line_text(line) or ""
        if (m := _DIRECTIVE.search(text)) is not None:
            found.append((line, m))
    directive_lines = {line for line, _ in found}
    expectations: list[Expectation] = []
    errors: list[Diagnostic] = []
    for line, m in found:
        location = SourceLocation(source.name, line, m.start() + 1)
        severity: Severity = m.group("severity")  # pyright: ignore[reportAssignmentType]
        name = m.group(0).split("{{", 1)[0].strip()
        if m.group("body") is None:
            errors.append(
                Diagnostic(
                    "error", location, f"{name} needs a message: write {name} {{{{message}}}}"
                )
            )
            continue
        target = _target_line(line, m.group("offset"), directive_lines, chunk)
        if target is None:
            errors.append(
                Diagnostic(
                    "error", location, f"{name}: no line without an expected-* comment there"
                )
            )
            continue
        text = m.group("message")
        pattern = None
        if m.group("re"):
            try:
                pattern = _compile_expectation_regex(text)
            except re.error as exc:
                errors.append(Diagnostic("error", location, f"invalid regex in {name}: {exc}"))
                continue
        expectations.append(Expectation(severity, target, location, text, pattern))
    return expectations, errors


def _target_line(
    line: int, offset: str | None, directive_lines: set[int], chunk: Chunk
) -> int | None:
    if offset is None:
        return line
    if offset in ("above", "below"):
        step = -1 if offset == "above" else 1
        target = line + step
        while chunk.first_line <= target <= chunk.last_line:
            if target not in directive_lines:
                return target
            target += step
        return None
    return line + int(offset)


def check_expectations(
    diagnostics: Sequence[Diagnostic], expectations: Sequence[Expectation], file: str
) -> list[Diagnostic]:
    """Match produced diagnostics against expectations; return the mismatches as errors.

    Like mlir-opt: a diagnostic matches an expectation of the same severity on its line
    whose message is a substring of it (or whose regex matches it); every produced
    diagnostic, notes included, must be expected, and every expectation produced.
    """
    problems: list[Diagnostic] = []
    for diag in diagnostics:
        loc = diag.location
        candidates = [
            e
            for e in expectations
            if loc.file == file and e.line == loc.line and e.matches(diag.message)
        ]
        same_kind = [e for e in candidates if e.severity == diag.severity]
        if same_kind:
            unmatched = [e for e in same_kind if not e.matched]
            (unmatched or same_kind)[0].matched = True
        elif candidates:
            near_miss = candidates[0]
            problems.append(
                Diagnostic(
                    "error",
                    near_miss.location,
                    f"'{diag.severity}' diagnostic emitted when expecting a '{near_miss.severity}'",
                )
            )
        else:
            problems.append(Diagnostic("error", loc, f"unexpected {diag.severity}: {diag.message}"))
    for e in expectations:
        if not e.matched:
            problems.append(
                Diagnostic(
                    "error", e.location, f'expected {e.severity} "{e.text}" was not produced'
                )
            )
    return problems
