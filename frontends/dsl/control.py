"""Structure of the concise kernel-building API: the kernel, its loops and branches as
`with` blocks, its roles as functions, and `emit`, which builds any op from Values.

    def body(x, y):                               # the kernel's arguments, as Values
        with loop(count) as k:                    # scf.for k = 0 .. count step 1
            with if_(k >= stages):                # scf.if (then only)
                emit(copy.BarrierWaitOp, empty, k % stages, parity)
    module = kernel("k", [gmem, gmem], body, target="sm_90a", block=128)

Each op goes where the innermost `with` puts it, through xDSL's implicit builder
(`frontends.locations.ImplicitBuilder`: located at the caller's line). A loop's bounds
that are Python ints become constants where the loop is, before it, in the order start,
step, stop (`scf.for`'s operands); a loop may carry values (`for_range(n, carry=[...])
as body`: `body.carried` in the iteration, `body.carry(...)` what it yields, `body.results`
the loop's)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FunctionType,
    IndexType,
    ModuleOp,
    UnitAttr,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region

from analysis.verify import verify_module
from copy_dialect import ops as copy
from frontends.dsl.values import Operand, Value, as_ssa, unwrap, values
from frontends.locations import ImplicitBuilder, helper_module

helper_module(__name__)  # an op made here is located at the line that called it


def emit(cls: Callable[..., Operation], *args: Any, **kwargs: Any) -> Operation:
    """`cls(*args, **kwargs)`, each Value among the arguments passed as its SSAValue, built
    where the innermost `with` builds (the op is returned: `.results`, `.result`)."""
    return cls(*unwrap(args), **{k: unwrap(v) for k, v in kwargs.items()})


def result(cls: Callable[..., Operation], *args: Any, **kwargs: Any) -> Value:
    """The one result of `emit(cls, *args, **kwargs)`, as a Value."""
    return Value(emit(cls, *args, **kwargs))


class Loop:
    """An `scf.for` under construction: `index` (the induction variable), `carried` (the
    values the iteration receives), `carry(...)` (what it yields) and, once the `with`
    block is closed, `results`."""

    def __init__(self, block: Block, op: scf.ForOp):
        self.index = Value(block.args[0])
        self.carried = values(block.args[1:])
        self._op = op
        self._yielded: list[Value] | None = None

    def carry(self, *new: Value) -> None:
        if len(new) != len(self.carried):
            raise ValueError(f"expected {len(self.carried)} carried values, got {len(new)}")
        self._yielded = list(new)

    @property
    def results(self) -> list[Value]:
        return values(self._op.results)


@contextlib.contextmanager
def for_range(
    stop: Operand, start: Operand = 0, step: Operand = 1, carry: Sequence[Value] = ()
) -> Iterator[Loop]:
    """`scf.for i = start .. stop step step` (index bounds) carrying `carry`, its body the
    `with` block; yields the `Loop`."""
    lb, st = as_ssa(start), as_ssa(step)
    ub = as_ssa(stop)
    body = Block(arg_types=[IndexType(), *(v.type for v in carry)])
    op = scf.ForOp(lb, ub, st, [v.ssa for v in carry], Region(body))
    state = Loop(body, op)
    with ImplicitBuilder(body):
        yield state
        if carry and state._yielded is None:
            raise ValueError("a loop that carries values must yield them: call carry(...)")
        scf.YieldOp(*(v.ssa for v in state._yielded or ()))


@contextlib.contextmanager
def loop(stop: Operand, start: Operand = 0, step: Operand = 1) -> Iterator[Value]:
    """`scf.for` with no carried values: yields the induction variable."""
    with for_range(stop, start, step) as state:
        yield state.index


@contextlib.contextmanager
def if_(condition: Value) -> Iterator[None]:
    """`scf.if condition` (no results, no else): its `then` block is the `with` block."""
    then = Block()
    scf.IfOp(condition.ssa, [], Region(then))
    with ImplicitBuilder(then):
        yield
        scf.YieldOp()


def warp_specialize(
    roles: Sequence[tuple[int, Callable[[Value], None]]], maxnreg: Sequence[int] | None = None
) -> copy.WarpSpecializeOp:
    """`copy.warp_specialize`: each role is (its warps, the function that fills its block,
    called with the role's thread id) in role order; `maxnreg`: each role's registers."""
    op = copy.WarpSpecializeOp([warps for warps, _ in roles], maxnreg)
    for r, (_, fill) in enumerate(roles):
        block = op.role_block(r)
        with ImplicitBuilder(block):
            fill(Value(block.args[0]))
    return op


def kernel(
    name: str,
    arg_types: Sequence[Attribute],
    body: Callable[..., None],
    *,
    target: str,
    block: int,
    cluster: Sequence[int] | None = None,
    verify: bool = True,
) -> ModuleOp:
    """The module of kernel `name` for `target`: `body(*args)` (the arguments as Values)
    fills its entry block, launched on `block` threads (and clusters of `cluster`);
    verified as every path verifies (`analysis.verify.verify_module`) unless `verify` is
    False."""
    fn = kernel_function(name, arg_types, body, block=block, cluster=cluster)
    return module([fn], target=target, verify=verify)


def kernel_function(
    name: str,
    arg_types: Sequence[Attribute],
    body: Callable[..., None],
    *,
    block: int,
    cluster: Sequence[int] | None = None,
    arg_attrs: Sequence[DictionaryAttr] | None = None,
) -> func.FuncOp:
    """Kernel `name` as `kernel` builds it, without its module: for a module of several
    kernels (`module`). `arg_attrs`: each argument's attributes (a chain's
    `copy.predecessor_access` marks)."""
    entry = Block(arg_types=arg_types)
    with ImplicitBuilder(entry):
        body(*values(entry.args))
        func.ReturnOp()
    fn = func.FuncOp(name, FunctionType.from_lists(arg_types, []), Region(entry))
    if arg_attrs is not None:
        fn.arg_attrs = ArrayAttr(arg_attrs)
    fn.attributes["gpu.kernel"] = UnitAttr()
    fn.attributes["gpu.known_block_size"] = DenseArrayBase.from_list(i32, [block, 1, 1])
    if cluster is not None:
        fn.attributes["copy.cluster"] = DenseArrayBase.from_list(i32, list(cluster))
    return fn


def module(functions: Sequence[func.FuncOp], *, target: str, verify: bool = True) -> ModuleOp:
    """The module of `functions` (kernels of `kernel_function`) for `target`, verified as
    `kernel` verifies unless `verify` is False."""
    built = ModuleOp(list(functions))
    built.attributes["copy.target"] = copy.TargetAttr(target)
    if verify:
        verify_module(built)
    return built


__all__ = [
    "Loop",
    "emit",
    "for_range",
    "if_",
    "kernel",
    "kernel_function",
    "loop",
    "module",
    "result",
    "warp_specialize",
]
