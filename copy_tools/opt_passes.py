"""What copy-opt says about its passes: `--list-passes` (the project's passes first, each with
its summary and options, then xDSL's others by name) and the pass list of `--help`.

A pass's summary is the first sentence of its class docstring; an option's help is the
docstring under its field (read from the source, as for an attribute docstring).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
from collections.abc import Callable, Mapping

from xdsl.passes import ModulePass, get_pass_option_infos

from copy_tools.universe import COPY_UNIVERSE

PassFactories = Mapping[str, Callable[[], type[ModulePass]]]

FIRST = ("convert-copy-to-nvvm", "lower-copy-to-llvm")
"""The project's passes users start from, listed before its other ones."""

WIDTH = 100


def project_passes(available: PassFactories) -> list[str]:
    """The project's pass names (those of `COPY_UNIVERSE`) in listing order."""
    ours = [name for name in COPY_UNIVERSE.all_passes if name in available]
    return [n for n in FIRST if n in ours] + sorted(n for n in ours if n not in FIRST)


def other_passes(available: PassFactories) -> list[str]:
    ours = set(COPY_UNIVERSE.all_passes)
    return sorted(name for name in available if name not in ours)


def summary(pass_type: type[ModulePass]) -> str:
    """The first sentence (or line) of the pass class's docstring."""
    doc = inspect.cleandoc(pass_type.__doc__ or "")
    first = " ".join(doc.split("\n\n", 1)[0].split())
    end = first.find(". ")
    return first if end < 0 else first[: end + 1]


@dataclasses.dataclass(frozen=True)
class Option:
    name: str
    """As written in a pipeline (kebab-case)."""
    type: str
    default: str
    help: str


def options(pass_type: type[ModulePass]) -> list[Option]:
    docs = _field_docs(pass_type)
    defaults = {f.name: f.default for f in dataclasses.fields(pass_type)}
    return [
        Option(
            info.name.replace("_", "-"),
            info.expected_type.replace("'", ""),
            _spelled(defaults.get(info.name, dataclasses.MISSING)),
            docs.get(info.name, ""),
        )
        for info in get_pass_option_infos(pass_type)
    ]


def _spelled(value: object) -> str:
    """A default value as a pipeline would spell it."""
    if value is dataclasses.MISSING:
        return "(required)"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return ",".join(_spelled(v) for v in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return str(value)


def _field_docs(pass_type: type[ModulePass]) -> dict[str, str]:
    """The docstrings written under the pass's fields, over its dataclass bases."""
    docs: dict[str, str] = {}
    for cls in reversed(pass_type.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for stmt, after in zip(body, body[1:], strict=False):
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[stmt.target.id] = " ".join(after.value.value.split())
    return docs


def _load(available: PassFactories, name: str) -> type[ModulePass] | None:
    try:
        return available[name]()
    except Exception:
        return None


def _stages(pass_type: type[ModulePass]) -> list[str]:
    """The passes a pipeline pass (one with `stages()`) runs, with its defaults."""
    stages = getattr(pass_type, "stages", None)
    if not callable(stages):
        return []
    try:
        return [p.name for p in stages(pass_type())]
    except Exception:
        return []


def _wrap(text: str, indent: int) -> str:
    return textwrap.fill(text, WIDTH, initial_indent=" " * indent, subsequent_indent=" " * indent)


def list_passes(available: PassFactories) -> str:
    """The text of `--list-passes`."""
    lines = ["Passes of the copy dialect (copy-opt -p 'name{option=value ...}'):", ""]
    for name in project_passes(available):
        pass_type = _load(available, name)
        if pass_type is None:
            lines += [f"  {name}", "      (cannot be loaded)"]
            continue
        lines.append(f"  {name}")
        lines.append(_wrap(summary(pass_type), 6))
        if stages := _stages(pass_type):
            lines.append(_wrap("Runs, in order: " + ", ".join(stages) + ".", 6))
        for option in options(pass_type):
            lines.append(f"      {option.name}: {option.type} = {option.default}")
            if option.help:
                lines.append(_wrap(option.help, 10))
        lines.append("")
    others = other_passes(available)
    lines.append(f"Other passes (xDSL's, {len(others)}; none of them knows the copy dialect):")
    lines.append("")
    lines.append(_wrap(", ".join(others), 2))
    return "\n".join(lines) + "\n"


def help_epilog(available: PassFactories) -> str:
    """The pass list at the end of `--help`: the project's, one line each."""
    names = project_passes(available)
    width = max((len(n) for n in names), default=0) + 2
    lines = ["passes of the copy dialect (copy-opt --list-passes: their options, and the rest):"]
    for name in names:
        pass_type = _load(available, name)
        text = summary(pass_type) if pass_type is not None else "(cannot be loaded)"
        lines.append(
            textwrap.fill(
                text,
                WIDTH,
                initial_indent=f"  {name.ljust(width)}",
                subsequent_indent=" " * (width + 2),
                break_on_hyphens=False,
            )
        )
    count = len(other_passes(available))
    lines.append(f"  ... and {count} other passes of xDSL (riscv, csl, stencil, ...), not listed")
    return "\n".join(lines)
