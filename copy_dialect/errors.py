"""Verifier exceptions of the copy dialect: each error carries a note with the fix."""

from __future__ import annotations

import ast
import functools
import linecache
import re
import sys
from types import FrameType

from xdsl.utils.exceptions import VerifyException

RULE_ID = r"[A-Z]{1,3}[0-9]+"
RULE_TAG = re.compile(rf"rule:\s*({RULE_ID}(?:\s*,\s*{RULE_ID})*)")
"""The ids of a `rule: C4, TR5` tag (after `#` in the dialect's code, `//` in lit tests); text
after the id list (a remark) is ignored. copy-rules reads the tags with it too."""


class CopyVerifyException(VerifyException):
    """A verifier error with a note that tells the user how to fix it.

    `str(exc)` is the message alone (the spec of the invalid IR); `exc.note` is the
    fix, printed by copy-opt as a `note:` line under the error. `exc.rules` are the
    catalogue ids (copy_dialect/rules.toml) of the check that raised it.
    """

    def __init__(self, message: str, note: str | None = None):
        super().__init__(message)
        self.note = note
        self.origin: tuple[tuple[str, int], ...] = check_sites(sys._getframe(1))
        """Where the error was made: the file and line of the check that raised it, then
        of the check that called the helper it is in (code of `CHECKING_PACKAGES` only)."""

    @property
    def rules(self) -> tuple[str, ...]:
        """The rule ids of the check, read from its `# rule: ID` comment: the comment block
        right above the `raise` statement or above a statement that encloses it (its `if`),
        else above the call of the helper that raised it; () for an untagged check."""
        for filename, lineno in self.origin:
            if ids := rule_tag(filename, lineno):
                return ids
        return ()


class CopyDiagnosticError(CopyVerifyException):
    """The one error the Python entry points raise for IR that fails to parse, verify,
    legalize or compile (`copy_tools.runtime.compile`, `.verify_module`, `.interpret`, the
    builders of `frontends.kernels`): `str(exc)` is the text copy-opt prints for it, in
    mlir-opt's form: `FILE:LINE:COL: error: ...`, the source line with a caret under the
    column, then every note (the fix among them), each at its own location.

    The first error's parts: `message` (the error alone, `'<op>' op ...`), `note` (its
    fix: the check's own note, else the first note), `location` (`(file, line, col)`,
    None where nothing is known) and `rules` (the catalogue ids of the check that raised
    it). `diagnostics` are all of them, `(severity, (file, line, col), message)` each, in
    copy-opt's order."""

    def __init__(
        self,
        text: str,
        diagnostics: tuple[tuple[str, tuple[str, int, int], str], ...],
        rules: tuple[str, ...] = (),
        note: str | None = None,
    ):
        errors = [d for d in diagnostics if d[0] == "error"]
        first = errors[0] if errors else ("error", ("<unknown>", 0, 0), text)
        following = diagnostics[diagnostics.index(first) + 1 :] if errors else ()
        notes = [m for severity, _, m in following[:1] if severity == "note"]
        super().__init__(first[2], note if note is not None else (notes[0] if notes else None))
        self.message = first[2]
        self.location: tuple[str, int, int] | None = None if not errors else first[1]
        self.diagnostics = diagnostics
        self.text = text
        self._rules = rules

    def __str__(self) -> str:
        return self.text

    @property
    def rules(self) -> tuple[str, ...]:
        return self._rules


CHECKING_PACKAGES = ("copy_dialect", "analysis", "passes")
"""The packages whose code checks rules: the op verifiers, the kernel analysis and
copy-legalize (the tags copy-rules reads are there)."""


def check_sites(frame: FrameType | None) -> tuple[tuple[str, int], ...]:
    """(file, line) of `frame` and its caller, as long as they are code that checks rules."""
    where: list[tuple[str, int]] = []
    while frame is not None and len(where) < 2:
        if str(frame.f_globals.get("__name__", "")).partition(".")[0] not in CHECKING_PACKAGES:
            break
        where.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return tuple(where)


def rule_tag(filename: str, lineno: int) -> tuple[str, ...]:
    """The ids of the `# rule:` tag that governs the statement at `filename:lineno`."""
    lines = _source_lines(filename)
    for start in _enclosing_statements(filename).get(lineno, ()):
        row = start - 2  # the line above the statement, 0-based
        while row >= 0 and lines[row].lstrip().startswith("#"):
            match = RULE_TAG.search(lines[row])
            if match:
                return tuple(i.strip() for i in match.group(1).split(","))
            row -= 1
    return ()


def _source_lines(filename: str) -> list[str]:
    return linecache.getlines(filename)


@functools.cache
def _enclosing_statements(filename: str) -> dict[int, tuple[int, ...]]:
    """For each line of a module: the first lines of the statements that contain it,
    innermost first, up to the enclosing function."""
    try:
        tree = ast.parse("".join(_source_lines(filename)))
    except SyntaxError:
        return {}
    table: dict[int, tuple[int, ...]] = {}

    def visit(node: ast.AST, outer: tuple[int, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                visit(child, ())
            elif isinstance(child, ast.stmt):
                chain = (child.lineno, *outer)
                for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    table[line] = chain
                visit(child, chain)

    visit(tree, ())
    return table


CALLEE_PACKAGES = (
    "analysis", "copy_dialect", "passes", "frontends", "interpreter", "runtime", "copy_tools",
    "xdsl", "contextlib",
)  # fmt: skip
"""Packages whose frames are not the user's: the project's and xDSL's (the paths to a warning
differ in depth: `analysis.verify`, `passes.pipeline`, `copy_tools.runtime`, the builders)."""


def user_stacklevel() -> int:
    """The `stacklevel` of the user's call for a warning issued by the caller of this
    function (the protocol's findings, ptxas's performance notes): the first frame outside
    `CALLEE_PACKAGES` (`warnings.warn`'s `skip_file_prefixes` needs Python 3.12); the
    warning function's caller where every frame is the project's."""
    frame = sys._getframe(2)  # the caller of the function that warns: stacklevel 2
    level = 2
    while frame is not None:
        module = str(frame.f_globals.get("__name__", "")).partition(".")[0]
        if module not in CALLEE_PACKAGES:
            return level
        frame = frame.f_back
        level += 1
    return 2
