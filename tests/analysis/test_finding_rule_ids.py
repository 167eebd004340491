"""Every finding of the protocol analysis names its rule: on each kernel of the protocol lit
tests, each error and warning carries the ids of the `# rule:` tag above the check that
made it (copy-rules counts the tags; a finding without one would be reported untagged)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from analysis.protocol import check_protocol
from analysis.verify import verification_errors
from copy_tools.universe import make_context

LIT = Path(__file__).resolve().parents[2] / "lit_tests" / "dialects" / "copy"
FILES = sorted(p for p in LIT.glob("*.mlir") if "protocol" in p.name)


def kernels(path: Path) -> list[tuple[str, str]]:
    chunks = path.read_text(encoding="utf-8").split("// -----")
    return [(f"{path.name}#{n}", chunk) for n, chunk in enumerate(chunks)]


def findings(path: Path) -> list[tuple[str, object]]:
    """(chunk name, finding) of each kernel of `path` whose ops verify."""
    found = []
    for name, chunk in kernels(path):
        try:
            module = Parser(make_context(), chunk, name).parse_module()
        except ParseError:
            continue
        if not verification_errors(module):
            found += [(name, f) for f in check_protocol(module)]
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_finding_names_its_rule(path: Path):
    untagged = [f"{name}: {f}" for name, f in findings(path) if not f.rules]  # type: ignore[attr-defined]
    assert untagged == []


def test_the_lit_kernels_have_findings_of_both_severities():
    severities = {f.severity for path in FILES for _, f in findings(path)}  # type: ignore[attr-defined]
    assert severities == {"error", "warning"}
