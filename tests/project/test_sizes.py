"""No module the project ships is over 600 lines, and no class in one is over 400: a file or
class past that holds more than one concern (docs/design.md's map says where each concern
lives). The shipped modules are those of the packages pyproject.toml lists."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 400


def shipped_modules() -> list[Path]:
    table = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = table["tool"]["setuptools"]
    folders = setuptools.get("package-dir", {})
    return sorted(
        path
        for name in setuptools["packages"]
        for path in (ROOT / folders.get(name, name.replace(".", "/"))).glob("*.py")
    )


MODULES = shipped_modules()


def test_the_packages_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in MODULES}
    assert {"copy_dialect/copies.py", "analysis/verify.py", "passes/pipeline.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_module_and_class_sizes(path: Path):
    source = path.read_text(encoding="utf-8")
    lines = source.count("\n")
    assert lines <= MAX_MODULE_LINES, f"{lines} lines"
    big = [
        f"{node.name}: {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ClassDef)
        and (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_CLASS_LINES
    ]
    assert big == []
