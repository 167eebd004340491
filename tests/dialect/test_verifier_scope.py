"""An op's verifier looks at its op, not at its kernel: it reads the op, its operands (their
types and the constants it can fold) and what its ancestors say of it (the target, the
kernel's block and cluster shape, the role it is in). A rule about several ops of a kernel
is a kernel rule (`analysis/kernel/`), checked once per kernel.

Read from the source: from each op's `verify_`, every function of the dialect it can reach,
transitively. A call is resolved through the module's own definitions and its imports of the
project; a call of a method on any other object (`g.window_outside()`) reaches every method
of the dialect with that name, so that nothing is missed. None of the functions reached may
walk IR (`.walk()`), read a block's ops (`.ops`), a value's users (`.uses`) or an op's
neighbours (`.next_op`, `.prev_op`); the ops whose own regions are their IR are listed with
the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from copy_dialect.dialect import Copy

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("copy_dialect", "facts")
"""The packages an op verifier may call into."""

WALKS = ("walk", "ops", "uses", "next_op", "prev_op")
"""The attributes that reach IR beyond the op: its block's or kernel's other ops, its
values' users."""

OWN_REGIONS = {
    ("copy_dialect.upstream_memref", "GenericAtomicRMWOp.verify_"): "reads its own body",
}
"""Functions that read ops of the verified op's own regions, and why."""

Key = tuple[str, str]


def _modules() -> dict[str, ast.Module]:
    modules: dict[str, ast.Module] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).glob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return modules


MODULES = _modules()


def _functions() -> dict[Key, ast.FunctionDef]:
    """Every top-level function and every method of a top-level class, by (module,
    qualname)."""
    found: dict[Key, ast.FunctionDef] = {}
    for module, tree in MODULES.items():
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                found[(module, node.name)] = node
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        found[(module, f"{node.name}.{item.name}")] = item
    return found


FUNCTIONS = _functions()


def _bindings(module: str) -> dict[str, Key]:
    """The names `module` binds to functions or modules of PACKAGES: a module as
    (module, "")."""
    names: dict[str, Key] = {}
    for node in MODULES[module].body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PACKAGES:
            base = node.module or ""
            for alias in node.names:
                bound = alias.asname or alias.name
                full = f"{base}.{alias.name}"
                names[bound] = (full, "") if full in MODULES else (base, alias.name)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names[node.name] = (module, node.name)
    return names


def callees(key: Key) -> set[Key]:
    """What the function `key` may call among FUNCTIONS (see the module docstring)."""
    module, qualname = key
    cls = qualname.rpartition(".")[0]
    names = _bindings(module)
    found: set[Key] = set()
    for call in (n for n in ast.walk(FUNCTIONS[key]) if isinstance(n, ast.Call)):
        func = call.func
        if isinstance(func, ast.Name) and func.id in names:
            target = names[func.id]
            found.add(target)
            # A class called runs its constructor.
            found.update(
                k for k in FUNCTIONS if k[0] == target[0] and k[1].startswith(f"{target[1]}.")
            )
        elif isinstance(func, ast.Attribute):
            owner = func.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls") and cls:
                found.add((module, f"{cls}.{func.attr}"))
            elif isinstance(owner, ast.Name) and names.get(owner.id, ("", "x"))[1] == "":
                found.add((names[owner.id][0], func.attr))
            else:
                found.update(k for k in FUNCTIONS if k[1].endswith(f".{func.attr}"))
    # Properties read as attributes run too.
    for attr in (n for n in ast.walk(FUNCTIONS[key]) if isinstance(n, ast.Attribute)):
        found.update(
            k for k in FUNCTIONS if k[1].endswith(f".{attr.attr}") and _is_property(FUNCTIONS[k])
        )
    return {k for k in found if k in FUNCTIONS}


def _is_property(node: ast.FunctionDef) -> bool:
    return any(
        isinstance(d, ast.Name) and d.id in ("property", "cached_property")
        for d in node.decorator_list
    )


def walks(key: Key) -> list[str]:
    """The IR-walking attribute reads of the function `key`, as `line: source`."""
    node = FUNCTIONS[key]
    return [
        f"{a.lineno}: {ast.unparse(a)}"
        for a in ast.walk(node)
        if isinstance(a, ast.Attribute) and a.attr in WALKS
    ]


def reached(start: Key) -> dict[Key, Key | None]:
    """Every function `start` may reach, with the one it was reached from."""
    parents: dict[Key, Key | None] = {start: None}
    todo = [start]
    while todo:
        key = todo.pop()
        for callee in callees(key):
            if callee not in parents:
                parents[callee] = key
                todo.append(callee)
    return parents


def verifiers() -> list[Key]:
    keys = []
    for op in Copy.operations:
        for c in op.__mro__:
            key = (c.__module__, f"{c.__name__}.verify_")
            if key in FUNCTIONS:
                keys.append(key)
                break
    return sorted(set(keys))


def test_every_verifier_is_found():
    """Each op of the dialect with a `verify_` of its own (or its family's) is examined."""
    keys = verifiers()
    assert ("copy_dialect.copies", "AsyncCopyOp.verify_") in keys
    assert ("copy_dialect.barriers", "BarrierArriveExpectTxOp.verify_") in keys
    assert len(keys) >= 30


@pytest.mark.parametrize("start", verifiers(), ids=lambda k: k[1].partition(".")[0])
def test_no_op_verifier_walks_its_kernel(start: Key):
    parents = reached(start)
    found = []
    for key in sorted(parents, key=str):
        if key in OWN_REGIONS:
            continue
        for where in walks(key):
            chain, at = [], key
            while at is not None:
                chain.append(f"{at[0]}.{at[1]}")
                at = parents[at]
            found.append(f"{where} in {' <- '.join(chain)}")
    assert found == []


def test_the_checker_sees_a_walk():
    """A kernel walk reached through a helper is found (the kernel rules' own module)."""
    assert walks(("copy_dialect.smem", "arena_layout"))
    assert ("copy_dialect.smem", "arena_layout") not in reached(
        ("copy_dialect.smem", "AllocSmemOp.verify_")
    )
