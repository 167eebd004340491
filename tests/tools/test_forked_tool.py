"""tests/forked_tool.py: a forked run returns what the tool's own process returns, and a run
past its timeout raises as `subprocess.run` does."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.forked_tool import FORKS, ForkedTool

pytestmark = pytest.mark.skipif(not FORKS, reason="no os.fork: ForkedTool starts processes")

FIXTURE = "tests.tools.forked_fixture"


def test_status_streams_and_argv_are_the_process_ones():
    tool = ForkedTool(FIXTURE)
    try:
        forked = tool.run(["0", "3"], b"copied\n")
    finally:
        tool.stop()
    process = subprocess.run(
        [sys.executable, "-m", FIXTURE, "0", "3"], input=b"copied\n", capture_output=True
    )
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        process.returncode, process.stdout, process.stderr,
    )  # fmt: skip
    assert forked.returncode == 3


def test_a_run_past_its_timeout_raises_and_the_next_one_runs():
    tool = ForkedTool(FIXTURE)
    try:
        started = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired):
            tool.run(["30", "0"], b"", timeout=1)
        assert time.monotonic() - started < 10
        assert tool.run(["0", "0"], b"again").stdout == b"again"
    finally:
        tool.stop()
