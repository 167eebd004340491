"""SSA dominance (analysis.dominance): the uses mlir-opt rejects are found, with mlir-opt's
note and a fix, and the Python path (`runtime.compile` of a built module) raises them; valid
IR, graph regions and unreachable blocks pass."""

from __future__ import annotations

import inspect

import pytest
from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FunctionType, IndexType, IntegerAttr, ModuleOp, UnitAttr
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.rewriter import InsertPoint

from analysis.dominance import non_dominating_uses, verify_dominance
from copy_dialect.errors import CopyDiagnosticError
from copy_tools import runtime
from frontends import kernels
from passes.pipeline import verify_module


def parse(ctx, text: str) -> ModuleOp:
    module = Parser(ctx, text).parse_module()
    module.verify()  # xDSL's verifier accepts all of these
    return module


def found(ctx, text: str) -> list[tuple[str, int, str]]:
    return [
        (str(use.user.attributes.get("tag", use.user.name)), use.index, use.defined_here)
        for use in non_dominating_uses(parse(ctx, text))
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '%0 = "test.op"(%0) {tag = "self"} : (i32) -> i32',
            [('"self"', 0, "operand defined here (op in the same block)")],
        ),
        (
            """func.func @f(%x: i32) {
              "test.op"(%x, %1) {tag = "use"} : (i32, i32) -> ()
              %1 = "test.op"() : () -> i32
              func.return
            }""",
            [('"use"', 1, "operand defined here (op in the same block)")],
        ),
        (
            """func.func @f(%c: i1) {
              cf.cond_br %c, ^a, ^b
            ^a:
              %v = "test.op"() : () -> i32
              cf.br ^b
            ^b:
              "test.op"(%v) {tag = "use"} : (i32) -> ()
              func.return
            }""",
            [('"use"', 0, "operand defined here (op in the same region)")],
        ),
        (
            """func.func @f(%c: i1) {
              scf.if %c {
                "test.op"(%v) {tag = "nested"} : (i32) -> ()
              }
              %v = "test.op"() : () -> i32
              func.return
            }""",
            [('"nested"', 0, "operand defined here (op in a parent region)")],
        ),
        (
            """func.func @f(%c: i1, %x: i32) {
              cf.cond_br %c, ^a(%x : i32), ^b
            ^a(%y: i32):
              cf.br ^b
            ^b:
              "test.op"(%y) {tag = "arg"} : (i32) -> ()
              func.return
            }""",
            [('"arg"', 0, "operand defined as a block argument (block #1 in the same region)")],
        ),
    ],
    ids=["self-use", "use-before-def", "non-dominating-block", "nested-use", "block-argument"],
)
def test_non_dominating_uses(ctx, text, expected):
    assert found(ctx, text) == expected


def test_every_bad_op_is_reported_once(ctx):
    text = """func.func @f() {
      "test.op"(%1, %1) {tag = "a"} : (i32, i32) -> ()
      "test.op"(%1) {tag = "b"} : (i32) -> ()
      %1 = "test.op"() : () -> i32
      func.return
    }"""
    assert [(t, i) for t, i, _ in found(ctx, text)] == [('"a"', 0), ('"b"', 0)]


def test_valid_ir_passes(ctx):
    text = """
    "test.op"(%late) : (i32) -> ()
    %late = "test.op"() : () -> i32
    func.func @f(%c: i1, %x: i32) -> i32 {
      %v = arith.addi %x, %x : i32
      cf.cond_br %c, ^a(%v : i32), ^b
    ^a(%y: i32):
      %w = arith.addi %y, %v : i32
      scf.if %c {
        %u = arith.addi %w, %y : i32
      }
      cf.br ^b
    ^u:
      cf.br ^b
    ^b:
      func.return %v : i32
    ^dead:
      func.return %w : i32
    }"""
    module = parse(ctx, text)
    assert non_dominating_uses(module) == []
    verify_dominance(module)


def test_the_pipelined_kernel_is_dominance_clean():
    assert non_dominating_uses(kernels.tma_copy_pipelined((256, 256), "f32", (64, 64))) == []


def built_use_before_def() -> ModuleOp:
    """A kernel built in Python whose addi uses a constant inserted after it."""
    entry = Block()
    b = Builder(InsertPoint.at_end(entry))
    c = arith.ConstantOp(IntegerAttr(1, IndexType()))
    b.insert(arith.AddiOp(c.result, c.result))
    b.insert(c)
    b.insert(func.ReturnOp())
    fn = func.FuncOp("k", FunctionType.from_lists([], []), Region(entry))
    fn.attributes["gpu.kernel"] = UnitAttr()
    return ModuleOp([fn])


def test_python_path_raises_with_a_fix():
    """The Python path raises copy-opt's diagnostics, in mlir-opt's form: mlir-opt's
    verifier emits this error with `op.emitError` (no `'<op>' op` prefix, unlike an op
    verifier's `emitOpError`), and lit_tests/copy-opt/dominance.mlir pins copy-opt's text.
    The op built here has no location: `analysis.verify` reports it at `<unknown>`, the
    runtime at the user's call."""
    module = built_use_before_def()
    module.verify()  # what xDSL alone says
    expected = (
        "<unknown>:0:0: error: operand #0 does not dominate this use\n"
        "<unknown>:0:0: note: operand defined here (op in the same block)\n"
        "<unknown>:0:0: note: define the value before its use: move the use below the "
        "definition, or the definition above it"
    )
    with pytest.raises(CopyDiagnosticError) as info:
        verify_module(module)
    assert str(info.value) == expected
    assert info.value.message == "operand #0 does not dominate this use"
    assert info.value.note.startswith("define the value before its use")  # type: ignore[union-attr]
    with pytest.raises(CopyDiagnosticError) as info:
        runtime.compile(built_use_before_def(), "sm_90a")
    line = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]
    assert info.value.location == (__file__, line, 9)
    assert (
        str(info.value)
        .splitlines()[0]
        .endswith(f":{line}:9: error: operand #0 does not dominate this use")
    )
    assert info.value.note.startswith("define the value before its use")  # type: ignore[union-attr]
