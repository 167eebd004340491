"""The copy ops' custom syntax rejects a keyword whose operand is missing.

xDSL 0.75's declarative assembly format reads the anchor operand of an optional group as
optional even once the group's keyword was read, so `copy.gather4 ... multicast :` parsed as
a gather4 without a mask and `... if :` as one without a predicate: the input silently
dropped. `copy_dialect.verification.strict_optional_operands` makes each such keyword a parse
error at the keyword; these tests hold every op that has such a group to it."""

from __future__ import annotations

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from copy_dialect.dialect import Copy
from copy_dialect.verification import OPTIONAL_OPERAND_GROUP
from copy_tools.universe import make_context

GATHER4 = """
func.func @k(%x: memref<128x64xf16>, %if: i1, %multicast: i16) {{
  %c0 = arith.constant 0 : index
  %t = copy.alloc_smem : memref<4x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // multicast and if here are comments
  copy.gather4 %x rows [%c0, %c0, %c0, %c0] column [%c0] to %t barrier %bar[%c0]{tail}
      : memref<128x64xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}}
"""

ASYNC_COPY = """
func.func @k(%x: memref<128x64xf16>, %p: i1) {{
  %c0 = arith.constant 0 : index
  %t = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %t barrier %bar[%c0]{tail}
      : memref<128x64xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}}
"""


def parse(text: str):
    return Parser(make_context(), text).parse_module()


@pytest.mark.parametrize(
    ("template", "tail", "keyword"),
    [
        (GATHER4, " multicast", "multicast"),
        (GATHER4, " if", "if"),
        (GATHER4, " multicast %multicast if", "if"),
        (ASYNC_COPY, " if", "if"),
    ],
    ids=["gather4-multicast", "gather4-if", "gather4-if-after-multicast", "async_copy-if"],
)
def test_a_keyword_without_its_operand_is_a_parse_error(template: str, tail: str, keyword: str):
    with pytest.raises(ParseError) as err:
        parse(template.format(tail=tail))
    message = str(err.value)
    assert f"expected an SSA value (%name) after `{keyword}`" in message
    # the caret at the keyword
    assert keyword in message.splitlines()[-2] or keyword in message


@pytest.mark.parametrize(
    ("template", "tail", "mask", "predicate"),
    [
        (GATHER4, " multicast %multicast", "multicast", None),
        (GATHER4, " if %if", None, "if"),
        (GATHER4, " multicast %multicast if %if", "multicast", "if"),
        (GATHER4, "", None, None),
        (ASYNC_COPY, " if %p", None, "p"),
    ],
)
def test_a_keyword_with_its_operand_parses(template, tail, mask, predicate):
    """Values named like the keywords (`%if`, `%multicast`) and the keywords in a comment
    before the op are not taken for a bare keyword; the operands land where they belong."""
    module = parse(template.format(tail=tail))
    op = next(o for o in module.walk() if o.name in ("copy.gather4", "copy.async_copy"))
    got_mask = getattr(op, "multicast", None)
    assert (got_mask.name_hint if got_mask is not None else None) == mask
    got = op.predicate
    assert (got.name_hint if got is not None else None) == predicate


def test_every_op_with_an_optional_operand_group_parses_strictly():
    """Each copy op whose syntax has a keyword-led optional operand group has the strict
    parse (a new op gets it from copy_op_definition)."""
    found = []
    for op in Copy.operations:
        fmt = getattr(op, "assembly_format", None) or ""
        operands = {name for name, _ in op.get_irdl_definition().operands}
        if any(var in operands for _, var in OPTIONAL_OPERAND_GROUP.findall(fmt)):
            found.append(op.name)
            assert op.parse.__func__.__name__ == "strict", op.name
    assert "copy.gather4" in found, found
    assert "copy.async_copy" in found, found
