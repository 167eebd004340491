"""Diagnostics in mlir-opt's form, independent of xDSL's IR: a position in a file, a
diagnostic (an error, a warning, a remark, or a note attached to the one before) and its
text, `FILE:LINE:COL: SEVERITY: MESSAGE` with the source line and a caret under the column.

copy-opt prints them (`copy_tools.diagnostics` adds its input's chunks and the
`--verify-diagnostics` checks), and every Python entry point raises them as one
`CopyDiagnosticError` (`analysis.report`). Lines are 1-based; columns are 1-based and count
Unicode code points (mlir-opt counts bytes; the two agree on ASCII input)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "note", "remark"]

_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class SourceLocation:
    """A position in a file: the name as given on the command line, line and column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic: an error, a warning, a remark, or a note attached to the previous."""

    severity: Severity
    location: SourceLocation
    message: str


class SourceFile:
    """The decoded input text with a line index, for positions and source-line display."""

    def __init__(self, name: str, text: str):
        self.name = name
        self.text = text
        self._line_starts = [0]
        self._line_starts.extend(m.end() for m in re.finditer("\n", text))

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    def location(self, pos: int) -> SourceLocation:
        """The location of the character at `pos`, an index into `self.text`."""
        pos = min(max(pos, 0), len(self.text))
        line_index = bisect.bisect_right(self._line_starts, pos) - 1
        return SourceLocation(self.name, line_index + 1, pos - self._line_starts[line_index] + 1)

    def line_text(self, line: int) -> str | None:
        """The text of the 1-based `line`, without its line terminator."""
        if not 1 <= line <= len(self._line_starts):
            return None
        start = self._line_starts[line - 1]
        end = self._line_starts[line] - 1 if line < len(self._line_starts) else len(self.text)
        return self.text[start:end].removesuffix("\r")


def escape_control_chars(text: str) -> str:
    """Show control characters other than tab and newline as `\\xNN` escapes."""
    return _CONTROL_CHARS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def render(diagnostic: Diagnostic, source: SourceFile | None) -> str:
    """Format a diagnostic the way mlir-opt does.

    `FILE:LINE:COL: SEVERITY: MESSAGE`, then (except for notes, and only when the
    location is in `source`) the source line and a caret under the column.
    """
    loc = diagnostic.location
    text = f"{loc}: {diagnostic.severity}: {escape_control_chars(diagnostic.message)}\n"
    if diagnostic.severity == "note" or source is None or loc.file != source.name:
        return text
    line = source.line_text(loc.line)
    if line is None:
        return text
    shown = _CONTROL_CHARS.sub("\ufffd", line)
    indent = "".join("\t" if c == "\t" else " " for c in shown[: max(loc.col - 1, 0)])
    return text + shown + "\n" + indent + "^\n"


def render_all(diagnostics: Iterable[Diagnostic], source: SourceFile | None) -> str:
    return "".join(render(d, source) for d in diagnostics)
