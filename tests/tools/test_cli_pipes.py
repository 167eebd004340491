"""No Python traceback escapes a command-line tool (issue 32, item 2): with stdout a pipe
nobody reads (`copy-rules | head` once head has gone), each tool ends quietly; an unexpected
exception inside one is an `internal error` line and a note, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from copy_tools import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "tma_tile_copy.mlir")

TOOLS = {
    "copy-rules": ["copy_tools.rule_coverage"],
    "copy-layout": ["copy_tools.copy_layout", "memref<64x64xf16, #copy.smem<swizzle = 128>>"],
    "copy-opt": ["copy_tools.copy_opt", EXAMPLE],
    "copy-docs": ["copy_tools.gen_docs", "--help"],
}


def run_into_a_closed_pipe(args: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """Run `python -m args` with stdout a pipe whose reading end is already closed."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", *args],
            stdout=write, stderr=subprocess.PIPE, text=True, timeout=300, cwd=cwd,
        )  # fmt: skip
    finally:
        os.close(write)


@pytest.mark.parametrize("tool", TOOLS)
def test_a_closed_pipe_ends_the_tool_quietly(tool):
    done = run_into_a_closed_pipe(TOOLS[tool])
    assert "Traceback" not in done.stderr, done.stderr
    assert "BrokenPipeError" not in done.stderr, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.returncode


def test_the_demo_too(tmp_path):
    done = run_into_a_closed_pipe(["copy_tools.demo", EXAMPLE, "--out", str(tmp_path)])
    assert "Traceback" not in done.stderr, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr
    assert done.returncode == 0


def test_an_internal_error_is_a_line_and_a_note(capsys):
    def broken() -> int:
        raise KeyError("oops")

    assert cli.guarded("copy-x", broken) == 1
    err = capsys.readouterr().err
    assert err.startswith("copy-x: error: internal error: KeyError: 'oops'\ncopy-x: note: ")
    assert "Traceback" not in err


def test_ctrl_c_exits_130():
    def interrupted() -> int:
        raise KeyboardInterrupt

    assert cli.guarded("copy-x", interrupted) == 130


def test_the_demo_finds_its_example_in_a_checkout(monkeypatch):
    """`python -m copy_tools.demo` in a source tree that is not installed (no package data
    `copy_tools.examples`): the example is the tree's examples/ file, and a path given on the
    command line never needed the package data (it had been looked up at import)."""
    from importlib import resources

    from copy_tools import demo

    def missing(name):
        raise ModuleNotFoundError(f"No module named {name!r}")

    monkeypatch.setattr(resources, "files", missing)
    found = demo.default_example()
    assert found.name == demo.EXAMPLE_NAME
    assert found.parent.name == "examples"
    assert found.is_file()
