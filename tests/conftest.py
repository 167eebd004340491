"""Shared fixtures: an xDSL context with every dialect copy-opt knows."""

from __future__ import annotations

import pytest
from xdsl.context import Context

from copy_tools.universe import make_context


@pytest.fixture
def ctx() -> Context:
    return make_context()


_REPORTS: list[tuple[str, list[str]]] = []


@pytest.fixture
def report():
    """Adds a titled block of lines to the terminal summary (a test's counts, shown even
    without -s)."""

    def add(title: str, lines: list[str]) -> None:
        _REPORTS.append((title, lines))
        print("\n".join([title, *lines]))

    return add


def pytest_terminal_summary(terminalreporter) -> None:
    for title, lines in _REPORTS:
        terminalreporter.section(title)
        for line in lines:
            terminalreporter.write_line(line)
