"""Rule I2 through the builder API: every op that takes a barrier group and an index rejects
a constant index outside the group (an `arith.constant`, or an i32 one cast to index), a
missing index on a group of several, and an index without a group."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FunctionType, IndexType, MemRefType, ModuleOp, f32, i1, i32
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from copy_dialect import ops as copy
from copy_dialect.errors import CopyVerifyException

GMEM = MemRefType(f32, [256, 256])
SMEM = MemRefType(f32, [64, 64], memory_space=copy.SmemSpaceAttr())


def index(b: Builder, value: int, cast_from_i32: bool) -> SSAValue:
    if not cast_from_i32:
        return b.insert(arith.ConstantOp.from_int_and_width(value, IndexType())).result
    narrow = b.insert(arith.ConstantOp.from_int_and_width(value, i32)).result
    return b.insert(arith.IndexCastOp(narrow, IndexType())).result


def load(b, x, bars, i, parity):
    c0 = index(b, 0, False)
    buf = b.insert(copy.AllocSmemOp(SMEM)).result
    b.insert(copy.AsyncCopyOp(x, buf, src_indices=[c0, c0], barrier=bars, barrier_index=i))


OPS: dict[str, Callable] = {
    "async_copy": load,
    "barrier_arrive": lambda b, x, bars, i, parity: b.insert(copy.BarrierArriveOp(bars, i)),
    "barrier_arrive_expect_tx": lambda b, x, bars, i, parity: b.insert(
        copy.BarrierArriveExpectTxOp(bars, i, bytes=16384)
    ),
    "barrier_wait": lambda b, x, bars, i, parity: b.insert(copy.BarrierWaitOp(bars, i, parity)),
    "barrier_arrive_drop": lambda b, x, bars, i, parity: b.insert(
        copy.BarrierArriveDropOp(bars, i)
    ),
    "barrier_expect_tx": lambda b, x, bars, i, parity: b.insert(
        copy.BarrierExpectTxOp(bars, i, bytes=4096)
    ),
    "barrier_complete_tx": lambda b, x, bars, i, parity: b.insert(
        copy.BarrierCompleteTxOp(bars, i, bytes=4)
    ),
}


def build(op: str, count: int, value: int | None, cast_from_i32: bool = False) -> ModuleOp:
    """`op` on a group of `count` barriers at constant index `value` (None: no index)."""
    block = Block(arg_types=[GMEM, i1])
    b = Builder(InsertPoint.at_end(block))
    x, parity = block.args
    bars = b.insert(copy.BarrierInitOp(count)).result
    i = None if value is None else index(b, value, cast_from_i32)
    OPS[op](b, x, bars, i, parity)
    b.insert(func.ReturnOp())
    fn = func.FuncOp("k", FunctionType.from_lists([GMEM, i1], []), Region(block))
    module = ModuleOp([fn])
    module.attributes["copy.target"] = copy.TargetAttr("sm_90a")
    return module


@pytest.mark.parametrize("cast_from_i32", [False, True], ids=["index", "i32"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_constant_index_outside_the_group(op, cast_from_i32):
    for count, value in [(1, 3), (2, 2), (4, 4), (32, 32), (2, -1)]:
        with pytest.raises(CopyVerifyException, match=f"Barrier offset {value} is out of bounds"):
            build(op, count, value, cast_from_i32).verify()
    for count, value in [(1, 0), (2, 1), (32, 31)]:
        build(op, count, value, cast_from_i32).verify()


@pytest.mark.parametrize("op", sorted(OPS))
def test_a_group_of_several_needs_an_index(op):
    build(op, 1, None).verify()  # a group of one may go without
    with pytest.raises(CopyVerifyException, match="only valid for a single barrier"):
        build(op, 4, None).verify()


def test_an_index_needs_a_barrier():
    block = Block(arg_types=[GMEM])
    b = Builder(InsertPoint.at_end(block))
    c0 = index(b, 0, False)
    buf = b.insert(copy.AllocSmemOp(SMEM)).result
    # A cp.async load, which takes no barrier, given an index by mistake.
    b.insert(
        copy.AsyncCopyOp(
            block.args[0], buf, src_indices=[c0, c0], barrier_index=c0, implementation="cp_async"
        )
    )
    b.insert(func.ReturnOp())
    module = ModuleOp([func.FuncOp("k", FunctionType.from_lists([GMEM], []), Region(block))])
    with pytest.raises(CopyVerifyException, match="a barrier index needs a barrier") as info:
        module.verify()
    assert "drop barrier_index" in str(info.value.note)
