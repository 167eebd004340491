"""TMEM capacity per target (`[tmem]` of hardware.toml, issue 33 item 4): the table names
exactly the targets with tcgen05, and the allocation rules (J10 on the op, J19 over the
kernel) read their target's entry rather than a number of their own."""

from __future__ import annotations

import pytest
from xdsl.parser import Parser

from analysis.verify import verify_module
from copy_dialect import tmem
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from facts import hardware as hw
from facts.target import TARGETS, TCGEN05


def test_the_table_names_the_targets_with_tcgen05():
    assert set(hw.TMEM_COLUMNS) == set(TCGEN05.targets)
    assert set(hw.TMEM_COLUMNS) <= set(TARGETS)
    assert "sm_120a" not in hw.TMEM_COLUMNS  # consumer Blackwell: ptxas refuses tcgen05
    assert hw.TMEM_COLUMNS["sm_100a"] == hw.TMEM_COLUMNS["sm_103a"] == 512
    assert hw.TMEM_LANES == 128
    assert hw.TMEM_MAX_COLUMNS == max(hw.TMEM_COLUMNS.values())


def kernel(target: str, *columns: int) -> str:
    allocs = "\n".join(
        f"  %t{i} = copy.tmem_alloc : memref<128x{n}xf32, #copy.tmem>"
        for i, n in enumerate(columns)
    )
    deallocs = "\n".join(
        f"  copy.tmem_dealloc %t{i} : memref<128x{n}xf32, #copy.tmem>"
        for i, n in enumerate(columns)
    )
    return (
        f'func.func @k() attributes {{copy.target = #copy.target<"{target}">}} {{\n'
        f"{allocs}\n{deallocs}\n  func.return\n}}"
    )


def verify(text: str) -> None:
    module = Parser(make_context(), text).parse_module()
    verify_module(module)


def test_the_alloc_rules_read_the_table(monkeypatch):
    verify(kernel("sm_103a", 512))
    verify(kernel("sm_103a", 256, 256))
    # A target with half the columns: the same IR breaks J10, and two allocations J19.
    monkeypatch.setitem(hw.TMEM_COLUMNS, "sm_103a", 256)
    with pytest.raises(CopyVerifyException, match=r"within \[32, 256\], got: 512"):
        verify(kernel("sm_103a", 512))
    with pytest.raises(CopyVerifyException, match="less than or equal to 256 but got: 384"):
        verify(kernel("sm_103a", 256, 128))
    verify(kernel("sm_100a", 512))  # the other targets keep theirs
    assert tmem.TMEM_COLUMNS == 512
