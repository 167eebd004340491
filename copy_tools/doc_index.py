"""Where each rule is checked, read from the source: every `# rule: ID` comment of the
packages the project ships (as `copy-rules` finds them) belongs to the function or method
around it, with the message and fix note of the `raise` after it (each interpolated
expression shown as `{expr}`); a function's calls are resolved through its module's own
definitions and its imports of the project's modules. copy-docs lists, for each op, the
checks of its methods and of everything they call, transitively."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.irdl import IRDLOperation

from copy_dialect.verify_common import retarget_note
from copy_tools.rule_coverage import package_folders, tag_ids
from facts import hardware
from facts import target as target_facts

EXPR_WIDTH = 40
"""An interpolated expression longer than this shows as `{...}` in a message template."""


@dataclass(frozen=True)
class Check:
    """One tagged check: its rule ids, where it is, and its message and note templates."""

    ids: tuple[str, ...]
    path: str
    line: int
    function: str
    message: str | None
    note: str | None


@dataclass
class Function:
    """A function or method of the dialect: its own checks and what it calls."""

    module: str
    qualname: str
    checks: list[Check] = field(default_factory=list[Check])
    calls: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])


def template(node: ast.expr | None) -> str | None:
    """A message argument as text, each interpolated expression as `{expr}`."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(template(v) or "" for v in node.values)
    if isinstance(node, ast.FormattedValue):
        return _expr(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return (template(node.left) or "") + (template(node.right) or "")
    return _expr(node)


def _expr(node: ast.expr) -> str:
    """`{expr}`; a measured constant (`hw.MAX_BOX_DIM`, `hardware.SMEM_ALIGNMENT`) is shown
    as its value, from facts/hardware.toml, and `retarget_note(FEATURE)` as its text."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("hw", "hardware")
        and isinstance(getattr(hardware, node.attr, None), int)
    ):
        return str(getattr(hardware, node.attr))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "retarget_note"
        and (feature := _feature(node.args[0] if node.args else None)) is not None
    ):
        return retarget_note(feature)
    text = ast.unparse(node)
    return f"{{{text}}}" if len(text) <= EXPR_WIDTH and "\n" not in text else "{...}"


def _raise_after(tree: ast.Module, line: int) -> ast.Raise | None:
    """The first `raise` of the statement that follows the comment on `line`."""
    following = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno > line]
    if not following:
        return None
    first = min(following, key=lambda n: (n.lineno, -(n.end_lineno or n.lineno)))
    raises = sorted(
        (n for n in ast.walk(first) if isinstance(n, ast.Raise)), key=lambda n: n.lineno
    )
    return raises[0] if raises else None


def _feature_message(call: ast.Call) -> str | None:
    """The message of `feature_error(op, FEATURE, target, ...)` (the error of a target that
    lacks a feature): facts.target.feature_message's, with the feature's name and targets
    filled in and the op, what of it needs the feature, the target and why it lacks the
    feature as `{expr}`; None for any other call."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "feature_error"):
        return None
    feature = _feature(call.args[1] if len(call.args) >= 3 else None)
    if feature is None:
        return None
    op, named, target = (ast.unparse(a) for a in call.args[:3])
    uses = next((template(k.value) for k in call.keywords if k.arg == "uses"), None)
    # A stand-in target, named by its expression, that lacks every feature for no reason.
    stand_in = target_facts.Target(f"{{{target}.name}}", 0, "", 0, 0)
    message = target_facts.feature_message(f"{{{op}.name}}", feature, stand_in, uses or "")
    return message + (f"{{{named}.reason({target})}}" if feature.reasons else "")


def _feature(node: ast.expr | None) -> target_facts.Feature | None:
    """The feature of facts.target that `node` names (`TMA`, `CLUSTERS`), if any."""
    found = getattr(target_facts, node.id, None) if isinstance(node, ast.Name) else None
    return found if isinstance(found, target_facts.Feature) else None


def _message(raised: ast.Raise | None) -> tuple[str | None, str | None]:
    if raised is None or not isinstance(raised.exc, ast.Call):
        return None, None
    call = raised.exc
    message = _feature_message(call)
    if message is None:
        message = template(call.args[0]) if call.args else None
    note = next((template(k.value) for k in call.keywords if k.arg == "note"), None)
    return message, note


def _scopes(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(qualname, node) of each top-level function and each method of a top-level class."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield f"{node.name}.{item.name}", item


def _imports(tree: ast.Module, module: str, modules: set[str]) -> dict[str, tuple[str, str]]:
    """The names a module binds to the project's modules (`modules`) or their definitions: a
    module as (module, ""), a definition as (module, name)."""
    names: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "") in modules:
            base = node.module or ""
            for alias in node.names:
                bound = alias.asname or alias.name
                names[bound] = (base, alias.name)
                if f"{base}.{alias.name}" in modules:
                    names[bound] = (f"{base}.{alias.name}", "")
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names[node.name] = (module, node.name)
    return names


def _module_name(rel: Path) -> str:
    """The import name of the module at `rel` (a package by its `__init__.py`)."""
    parts = rel.with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def index_source(root: Path) -> dict[tuple[str, str], Function]:
    """Every function and method of the source of the packages the project ships (the
    dialect, the analysis, the passes, ...), with its checks and calls."""
    functions: dict[tuple[str, str], Function] = {}
    paths = sorted(p for folder in package_folders(root) for p in folder.glob("*.py"))
    modules = {_module_name(path.relative_to(root)) for path in paths}
    for path in paths:
        rel = path.relative_to(root)
        module = _module_name(rel)
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, str(rel))
        names = _imports(tree, module, modules)
        scopes = list(_scopes(tree))
        for qualname, node in scopes:
            fn = functions.setdefault((module, qualname), Function(module, qualname))
            cls = qualname.rpartition(".")[0]
            for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
                fn.calls.update(_callees(call.func, names, module, cls))
        for n, line in enumerate(source.splitlines(), 1):
            comment = line.strip()
            if not (comment.startswith("#") and comment.lstrip("#").lstrip().startswith("rule:")):
                continue
            enclosing = [(q, d) for q, d in scopes if d.lineno <= n <= (d.end_lineno or d.lineno)]
            qualname = enclosing[-1][0] if enclosing else "<module>"
            message, note = _message(_raise_after(tree, n))
            check = Check(tuple(tag_ids(comment)), rel.as_posix(), n, qualname, message, note)
            functions.setdefault((module, qualname), Function(module, qualname)).checks.append(
                check
            )
    return functions


def _callees(
    func: ast.expr, names: dict[str, tuple[str, str]], module: str, cls: str
) -> Iterator[tuple[str, str]]:
    if isinstance(func, ast.Name) and func.id in names:
        yield names[func.id]
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        owner = func.value.id
        if owner in ("self", "cls") and cls:
            yield module, f"{cls}.{func.attr}"
        elif owner in names and names[owner][1] == "":
            yield names[owner][0], func.attr


def op_methods(
    op: type[IRDLOperation], functions: dict[tuple[str, str], Function]
) -> list[tuple[str, str]]:
    """The methods of `op` and of the project's classes it derives from (an op family's base
    class may hold the family's `verify_`), as keys of `functions`."""
    return [
        k
        for c in op.__mro__
        for k in functions
        if k[0] == c.__module__ and k[1].startswith(f"{c.__name__}.")
    ]


def checks_of(
    functions: dict[tuple[str, str], Function], start: Sequence[tuple[str, str]]
) -> list[Check]:
    """The checks of `start` and of everything they call, once each: those of `start`'s
    module first, then by file, in source order. A call of a class runs its methods (its
    `__init__`, `__post_init__`, properties)."""
    own = f"{start[0][0].replace('.', '/')}.py" if start else ""
    seen: set[tuple[str, str]] = set()
    todo = list(start)
    found: list[Check] = []
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        methods = [k for k in functions if k[0] == key[0] and k[1].startswith(f"{key[1]}.")]
        if key not in functions:
            todo.extend(methods)
            continue
        found.extend(functions[key].checks)
        todo.extend(functions[key].calls)
    return sorted(set(found), key=lambda c: (c.path != own, c.path, c.line))
