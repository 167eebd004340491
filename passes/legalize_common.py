"""What copy-legalize's rewrites share (passes/legalize.py and its `legalize_*` modules, and
the cluster folding of passes/legalize_cluster.py): which threads of a block (or of a role)
reach an op and see the same values, asked before a copy's thread form goes to every thread
of the issuing group and before a folded cluster's role meets at its barrier; the threads'
row-major walk of a box; a role's barrier; index constants; the ops a rewrite builds
(`appender`)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from copy_dialect import ops as copy
from copy_dialect.upstream_gpu import UNIFORM_GPU

THREAD_VALUES = ("gpu.thread_id", "gpu.lane_id")
"""Ops whose value differs between the threads of a block."""


def thread_condition(op: Operation, top: Block) -> Operation | None:
    """The innermost scf op around `op` (below `top`) whose condition or bounds may differ
    between threads: only some threads reach `op` then."""
    memo: dict[SSAValue, bool] = {}
    while (parent := op.parent_op()) is not None and op.parent_block() is not top:
        if isinstance(parent, scf.IfOp):
            varying = varies(parent.cond, memo)
        elif isinstance(parent, scf.ForOp):
            varying = any(varies(v, memo) for v in (parent.lb, parent.ub, parent.step))
        else:
            varying = not isinstance(parent, copy.WarpSpecializeOp | func.FuncOp)
        if varying:
            return parent
        op = parent
    return None


def varies(value: SSAValue, memo: dict[SSAValue, bool]) -> bool:
    """Whether `value` may differ between the threads of a block (or of a role): computed
    from a thread id, a role's thread index, a loop-carried value or a load (but a load of
    the same element of an array the kernel only reads, such as a table of groups)."""
    if value in memo:
        return memo[value]
    memo[value] = True  # a cycle (none in SSA) or a deep chain stays varying
    owner = value.owner
    if isinstance(owner, Block):
        parent = owner.parent_op()
        if isinstance(parent, func.FuncOp):
            found = False
        elif isinstance(parent, scf.ForOp) and value is owner.args[0]:
            found = varies(parent.lb, memo) or varies(parent.step, memo)
        else:
            found = True  # a role's thread index, a loop-carried value
    elif owner.name in THREAD_VALUES:
        found = True
    elif owner.name in UNIFORM_GPU:
        found = False
    elif owner.name.startswith("arith.") and not owner.regions:
        found = any(varies(v, memo) for v in owner.operands)
    elif isinstance(owner, memref.LoadOp) and read_only_argument(owner.memref):
        found = any(varies(v, memo) for v in owner.indices)
    else:
        found = True  # a load, a call: not known to be the same for every thread
    memo[value] = found
    return found


def kernel_argument(ref: SSAValue) -> bool:
    """Whether `ref` is an argument of the kernel (its `func.func`'s entry block)."""
    return isinstance(ref, BlockArgument) and isinstance(ref.block.parent_op(), func.FuncOp)


def read_only_argument(ref: SSAValue) -> bool:
    """Whether `ref` is a kernel argument that the kernel only reads with `memref.load` (or
    asks the size of): every thread that loads one of its elements gets the same value."""
    return kernel_argument(ref) and all(
        isinstance(use.operation, memref.LoadOp | memref.DimOp) for use in ref.uses
    )


def box_coords(
    item: SSAValue,
    box: list[int],
    width: int,
    put: Callable[[Operation], SSAValue],
    constant: Callable[[int], SSAValue],
) -> list[SSAValue]:
    """The coordinates in `box` of item `item` of its row-major walk, innermost fastest, an
    item being `width` elements of a row (consecutive threads on consecutive items: a
    coalesced walk): `put` emits the ops that depend on the item, `constant` makes an index
    constant (before the walk, or in it)."""
    rest = item
    coords: list[SSAValue] = []
    for n, size in enumerate(reversed(box)):
        size = size // width if n == 0 else size
        if n == len(box) - 1:
            coords.append(rest)
            break
        c = constant(size)
        coords.append(put(arith.RemUIOp(rest, c)))
        rest = put(arith.DivUIOp(rest, c))
    coords.reverse()
    if width > 1:
        coords[-1] = put(arith.MuliOp(coords[-1], constant(width)))
    return coords


def appender(ops: list[Operation]) -> Callable[[Operation], SSAValue]:
    """A builder's `emit`: appends an op to `ops` and returns its result."""

    def emit(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    return emit


def index_constant(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


def role_barrier() -> copy.WaitGroupOp:
    """The barrier of the role that holds it: `copy.wait_group cp_async 0`, which lowers to
    the role's named barrier (`bar.sync r + 1`) and, with no cp.async group of the role
    pending, only synchronizes."""
    return copy.WaitGroupOp("cp_async", 0)
