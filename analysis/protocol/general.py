"""Long loops of a constant trip count, proven for every count (`general_kernel`).

A loop whose trip count is a constant N is walked iteration by iteration, so a GEMM's
K loop over 256 k-blocks costs 256 iterations of every role, where a K loop to a kernel
argument costs the few counts the driver tries and the lap that stands for every longer
one (`choices.Deferred`). A proof for every count is a proof for N: the kernel whose bound
N is replaced, in every use, by an argument `n` (stated `copy.assume %n ge lb + 1`, at least
one iteration) is the kernel itself where `n` = N, so when that kernel is proven with no
finding at all, so is this one. Otherwise (a finding for some count: another use of the
constant, a prologue that assumes more iterations) the kernel is walked as written, and its
findings are its own: the general kernel never adds one.

The general kernel's runs may cost about what the walk of the kernel as written would
(`Budget`: the longest run's events, times N over its count), and it is given up at its
first error (a count that breaks a rule, N or another): the kernel is then walked as written,
so one whose general form cannot be proven costs at most about twice its walk.

A K loop inside a persistent tile loop is chosen under each tile count; its laps are cut in
every tile's walk at once (`cuts.cut`), so that the longest count the driver
tries stands for N. The general kernel then states what N is of its rings (`tile_facts`):
at least the widest, and a multiple of what it shares with twice each, so that every tile
starts in the same ring slot and phase.
"""

from __future__ import annotations

from math import gcd, lcm

from xdsl.dialects import arith, builtin, func, scf
from xdsl.dialects.builtin import FunctionType, IndexType
from xdsl.ir import Operation, SSAValue

from analysis.protocol.depths import MAX_TRIP_COUNTS
from copy_dialect import ops as copy
from copy_dialect.verification import ops_of
from copy_dialect.verify_common import constant_int, enclosing_target

LONG = 2 * MAX_TRIP_COUNTS
"""Iterations beyond which a constant loop is first tried as a count to choose: the
longest walk the driver gives a chosen count, which costs about as much as the N iterations
of a loop up to it."""


def long_loops(fn: func.FuncOp, holders: frozenset[Operation]) -> tuple[int, list[scf.ForOp]]:
    """The constant bound of the loop of most iterations beyond `LONG` among the loops with
    copy ops that no such loop holds, and the loops to that bound (none: (0, []))."""
    loops: dict[int, list[scf.ForOp]] = {}
    most: dict[int, int] = {}
    for op in holders:
        if not isinstance(op, scf.ForOp):
            continue
        lb, ub, step = (constant_int(v) for v in (op.lb, op.ub, op.step))
        if lb is None or ub is None or step is None or step <= 0:
            continue
        count = -(-(ub - lb) // step)
        if count > LONG:
            loops.setdefault(ub, []).append(op)
            most[ub] = max(most.get(ub, 0), count)
    if not loops:
        return 0, []
    bound = max(most, key=lambda ub: (most[ub], ub))
    return bound, loops[bound]


def nested(op: Operation, fn: Operation, holders: frozenset[Operation]) -> bool:
    """Whether a loop with copy ops holds `op`."""
    parent = op.parent_op()
    while parent is not None and parent is not fn:
        if isinstance(parent, scf.ForOp | scf.WhileOp) and parent in holders:
            return True
        parent = parent.parent_op()
    return False


def general_kernel(
    fn: func.FuncOp, holders: frozenset[Operation]
) -> tuple[func.FuncOp, SSAValue, int] | None:
    """A copy of `fn` in a module of its own (with its target), whose constant bound N of
    the loops of `long_loops` is a new last argument `%n` of at least one iteration in every
    use; `%n` and N (None: no such loop). `fn` and its module are left as they are."""
    bound, loops = long_loops(fn, holders)
    if not loops:
        return None
    values: set[SSAValue] = {loop.ub for loop in loops}
    low = max(constant_int(loop.lb) or 0 for loop in loops) + 1
    mapper: dict[SSAValue, SSAValue] = {}
    clone = fn.clone(mapper)
    target = enclosing_target(fn)
    if target is not None:
        clone.attributes["copy.target"] = copy.TargetAttr(target.name)
    entry = clone.body.blocks[0]
    n = entry.insert_arg(IndexType(), len(entry.args))
    n.name_hint = "n"
    inputs = [*fn.function_type.inputs.data, IndexType()]
    clone.function_type = FunctionType.from_lists(inputs, fn.function_type.outputs.data)
    if clone.arg_attrs is not None:
        clone.arg_attrs = builtin.ArrayAttr([*clone.arg_attrs.data, builtin.DictionaryAttr({})])
    for v in values:
        mapper[v].replace_all_uses_with(n)
    lower, divisor = low, None
    if any(nested(loop, fn, holders) for loop in loops):
        lower, divisor = tile_facts(fn, bound, low)
    fact = copy.AssumeOp(n, lower=lower, divisor=divisor)
    entry.insert_op_before(fact, entry.first_op)  # type: ignore[arg-type]
    following(clone, n, bound, fact)
    builtin.ModuleOp([clone])  # (the clone's parent: what looks up enclosing ops finds one)
    return clone, n, bound


def following(clone: func.FuncOp, n: SSAValue, bound: int, after: Operation) -> None:
    """A loop from N to another constant c (a load_tail from `%k_tiles` to `%k_end`, 4
    more, written as a constant of its own) runs from `n` to n + (c - N): the same loop where
    `n` = N, and the same count, c - N, for every n."""
    for op in [op for op in clone.walk() if isinstance(op, scf.ForOp) and op.lb is n]:
        end = constant_int(op.ub)
        if end is None:
            continue
        offset = arith.ConstantOp.from_int_and_width(end - bound, IndexType())
        shifted = arith.AddiOp(n, offset)
        clone.body.blocks[0].insert_ops_after([offset, shifted], after)
        op.operands[1] = shifted.result


def tile_facts(fn: func.FuncOp, bound: int, low: int) -> tuple[int, int | None]:
    """For a long loop inside a loop with copy ops (a K loop in a persistent tile loop):
    the least count and the divisor the general kernel states of `n`, both true of N (the
    constant `bound`): at least the widest ring (a tile then advances every ring by a lap or
    more, so the tile loop's state reaches one tile back, `depths.advance`) and a multiple
    of what N shares with twice each ring (each tile then starts in the same slot and phase
    of the rings, so the tile loop repeats every tile, and the counts tried are those
    multiples, which the cuts of the K loop's laps reach from the longest,
    `cuts.cut`). `low`: the least count of one iteration."""
    rings = [op.result.type.count.data for op in ops_of(fn) if isinstance(op, copy.BarrierInitOp)
             and isinstance(op.result.type, copy.BarrierType)]  # fmt: skip
    lower = max(low, min(bound, max(rings, default=1)))
    divisor = gcd(bound, lcm(*(2 * r for r in rings)))
    return lower, divisor if divisor > 1 else None


class Unproven(Exception):
    """A run of the general kernel found an error, or its runs went past their `Budget`:
    the kernel is walked as written."""


class Budget:
    """What the runs of the general kernel may cost, in events (`run.Walk.events`): about
    what the kernel as written costs, the events of the first run that chose `n` (the
    longest count the driver tries) times N over that count."""

    def __init__(self, n: SSAValue, count: int):
        self.n = n
        self.count = count
        self.spent = 0
        self.limit: float | None = None

    def charge(self, events: int, bindings: dict[SSAValue, int], erred: bool) -> None:
        """A run of `events` under `bindings` ended (`erred`: with an error)."""
        if erred:
            raise Unproven
        self.spent += events
        chosen = bindings.get(self.n)
        if self.limit is None and chosen:
            self.limit = events * self.count / chosen
        if self.limit is not None and self.spent > self.limit:
            raise Unproven
