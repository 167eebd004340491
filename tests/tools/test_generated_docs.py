"""docs/reference/ is what `python -m copy_tools.gen_docs` generates from the code now.

When this fails, regenerate and commit the pages: `python -m copy_tools.gen_docs` (or
`copy-docs`); `python -m copy_tools.gen_docs --check` tells whether they are current.
"""

from __future__ import annotations

import difflib
from functools import cache
from pathlib import Path

from copy_dialect.dialect import Copy
from copy_tools import gen_docs

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
REGENERATE = "docs/reference is not current: regenerate with `python -m copy_tools.gen_docs`"


@cache
def pages() -> dict[str, str]:
    """The pages the code generates now, once per test process (each generation reads the
    whole source tree)."""
    return gen_docs.pages(ROOT)


def test_the_reference_pages_are_current():
    generated = pages()
    committed = {p.name for p in REFERENCE.glob("*.md")}
    assert committed == set(generated), REGENERATE
    for name in sorted(generated):
        new = generated[name].splitlines()
        old = (REFERENCE / name).read_text().splitlines()
        diff = "\n".join(list(difflib.unified_diff(old, new, name, name, lineterm=""))[:40])
        assert old == new, f"{REGENERATE}\n{diff}"


def test_check_mode_reports_a_stale_page(tmp_path: Path, capsys):
    gen_docs.write(tmp_path, ROOT)
    assert gen_docs.main(["--check", "-o", str(tmp_path), "--root", str(ROOT)]) == 0
    (tmp_path / "groups.md").write_text("stale\n")
    assert gen_docs.main(["--check", "-o", str(tmp_path), "--root", str(ROOT)]) == 1
    assert "groups.md is not current" in capsys.readouterr().err


def test_every_op_has_its_section_syntax_and_example():
    for op in Copy.operations:
        module = op.__module__.rpartition(".")[2]
        page = pages()[f"{gen_docs.FAMILY_OF.get(module, module)}.md"]
        section = page.split(f"## `{op.name}` ({op.__name__})", 1)[1].split("\n## ", 1)[0]
        assert "### Syntax" in section, op.name
        assert "```mlir" in section, op.name


def test_rules_of_an_op_come_with_message_and_fix():
    page = pages()["copies.md"]
    # C7 is checked in copy_dialect/tma.py, reached from AsyncCopyOp.verify_.
    row = next(line for line in page.splitlines() if line.startswith("| [C7](rules.md#c7), [TR5]"))
    assert "<=256 elements along each dimension, got {size}" in row
    assert "tma.py" in row
    rules = pages()["rules.md"]
    assert "## TR19" in rules
    tr19 = rules.split("## TR19", 1)[1].split("\n## ", 1)[0]
    assert (
        "Ops: [copies.md](copies.md), [gather4.md](gather4.md), "
        "[gather4_prefetch.md](gather4_prefetch.md), [im2col.md](im2col.md)."
    ) in tr19
