"""docs/frontend.md runs (issue 32, item 6): its Python blocks run in order, in one
namespace, compiled as the page's own lines (`docs/frontend.md:LINE`, so that an op is
located at the page's line that made it), and each ```text block right after a Python
block is exactly what that block prints. The cooperative GEMM's line count in the page's
table is the count of its block.

After a deliberate change to the page: `python -m tests.frontends.test_frontend_walkthrough`
prints each block's output (from the repository's root)."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = "docs/frontend.md"


@dataclass(frozen=True)
class Block:
    lang: str
    line: int
    """The page's line of the block's first line of code."""
    text: str


def blocks(text: str) -> list[Block]:
    found: list[Block] = []
    for match in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.MULTILINE | re.DOTALL):
        line = text.count("\n", 0, match.start(2)) + 1
        found.append(Block(match.group(1), line, match.group(2)))
    return found


def run_page() -> list[tuple[Block, str, Block | None]]:
    """Each Python block, what it printed and the ```text block after it (if any)."""
    page = blocks((ROOT / PAGE).read_text())
    namespace: dict[str, object] = {"__name__": "walkthrough"}
    runs = []
    for n, block in enumerate(page):
        if block.lang != "python":
            continue
        code = compile("\n" * (block.line - 1) + block.text, PAGE, "exec")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(code, namespace)  # noqa: S102 (the page's own code)
        after = page[n + 1] if n + 1 < len(page) and page[n + 1].lang == "text" else None
        runs.append((block, out.getvalue(), after))
    return runs


def code_lines(source: str, name: str) -> int:
    """The lines of function `name` in `source`: not blank, not only a comment, not its
    docstring (the count the page's table gives)."""
    tree = ast.parse(source)
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)
    docs = {
        line
        for node in ast.walk(fn)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    lines = source.splitlines()
    return sum(
        1
        for line in range(fn.lineno, (fn.end_lineno or fn.lineno) + 1)
        if (text := lines[line - 1].strip()) and not text.startswith("#") and line not in docs
    )


@pytest.fixture(scope="module")
def page_runs():
    cwd = os.getcwd()
    os.chdir(ROOT)  # the ops' file, docs/frontend.md, is read back relative to the root
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the page's kernels are proven, with no warning
            yield run_page()
    finally:
        os.chdir(cwd)


def test_every_block_prints_what_the_page_shows(page_runs):
    shown = [(block, out, after) for block, out, after in page_runs if after is not None]
    assert len(shown) >= 3
    for block, out, after in shown:
        assert out.rstrip("\n") == after.text.rstrip("\n"), f"the block at line {block.line}"


def test_the_mistake_is_reported_at_the_pages_line(page_runs):
    text = (ROOT / PAGE).read_text()
    line = next(
        n
        for n, t in enumerate(text.splitlines(), 1)
        if "emit(copy.AsyncCopyOp, buf, y," in t and "```" not in t
    )
    printed = next(out for _, out, _ in page_runs if "error:" in out)
    assert printed.startswith(f"{PAGE}:{line}:"), printed
    assert "note: " in printed


def test_the_gemm_line_count_is_the_blocks():
    text = (ROOT / PAGE).read_text()
    gemm = next(b for b in blocks(text) if "def cooperative_gemm" in b.text)
    count = code_lines(gemm.text, "cooperative_gemm")
    row = next(t for t in text.splitlines() if t.startswith("| `cooperative_gemm` above"))
    assert row.rstrip().endswith(f"| {count} |"), (count, row)
    gluon = next(t for t in text.splitlines() if t.startswith("| Triton's"))
    assert count <= int(gluon.rstrip(" |").rsplit("|", 1)[1])


if __name__ == "__main__":
    os.chdir(ROOT)
    for block, out, _ in run_page():
        sys.stdout.write(f"--- block at line {block.line}:\n{out}")
