"""What the protocol reads of a kernel's values: the generic ops (`walk.Way.GENERIC`, the
ops that only compute values) whose results no check, handler, condition, bound or index
ever reads, directly or through other values. The walk skips them (`walk.Way.NOTHING`): the
math of a kernel's consumers (the f32 sums of a GEMM's stand-in, the vectors a thread
stores) costs nothing to follow.

A value is read when it is an operand of an op the walk follows itself (a copy op, a loop's
bounds, an `scf.if`'s condition, an SMEM access's memref and indices, a foreign op's
operands), a value the steady-state check compares (`periods.LoopShape.state`), or an
operand of a generic op whose result is read; what a loop carries, or an `scf.if` gives, is
read through what its region yields for it. A stored value is not read: the analysis checks
where a thread writes, not what."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from xdsl.dialects import scf
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from analysis.protocol.periods import LoopShape
from analysis.smem_values import THREAD_WRITES
from copy_dialect.verification import ops_of


def unread_ops(
    fn: Operation, generic: Callable[[Operation], bool], loops: dict[Operation, LoopShape]
) -> frozenset[Operation]:
    """The ops of `fn` for which `generic` holds whose results the protocol never reads;
    `loops`: the loops' shapes, whose carried `state` the steady-state check reads."""
    read: set[SSAValue] = set()
    work: list[SSAValue] = []

    def reads(values: Iterable[SSAValue]) -> None:
        for v in values:
            if v not in read:
                read.add(v)
                work.append(v)

    computed: list[Operation] = []
    for op in ops_of(fn):
        if type(op) in (scf.YieldOp, scf.ConditionOp):
            if not isinstance(op.parent_op(), scf.ForOp | scf.IfOp):
                reads(op.operands)  # a while's regions: read as they are
        elif isinstance(op, scf.ForOp):
            reads((op.lb, op.ub, op.step))
            shape = loops.get(op)
            if shape is not None:
                reads(op.body.blocks[0].args[1 + k] for k in shape.state)
        elif isinstance(op, scf.IfOp):
            reads((op.cond,))
        elif generic(op):
            computed.append(op)
        elif op.name in THREAD_WRITES:
            reads(op.operands[THREAD_WRITES[op.name] :])  # where, not what
        else:
            reads(op.operands)
    values = set(computed)
    while work:
        v = work.pop()
        if isinstance(v, BlockArgument):
            loop = v.block.parent_op()
            if isinstance(loop, scf.ForOp) and v.index > 0:
                reads(carried(loop, v.index - 1))
            continue
        owner = v.owner
        if isinstance(owner, scf.ForOp):
            reads(carried(owner, v.index))
        elif isinstance(owner, scf.IfOp):
            reads(yielded(region.blocks[0], v.index) for region in owner.regions if region.blocks)
        elif owner in values:
            reads(owner.operands)
    return frozenset(op for op in computed if not any(r in read for r in op.results))


def carried(loop: scf.ForOp, i: int) -> tuple[SSAValue, SSAValue]:
    """What the i-th value a loop carries (its block argument, its result) is read through:
    its initial value and what the body yields for it."""
    return (loop.iter_args[i], yielded(loop.body.blocks[0], i))


def yielded(block: Block, i: int) -> SSAValue:
    terminator = block.last_op
    assert terminator is not None
    return terminator.operands[i]
