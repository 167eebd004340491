"""A ProtocolWarning (what the protocol analysis cannot prove) points at the user's line,
whichever entry point verified the module: `analysis.verify.verify_module` (through
`check_module`), `passes.pipeline`'s compile, `copy_tools.runtime`'s verify and compile;
never at a frame of the project or of xDSL."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import analysis.verify
from analysis.protocol import ProtocolWarning
from copy_tools import runtime
from copy_tools.universe import make_context
from passes import pipeline

# The first chunk of lit_tests/dialects/copy/protocol-warnings.mlir: a wait whose parity is
# a kernel argument (P6: it cannot be proven).
UNPROVEN = """
func.func @k(%x: memref<256x256xf32>, %parity: i1) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %parity : !copy.barrier<1>
  func.return
}
"""  # noqa: E501


def parsed() -> ModuleOp:
    return Parser(make_context(), UNPROVEN).parse_module()


def caught(call: Callable[[], object]) -> list[warnings.WarningMessage]:
    """The ProtocolWarnings `call` issues."""
    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always", ProtocolWarning)
        call()
    return [w for w in found if issubclass(w.category, ProtocolWarning)]


ENTRY_POINTS: dict[str, Callable[[], object]] = {
    "analysis.verify.verify_module": lambda: analysis.verify.verify_module(parsed()),
    "analysis.verify.check_module": lambda: analysis.verify.check_module(parsed()),
    "pipeline.verify_module": lambda: pipeline.verify_module(parsed()),
    "pipeline.compile_module": lambda: pipeline.compile_module(parsed(), make_context(), "sm_90a"),
    "runtime.verify_module": lambda: runtime.verify_module(parsed()),
    "runtime.compile(module)": lambda: runtime.compile(parsed(), "sm_90a"),
    "runtime.compile(text)": lambda: runtime.compile(UNPROVEN, "sm_90a"),
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_the_warning_is_at_the_users_line(entry: str):
    found = caught(ENTRY_POINTS[entry])
    assert found, f"{entry} issued no ProtocolWarning"
    assert "its parity is not known statically" in str(found[0].message)
    # The user's frame: the lambda above (this file, at its line), not a frame of the
    # project (analysis/verify.py, passes/pipeline.py, copy_tools/runtime.py) or of xDSL.
    lambda_line = next(
        n
        for n, text in enumerate(Path(__file__).read_text().splitlines(), 1)
        if text.lstrip().startswith(f'"{entry}":')
    )
    for warning in found:
        assert (warning.filename, warning.lineno) == (__file__, lambda_line), entry


def test_a_direct_call_is_at_its_own_line():
    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always", ProtocolWarning)
        analysis.verify.verify_module(parsed())
        line = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]
    [warning] = [w for w in found if issubclass(w.category, ProtocolWarning)]
    assert (warning.filename, warning.lineno) == (__file__, line)
