"""A non-editable install works: `pip install .` into a fresh venv, then from the project root
and from another directory, the packages import and `copy-demo`, `copy-opt`, `copy-rules` and
`copy-layout` run (the examples are package data). About a minute: building and installing the
wheel.

The project is copied first (its tracked folders), so that the build writes nothing into the
work tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
PACKAGES = sorted({name.split(".")[0] for name in SETUPTOOLS["packages"]})
"""The top-level import packages the project ships (pyproject.toml's list)."""
FOLDERS = sorted({SETUPTOOLS.get("package-dir", {}).get(n, n).split("/")[0] for n in PACKAGES})
COPIED = (*FOLDERS, "examples", "lit_tests")
"""What the install is built from, and what copy-rules reads (the lit tests)."""
NOT_SHIPPED = ("tests", "benchmarks", "scripts")
"""Folders of the repository that hold Python packages of their own but are not shipped."""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(the copied project root, the environment of a fresh venv holding its install)."""
    base = tmp_path_factory.mktemp("install")
    project = base / "project"
    ignore = shutil.ignore_patterns("__pycache__", "Output", "*.egg-info", "build")
    for name in COPIED:
        shutil.copytree(ROOT / name, project / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "."],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    assert pip.returncode == 0, pip.stderr[-4000:]
    return project, env


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("where", ["root", "elsewhere"])
def test_the_packages_import(installed, where: str, tmp_path: Path):
    project, env = installed
    cwd = project if where == "root" else tmp_path
    for package in PACKAGES:
        result = run(["python", "-c", f"import {package}"], cwd, env)
        assert result.returncode == 0, f"import {package} from {cwd}: {result.stderr}"


@pytest.mark.parametrize("where", ["root", "elsewhere"])
def test_the_tools_run(installed, where: str, tmp_path: Path):
    project, env = installed
    cwd = project if where == "root" else tmp_path
    demo = run(["copy-demo", "--out", str(tmp_path / "build")], cwd, env)
    assert demo.returncode == 0, demo.stderr
    assert "tma_tile_copy.mlir -> sm_90a" in demo.stdout
    assert (tmp_path / "build" / "tma_tile_copy.cubin.json").is_file()
    if where == "root":
        example = "examples/tma_tile_copy.mlir"
    else:  # the installed copy (package data)
        where_is = "from importlib import resources; print(resources.files('copy_tools.examples'))"
        example = run(["python", "-c", where_is], cwd, env).stdout.strip() + "/tma_tile_copy.mlir"
        assert "site-packages" in example
    ptx = run(["copy-opt", example, "-t", "ptx"], cwd, env)
    assert ptx.returncode == 0, ptx.stderr
    assert "cp.async.bulk.tensor" in ptx.stdout
    # Outside the project, copy-rules is told where the project is.
    rules = run(["copy-rules"] + ([] if where == "root" else ["--root", str(project)]), cwd, env)
    assert rules.returncode == 0, rules.stdout + rules.stderr
    assert rules.stdout.splitlines()[-1].startswith("covered ")
    layout = run(["copy-layout", "memref<8x32xf32, #copy.smem<swizzle = 128>>"], cwd, env)
    assert layout.returncode == 0, layout.stderr
    assert "     1 |   1   0   3   2   5   4   7   6" in layout.stdout


def test_every_package_folder_is_installed():
    """pyproject.toml lists the packages (copy_tools.examples is the folder examples/): each
    folder of the product with an __init__.py must be among them."""
    folders = {v: k for k, v in SETUPTOOLS.get("package-dir", {}).items()}
    tops = [p.parent for p in ROOT.glob("*/__init__.py") if p.parent.name not in NOT_SHIPPED]
    inits = [init.parent.relative_to(ROOT) for top in tops for init in top.rglob("__init__.py")]
    found = {folders.get(str(folder), ".".join(folder.parts)) for folder in inits}
    assert found == set(SETUPTOOLS["packages"])
