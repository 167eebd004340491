"""The import layers: facts <- dialect <- analysis <- passes and frontends <- tools, and a
runtime that needs no compiler (docs/design.md's map; each package may import only what it
lists there).

Read from each file's AST, every spelling counts: `import`, `from ... import` (a name may be
a submodule: `from copy_dialect import runtime`), relative imports, and the strings given to
`importlib.import_module` / `__import__` (f-strings by their constant head, a loop variable
by the loop's literals; any other dynamic import fails the test). Imports inside functions
count too.

- `facts` imports nothing of the project and no xDSL;
- the dialect imports only `facts` of the project;
- the analysis imports `facts` and the dialect;
- the passes import `facts`, the dialect and the analysis (never a frontend, the runtime or
  the tools);
- the frontends import `facts`, the dialect and the analysis (never a pass, the runtime or
  the tools), and the NVVM dialect's ops (`passes.nvvm`: kernels write their math in
  upstream's NVVM spelling, wgmma and tcgen05.mma; the interpreter runs them too);
- the runtime imports only `facts` of the project and no xDSL, also through what it imports
  (each package's `__init__` included); a subprocess checks it for real: loading a cubin's
  ABI and checking a launch's arguments leaves `xdsl` out of `sys.modules`;
- the tools import anything.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

FACTS = "facts"
DIALECT = "copy_dialect"
ANALYSIS = "analysis"
PASSES = "passes"
FRONTENDS = "frontends"
INTERPRETER = "interpreter"
RUNTIME = "runtime"
TOOLS = "copy_tools"
XDSL = "xdsl"

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {
    FACTS: ROOT / "facts",
    DIALECT: ROOT / "copy_dialect",
    ANALYSIS: ROOT / "analysis",
    PASSES: ROOT / "passes",
    FRONTENDS: ROOT / "frontends",
    INTERPRETER: ROOT / "interpreter",
    RUNTIME: ROOT / "runtime",
    TOOLS: ROOT / "copy_tools",
}
"""Each import package and the folder it is made of."""

NVVM = "passes.nvvm"
"""The NVVM dialect's ops (with their LLVM emission, under the passes): what a kernel's math
is written in, so the frontends build them and the interpreter runs them."""

MAY_IMPORT = {
    FACTS: (),
    DIALECT: (XDSL, FACTS),
    ANALYSIS: (XDSL, FACTS, DIALECT),
    PASSES: (XDSL, FACTS, DIALECT, ANALYSIS),
    FRONTENDS: (XDSL, FACTS, DIALECT, ANALYSIS, NVVM),
    INTERPRETER: (XDSL, FACTS, DIALECT, NVVM),
    RUNTIME: (FACTS,),
    TOOLS: (XDSL, FACTS, DIALECT, ANALYSIS, PASSES, FRONTENDS, INTERPRETER, RUNTIME),
}
"""What each package may import of xDSL and the project (docs/design.md's map); any other
library (numpy, llvmlite, cuda.bindings, ...) is not a layer and is not restricted here."""

DYNAMIC_IMPORTS = ("import_module", "__import__")


def module_files() -> dict[str, Path]:
    """Every module of the project by its import name (a package by its `__init__.py`)."""
    modules: dict[str, Path] = {}
    for package, folder in FOLDERS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package, *parts))] = path
    return modules


MODULES = module_files()


def layer(module: str) -> str:
    """The package (one of FOLDERS) a module belongs to: the longest that names it."""
    return max((p for p in FOLDERS if module == p or module.startswith(p + ".")), key=len)


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _dynamic_names(call: ast.Call, parents: dict[ast.AST, ast.AST]) -> Iterator[str]:
    """The module names an `import_module(...)` / `__import__(...)` call may import."""
    if not call.args:
        yield "<no argument>"
        return
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        yield arg.value
    elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        yield str(arg.values[0].value).rstrip(".")
    elif isinstance(arg, ast.Name):
        node: ast.AST | None = call
        while node is not None:
            if (
                isinstance(node, ast.For)
                and isinstance(node.target, ast.Name)
                and node.target.id == arg.id
                and isinstance(node.iter, ast.Tuple | ast.List)
                and all(isinstance(e, ast.Constant) for e in node.iter.elts)
            ):
                yield from (str(e.value) for e in node.iter.elts)  # type: ignore[attr-defined]
                return
            node = parents.get(node)
        yield f"<dynamic: {ast.unparse(arg)}>"
    else:
        yield f"<dynamic: {ast.unparse(arg)}>"


def imported_names(module: str, path: Path | None = None) -> set[str]:
    """Every module name that `module`'s file (or `path`) imports, by any spelling,
    anywhere in it."""
    path = path or MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in DYNAMIC_IMPORTS:
                names.update(_dynamic_names(node, parents))
    return names


def project_modules_loaded(name: str) -> set[str]:
    """The project's modules that importing `name` runs: it and its parent packages."""
    parts = name.split(".")
    return {m for m in (".".join(parts[:i]) for i in range(1, len(parts) + 1)) if m in MODULES}


def violations(package: str, forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for module in MODULES:
        if layer(module) != package:
            continue
        for name in sorted(imported_names(module)):
            if name.startswith("<"):
                found.append(f"{module}: unresolvable import {name}")
            elif any(_within(name, f) for f in forbidden) and not any(
                _within(name, allowed) for allowed in MAY_IMPORT[package]
            ):
                found.append(f"{module} imports {name}")
    return found


def test_every_layer_is_found():
    assert {layer(m) for m in MODULES} == set(FOLDERS)
    assert f"{RUNTIME}.kernel" in MODULES
    assert f"{PASSES}.pipeline" in MODULES
    assert f"{ANALYSIS}.verify" in MODULES
    assert f"{FACTS}.target" in MODULES


def forbidden(package: str) -> tuple[str, ...]:
    """xDSL and the project's packages that `package` may not import."""
    return tuple(p for p in (XDSL, *FOLDERS) if p != package and p not in MAY_IMPORT[package])


@pytest.mark.parametrize("package", list(FOLDERS))
def test_each_package_imports_only_what_the_map_allows(package: str):
    assert violations(package, forbidden(package)) == []


def test_the_passes_reach_the_analysis_through_its_entry():
    """The lowering verifies through `analysis.verify`; a fact both need (which gpu ops are
    uniform, how many arrivals an op makes) lives in the dialect, not in the analysis."""
    found = [
        f"{module} imports {name}"
        for module in MODULES
        if layer(module) == PASSES
        for name in sorted(imported_names(module))
        if _within(name, ANALYSIS)
        and name not in (ANALYSIS, f"{ANALYSIS}.verify")
        and not name.startswith(f"{ANALYSIS}.verify.")
    ]
    assert found == []


def map_rows() -> dict[str, set[str]]:
    """docs/design.md's map: for each package row, what its "may import" column allows
    (`xdsl` for xDSL, the packages it names in backticks; "everything" is every other)."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    table = text.split("## The map", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        folder = cells[0].strip("`").rstrip("/")
        if len(cells) < 3 or folder not in FOLDERS:
            continue
        allowed = cells[-1].split(";")[0].split("(")[0]
        if allowed.strip() == "everything":
            rows[folder] = {XDSL, *FOLDERS} - {folder}
            continue
        names = set(re.findall(r"`([\w.]+)`", allowed))
        rows[folder] = names | ({XDSL} if "xDSL" in allowed and "no xDSL" not in allowed else set())
    return rows


def test_the_tests_enforce_exactly_the_documented_map():
    assert map_rows() == {package: set(allowed) for package, allowed in MAY_IMPORT.items()}


def test_the_map_is_layered():
    """No two packages may import each other: the map has no cycle."""
    for package, allowed in MAY_IMPORT.items():
        for other in allowed:
            if other in MAY_IMPORT:
                assert package not in MAY_IMPORT[other], (package, other)


def test_the_runtime_imports_no_xdsl_through_the_project():
    """What the runtime imports of the project (the ABI, the target table, each package's
    `__init__`) imports no xDSL either, by any path."""
    seen: set[str] = set()
    todo = [m for m in MODULES if layer(m) == RUNTIME]
    paths: dict[str, str] = {m: m for m in todo}
    found = []
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for name in imported_names(module):
            if _within(name, XDSL):
                found.append(f"{paths[module]} imports {name}")
            for loaded in project_modules_loaded(name) - seen:
                paths.setdefault(loaded, f"{paths[module]} -> {loaded}")
                todo.append(loaded)
    assert found == []


def test_the_checker_sees_every_spelling(tmp_path: Path):
    """The AST reading catches each spelling of an import (on a scratch module)."""
    source = textwrap.dedent(
        """
        import xdsl.ir
        from copy_dialect import runtime
        from ..passes import pipeline
        import importlib

        def f(name):
            importlib.import_module("copy_tools.universe")
            __import__(f"passes.{name}")
            for module in ("torch", "cupy"):
                __import__(module)
            importlib.import_module(name)
        """
    )
    path = tmp_path / "scratch.py"
    path.write_text(source)
    names = imported_names(f"{RUNTIME}.scratch", path)
    assert {
        "xdsl.ir",
        "copy_dialect.runtime",
        "passes",
        "passes.pipeline",
        "copy_tools.universe",
        "torch",
        "cupy",
        "<dynamic: name>",
    } <= names


ABI_JSON = """{"format": 2, "target": "sm_90a", "kernels": {"k": {"name": "k",
  "params": [{"kind": "pointer", "arg": 0, "element": "f32", "shape": [64, 64]},
             {"kind": "tensor_map", "arg": 0, "box": [16, 16], "swizzle": 16,
              "oob": "zeros", "dtype": "FLOAT32", "written": false}],
  "block": [128, 1, 1], "cluster": [1, 1, 1], "smem_bytes": 1024}}}"""


def test_loading_a_cubin_imports_no_xdsl(tmp_path: Path):
    (tmp_path / "k.cubin").write_bytes(b"\x7fELF")
    (tmp_path / "k.cubin.json").write_text(ABI_JSON)
    script = textwrap.dedent(
        f"""
        import sys
        import numpy as np
        import {RUNTIME} as runtime

        program = runtime.load({str(tmp_path / "k.cubin")!r})
        kernel = program.kernel()
        kernel.check_arguments([np.zeros((64, 64), np.float32)])
        kernel.check_launch((4, 4), None)
        loaded = sorted(m for m in sys.modules if m == "xdsl" or m.startswith("xdsl."))
        print(program.target, kernel.name, loaded)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["sm_90a", "k", "[]"]
