"""A verification run makes an op's IRDL checks once per op signature (`Signature`), for the
copy ops and for the ops of other dialects alike (`verify_op`, `irdl_verifier`), and every
check that reads more than the signature still runs for every op: the op's traits, its own
`verify_`, the copy ops' checks of their operands' values."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FunctionType, IndexType, ModuleOp
from xdsl.ir import Block, Operation, Region
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, traits_def
from xdsl.parser import Parser
from xdsl.traits import HasParent
from xdsl.utils.exceptions import VerifyException

from copy_dialect import ops as copy
from copy_dialect.verification import (
    _RUN,
    Signature,
    irdl_verifier,
    op_errors,
    verification_run,
)
from copy_tools.universe import make_context


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def failing(module: Operation) -> list[tuple[str, str]]:
    return [(op.name, str(error)) for op, error in op_errors(module)]


KERNEL = """
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @k() attributes {{gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>}} {{
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %p = arith.constant false
{body}
    func.return
  }}
}}
"""


def test_an_equal_signature_does_not_spare_the_operand_checks():
    """Two barrier waits of one signature: the second waits on a slot outside the group (a
    check of its index operand's constant, not of its signature)."""
    body = "\n".join(
        f"    %i{n} = arith.constant {n} : index\n"
        f"    copy.barrier_wait %bars[%i{n}], %p : !copy.barrier<4>"
        for n in (0, 1, 5)
    )
    errors = failing(parse(KERNEL.format(body=body)))
    assert len(errors) == 1
    name, message = errors[0]
    assert name == "copy.barrier_wait"
    assert "5" in message


def test_an_equal_signature_does_not_spare_the_ops_own_verifier():
    """Two `func.return %x : i32` of one signature: the second is in a function that
    returns f32 (func.return's own verifier reads its function)."""
    text = """
builtin.module {
  func.func @a(%x: i32) -> i32 {
    func.return %x : i32
  }
  func.func @b(%x: i32) -> f32 {
    func.return %x : i32
  }
}
"""
    module = parse(text)
    returns = [op for op in module.walk() if isinstance(op, func.ReturnOp)]
    with verification_run():
        run = _RUN.get()
        assert run is not None
        assert Signature(returns[0], run) == Signature(returns[1], run)
        assert [op for op, _ in op_errors(module)] == [returns[1]]


PROBED: list[Operation] = []
"""The probes whose own verifier ran."""


@irdl_op_definition
class ProbeOp(IRDLOperation):
    """An op of another dialect than copy: one index operand, in a function, defined by an
    `arith.constant` (its own verifier's check, which reads more than its signature)."""

    name = "test.probe"
    value = operand_def(IndexType)
    traits = traits_def(HasParent(func.FuncOp))

    def verify_(self) -> None:
        PROBED.append(self)
        if not isinstance(self.value.owner, arith.ConstantOp):
            raise VerifyException("the probe's operand must be a constant")


def test_many_equal_upstream_ops_with_bad_ones():
    """A kernel of many probes of one signature (IRDL-checked once), one of them on a block
    argument (its own verifier fails) and one outside a function (its trait fails): both
    are reported, and each probe's own verifier ran."""
    assert irdl_verifier(ProbeOp) is not None
    assert irdl_verifier(copy.BarrierWaitOp) is None  # checks its signature itself
    assert irdl_verifier(func.FuncOp) is None  # a region: checked whole
    body = Block(arg_types=[IndexType()])
    constant = arith.ConstantOp.from_int_and_width(0, IndexType())
    body.add_op(constant)
    probes = [ProbeOp.create(operands=[constant.result]) for _ in range(200)]
    bad_operand = ProbeOp.create(operands=[body.args[0]])
    probes.insert(150, bad_operand)
    body.add_ops([*probes, func.ReturnOp()])
    kernel = func.FuncOp("k", FunctionType.from_lists([IndexType()], []), Region(body))
    outside_constant = arith.ConstantOp.from_int_and_width(1, IndexType())
    outside = ProbeOp.create(operands=[outside_constant.result])
    module = ModuleOp([kernel, outside_constant, outside])

    PROBED.clear()
    with verification_run():
        errors = op_errors(module)
        run = _RUN.get()
        assert run is not None
        assert sum(1 for s in run.irdl_checked if s.key[0] is ProbeOp) == 1
    assert [op for op, _ in errors] == [bad_operand, outside]
    assert "constant" in str(errors[0][1])
    assert "expects parent op" in str(errors[1][1])
    assert len(PROBED) == 201  # every probe in the function


def test_outside_a_run_every_op_is_checked_whole():
    """xDSL's own `verify()` (no run) makes every check of every op."""
    body = Block()
    constant = arith.ConstantOp.from_int_and_width(0, IndexType())
    body.add_ops([constant, ProbeOp.create(operands=[constant.result]), func.ReturnOp()])
    module = ModuleOp([func.FuncOp("k", FunctionType.from_lists([], []), Region(body))])
    module.verify()
    outside = ProbeOp.create(operands=[constant.result])
    module.body.block.add_op(outside)
    with pytest.raises(VerifyException, match="expects parent op"):
        module.verify()


def test_equal_types_of_different_values_make_one_signature():
    """Signatures compare types by value: two loads through different index values share one
    signature; a load of another element type does not."""
    text = """
builtin.module {
  func.func @f(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xi32>, %i: index) {
    %j = arith.constant 1 : index
    %x = memref.load %a[%i] : memref<8xf32>
    %y = memref.load %b[%j] : memref<8xf32>
    %z = memref.load %c[%j] : memref<8xi32>
    func.return
  }
}
"""
    loads = [op for op in parse(text).walk() if op.name == "memref.load"]
    with verification_run():
        run = _RUN.get()
        x, y, z = (Signature(op, run) for op in loads)
    assert x == y
    assert x != z
    assert Signature(loads[0]) == Signature(loads[1])  # outside a run, by value too


def test_constants_of_one_type_share_a_signature_and_a_wrong_type_is_still_caught():
    """An `arith.constant`'s IRDL constraint reads its value's kind and type, not the number:
    the integer constants of one type share a signature (a straight kernel's coordinates are
    checked once), and one whose value's type is not its result's fails after them."""
    body = "\n".join(f"    %r{n} = arith.constant {64 * n} : index" for n in range(3))
    module = parse(KERNEL.format(body=body))
    constants = [op for op in module.walk() if op.name == "arith.constant"][1:]
    with verification_run():
        assert len({Signature(op, _RUN.get()) for op in constants}) == 1
    wrong = '    %w = "arith.constant"() <{value = 7 : i32}> : () -> index'
    errors = failing(parse(KERNEL.format(body=f"{body}\n{wrong}")))
    assert [name for name, _ in errors] == ["arith.constant"]
