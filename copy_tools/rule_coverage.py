"""copy-rules: which catalogue rules have a verifier check and a negative lit test.

The catalogue is `copy_dialect/rules.toml` (one table per rule id, in catalogue order). Coverage
comes from tags in the project tree:

- check: a Python comment `# rule: C4` or `# rule: C4, TR5` in any `.py` file of a package
  the project ships (the `packages` of pyproject.toml's `[tool.setuptools]`: the dialect's
  verifiers, the kernel analysis, copy-legalize, ... wherever the rule is checked);
- negative lit test: a comment `// rule: C4` in a `// -----` chunk of a `.mlir` file under
  `lit_tests/` that also holds an `expected-error` annotation (tags in positive chunks don't count).

The last line printed is `covered X/Y` (Y in-scope ids, X of them with both a check and a
negative test); the exit status is 0 when X == Y, else 1. Tags naming unknown ids, and tags on
out-of-scope ids, are warnings.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import textwrap
import tokenize
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import NoReturn

from copy_dialect.errors import RULE_ID, RULE_TAG
from copy_tools.cli import guarded

PROG = "copy-rules"
_SPLIT = re.compile(r"^\s*//\s*-----\s*$")


class UsageError(Exception):
    """Bad command line, root or rules file: reported as one `copy-rules: error:` line."""


@dataclass(frozen=True)
class Rule:
    """One catalogue entry of rules.toml."""

    id: str
    title: str
    anchor: str
    scope: str  # "in" or "out"
    reason: str


@dataclass
class Tags:
    """Where each rule id is tagged: `checks` in Python, `tests` in negative lit chunks."""

    checks: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    tests: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    # Tags in lit chunks without expected-error: not coverage, but still checked for unknown ids.
    positive: dict[str, list[str]] = field(default_factory=dict[str, list[str]])


def parse_rules(text: str, origin: str) -> list[Rule]:
    """Parse and validate rules.toml text; raise UsageError naming `origin` if it is malformed."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{origin}: {exc}") from None
    rules: list[Rule] = []
    for rid, entry in data.items():
        if not re.fullmatch(RULE_ID, rid) or not isinstance(entry, dict):
            raise UsageError(f"{origin}: [{rid}] is not a rule table")
        values: dict[str, object] = entry
        fields = {k: values.get(k) for k in ("title", "anchor", "scope", "reason")}
        if not all(isinstance(v, str) for v in fields.values()):
            raise UsageError(f"{origin}: [{rid}] needs string title, anchor, scope and reason")
        rule = Rule(rid, **{k: str(v) for k, v in fields.items()})
        if rule.scope not in ("in", "out"):
            raise UsageError(f"{origin}: [{rid}] scope must be 'in' or 'out', got {rule.scope!r}")
        if rule.scope == "out" and not rule.reason.strip():
            raise UsageError(f"{origin}: [{rid}] is out of scope but gives no reason")
        rules.append(rule)
    return rules


def load_rules(path: Path | None = None) -> list[Rule]:
    """Load the rules file at `path`, or the installed package's rules.toml."""
    if path is None:
        resource = resources.files("copy_dialect") / "rules.toml"
        return parse_rules(resource.read_text(encoding="utf-8"), "copy_dialect/rules.toml")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read rules file {path}: {exc.strerror}") from None
    return parse_rules(text, str(path))


def tag_ids(text: str) -> list[str]:
    """The rule ids of the `rule:` tags in `text`."""
    return [i.strip() for m in RULE_TAG.finditer(text) for i in m.group(1).split(",")]


def _python_comments(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of each comment; falls back to a line scan if the file does not tokenize."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                yield tok.start[0], tok.string
    except (tokenize.TokenError, SyntaxError):
        for n, line in enumerate(source.splitlines(), 1):
            if "#" in line:
                yield n, line[line.index("#") :]


def _add(table: dict[str, list[str]], ids: list[str], where: str) -> None:
    for rid in ids:
        table.setdefault(rid, []).append(where)


def package_folders(root: Path) -> list[Path]:
    """The folders of the packages the project at `root` ships (pyproject.toml's
    `[tool.setuptools]` `packages`, each at its `package-dir` if it has one)."""
    try:
        setuptools = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read {root / 'pyproject.toml'}: {exc}") from None
    table = setuptools.get("tool", {}).get("setuptools", {})
    packages = table.get("packages")
    if not isinstance(packages, list) or not packages:
        raise UsageError(f"{root / 'pyproject.toml'} lists no [tool.setuptools] packages")
    folders: dict[str, str] = table.get("package-dir", {})
    return [root / folders.get(name, name.replace(".", "/")) for name in packages]


def scan(root: Path) -> Tags:
    """Collect the rule tags of the project at `root`."""
    tags = Tags()
    for path in sorted(p for folder in package_folders(root) for p in folder.glob("*.py")):
        rel = path.relative_to(root).as_posix()
        for line, comment in _python_comments(path.read_text(encoding="utf-8", errors="replace")):
            if comment.lstrip("#").lstrip().startswith("rule:"):
                _add(tags.checks, tag_ids(comment), f"{rel}:{line}")
    for path in sorted((root / "lit_tests").rglob("*.mlir")):
        rel = path.relative_to(root).as_posix()
        chunk: list[tuple[int, str]] = []
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for n, line in enumerate([*lines, "// -----"], 1):
            if not _SPLIT.match(line):
                chunk.append((n, line))
                continue
            negative = any("expected-error" in text for _, text in chunk)
            for ln, text in chunk:
                comment = text.lstrip()
                if comment.startswith("//") and comment[2:].lstrip().startswith("rule:"):
                    table = tags.tests if negative else tags.positive
                    _add(table, tag_ids(comment), f"{rel}:{ln}")
            chunk = []
    return tags


def find_root(start: Path) -> Path:
    """The nearest directory at or above `start` with pyproject.toml and copy_dialect/.

    Falls back to the directory above the copy_tools package (the project root of an
    editable install).
    """
    for directory in (start, *start.parents):
        if (directory / "pyproject.toml").is_file() and (directory / "copy_dialect").is_dir():
            return directory
    return Path(__file__).resolve().parents[1]


def report(rules: Sequence[Rule], tags: Tags, missing_only: bool = False) -> tuple[list[str], bool]:
    """The report's lines (the last is `covered X/Y`) and whether every in-scope rule is covered."""
    known = {r.id: r for r in rules}
    in_scope = [r for r in rules if r.scope == "in"]
    missing = [r for r in in_scope if r.id not in tags.checks or r.id not in tags.tests]
    shown = missing if missing_only else rules
    width = max((len(r.id) for r in rules), default=2)
    lines = [f"{'id':<{width}}  scope  check  test  title"]
    for r in shown:
        check = "yes" if r.id in tags.checks else "-"
        test = "yes" if r.id in tags.tests else "-"
        lines.append(f"{r.id:<{width}}  {r.scope:<5}  {check:<5}  {test:<4}  {r.title}")
    every: dict[str, list[str]] = {}
    for table in (tags.checks, tags.tests, tags.positive):
        for rid, places in table.items():
            every.setdefault(rid, []).extend(places)
    for rid, places in every.items():
        if rid not in known:
            lines.append(f"warning: tag names unknown rule id {rid}: {', '.join(places)}")
        elif known[rid].scope == "out":
            lines.append(f"warning: out-of-scope rule {rid} is tagged: {', '.join(places)}")
    if missing:
        ids = " ".join(r.id for r in missing)
        lines += textwrap.wrap(f"missing ({len(missing)}): {ids}", 100, subsequent_indent="  ")
    lines.append(f"covered {len(in_scope) - len(missing)}/{len(in_scope)}")
    return lines, not missing


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `copy-rules`; returns the exit status (no traceback: `cli.guarded`)."""
    return guarded(PROG, lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    parser = _Parser(prog=PROG, description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, help="project root (default: found from the cwd)")
    parser.add_argument("--rules", type=Path, help="rules file (default: the package's rules.toml)")
    parser.add_argument("--missing", action="store_true", help="list only what is missing")
    try:
        args = parser.parse_args(argv)
        root: Path = args.root if args.root is not None else find_root(Path.cwd())
        for folder in ("copy_dialect", "lit_tests"):
            if not (root / folder).is_dir():
                raise UsageError(f"{root} is not a copy-dialect project root (no {folder}/)")
        rules = load_rules(args.rules)
        lines, ok = report(rules, scan(root), missing_only=args.missing)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
