"""Shared fixtures: an xDSL context with every dialect copy-opt knows; the GPU tests
interpreted where there is no GPU (compared with the interpreter on a GPU under
COPY_INTERPRET=compare: tests/device.py)."""

from __future__ import annotations

import pytest
from xdsl.context import Context

from copy_tools.universe import make_context
from tests import device


@pytest.fixture(autouse=True)
def _gpu_tests_interpreted(request, monkeypatch) -> None:
    """A test marked `gpu` runs on the CPU under the interpreter where there is no GPU
    (COPY_INTERPRET=1: each kernel call is interpreted; tests/device.py)."""
    if not device.GPU and request.node.get_closest_marker("gpu") is not None:
        monkeypatch.setenv("COPY_INTERPRET", "1")
    if device.COMPARING and request.node.get_closest_marker("not_interpreted") is not None:
        monkeypatch.setenv("COPY_INTERPRET", "0")  # only the GPU runs it


@pytest.fixture
def ctx() -> Context:
    return make_context()


_REPORTS: list[tuple[str, list[str]]] = []

REPORT = "copy-report"
"""The user property a test's titled block of lines travels in (to the controller, under
pytest-xdist)."""


@pytest.fixture
def report(request):
    """Adds a titled block of lines to the terminal summary (a test's counts, shown even
    without -s, and from pytest-xdist's workers)."""

    def add(title: str, lines: list[str]) -> None:
        request.node.user_properties.append((REPORT, (title, lines)))
        print("\n".join([title, *lines]))

    return add


def pytest_runtest_logreport(report) -> None:
    if report.when == "call":
        _REPORTS.extend(value for key, value in report.user_properties if key == REPORT)


def pytest_terminal_summary(terminalreporter) -> None:
    for title, lines in _REPORTS:
        terminalreporter.section(title)
        for line in lines:
            terminalreporter.write_line(line)
