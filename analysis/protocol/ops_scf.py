"""How an agent follows structured control flow: `scf.if` by its condition (or, when it is a
block-uniform unknown, by the branch the driver chose), `scf.for` iteration by iteration
(its trip count chosen when unknown, the state at each iteration's head kept for the
steady-state check), `scf.while` while its condition is known (P10 where it cannot follow);
and how an agent asks the driver to choose an unknown (`choose`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import scf
from xdsl.ir import Operation, SSAValue

from analysis.protocol.facts import LoopCount
from analysis.protocol.findings import warning
from analysis.protocol.steps import Choose, Heads, Steps, Stop
from analysis.protocol.values import UNIFORM, VARYING, Value
from analysis.protocol.walk import Agent
from copy_dialect.verify_common import constant_int

MAX_ITERATIONS = 4096
"""Iterations of one loop the analysis follows; a longer loop is reported, not proven."""


def choose(
    agent: Agent, v: SSAValue, options: Sequence[int], loop: scf.ForOp | None = None
) -> None:
    """Ask the driver to bind `v`, or the loop bound it is computed from (so that a
    prologue's `k < count` and the loop agree on `count`); `loop`: the loop whose bound
    `v` is, when this agent is at it. Options that break a `copy.assume` fact about the
    value are not tried (`assumptions`)."""
    canon = agent.kernel.canon
    bound = loop_bound_of(agent, v)
    if bound is not None:
        at = loop if bound is v else None  # (a count this loop's bound is computed from)
        raise Choose(canon.get(bound, bound), trip_options(agent, bound, at))
    rep = canon.get(v, v)
    raise Choose(rep, agent.kernel.assumptions.options(rep, options))


def loop_bound_of(agent: Agent, v: SSAValue) -> SSAValue | None:
    """The unbound loop bound `v` is computed from (with arith ops) that no other unbound
    loop bound computes: a pingpong consumer's count of tiles, (count + 1) / 2, gives the
    producer's `count`, which the driver binds for both (were `%mine` bound on its own, a
    consumer that reaches its loop first would take a count of tiles no `count` gives)."""
    found = None
    stack, seen = [v], set()
    while stack:
        cur = stack.pop()
        if cur in seen or cur in agent.bindings:
            continue
        seen.add(cur)
        if cur is not v and isinstance(agent.value(cur), int):
            continue  # known (a constant)
        if cur in agent.kernel.loop_bounds:
            found = cur
            stack.clear()  # the bounds it is computed from come first
        owner = cur.owner
        if isinstance(owner, Operation) and owner.name.startswith("arith."):
            stack.extend(owner.operands)
    return found


def trip_options(agent: Agent, bound: SSAValue, at: scf.ForOp | None = None) -> list[int]:
    """The bounds tried: 0 to `trip_counts` iterations of the loop `at` (this agent's), or
    else of a loop bounded by `bound` (or a value equal to it) whose start and step are
    constants (another role's loop: its values are not this agent's); those the facts
    about `bound` allow (`assumptions.Assumptions.trips`)."""
    canon = agent.kernel.canon
    rep = canon.get(bound, bound)
    loops = [] if at is None else [at]
    loops += [
        op
        for alias in (rep, *agent.kernel.aliases.get(rep, ()))
        for op in (u.operation for u in alias.uses)
        if isinstance(op, scf.ForOp) and op.ub == alias
    ]
    trips = max((agent.kernel.trips_of(loop) for loop in loops), default=0)
    for loop in loops:
        if loop is at:
            lb, step = agent.value(loop.lb), agent.value(loop.step)
        else:
            lb, step = constant_int(loop.lb), constant_int(loop.step)
        if isinstance(lb, int) and isinstance(step, int) and step > 0:
            return agent.kernel.assumptions.trips(rep, lb, step, trips)
    return agent.kernel.assumptions.trips(rep, 0, 1, 0)


def if_op(agent: Agent, op: scf.IfOp, mask: int | None) -> Steps:
    cond = agent.uniform_int(op.cond)
    if cond is UNIFORM and op in agent.kernel.protocol_ops:
        choose(agent, op.cond, (1, 0))
    if op in agent.kernel.protocol_ops:
        agent.walk.events.append((op, cond))
    then_mask, else_mask = agent.mask_of(cond, mask)
    if cond is UNIFORM:
        then_mask = else_mask = mask
    results: list[list[Value]] = []
    for region, m in ((op.true_region, then_mask), (op.false_region, else_mask)):
        if region.blocks and m != 0:
            results.append((yield from agent.block(region.blocks[0], m)))
    for i, r in enumerate(op.results):
        values = {res[i] for res in results if i < len(res)}
        agent.env[r] = values.pop() if len(values) == 1 else VARYING


def for_op(agent: Agent, op: scf.ForOp, mask: int | None) -> Steps:
    body = op.body.blocks[0]
    lb, ub, step = (agent.uniform_int(v) for v in (op.lb, op.ub, op.step))
    if op not in agent.kernel.protocol_ops:
        # No copy op inside: one pass with unknown induction values stands for all.
        varying = any(isinstance(v, tuple) or v is VARYING for v in (lb, ub, step))
        for arg in body.args:
            agent.env[arg] = VARYING if varying else UNIFORM
        yield from agent.block(body, None if varying else mask)
        for r in op.results:
            agent.env[r] = VARYING
        return
    strided = agent.kernel.counts.get(op)
    known = all(isinstance(v, int) for v in (lb, ub, step))
    if strided is not None and not known and all(isinstance(v, int) or v is UNIFORM
                                                 for v in (lb, ub, step)):  # fmt: skip
        # (bounds this run knows, a load_tail from the tile loop's count to 4 more, give
        # their iterations; only a start or step it does not know makes a count to choose)
        return (yield from strided_for(agent, op, mask, strided))
    if ub is UNIFORM:
        choose(agent, op.ub, (), op)
    if not all(isinstance(v, int) for v in (lb, ub, step)) or step <= 0:  # type: ignore[operator]
        # rule: P10
        agent.report(
            warning(
                op,
                "cannot prove the copies in this loop: its bounds are not known for every thread",
                "give the loop block-uniform bounds (constants, block ids, kernel "
                "arguments) and a constant step",
            )
        )
        raise Stop
    assert isinstance(lb, int)
    assert isinstance(ub, int)
    assert isinstance(step, int)
    count = max(0, -(-(ub - lb) // step))
    if count > MAX_ITERATIONS:
        # rule: P10
        agent.report(
            warning(
                op,
                f"cannot prove the copies in this loop: its {count} iterations are more "
                f"than the {MAX_ITERATIONS} the analysis follows",
                "split the loop, or check the kernel at run time with --debug-guards",
            )
        )
        raise Stop
    chosen = op.ub in agent.bindings and (
        count >= agent.kernel.trips_of(op) or op.ub in agent.walk.watched
    )
    yield from iterate(agent, op, mask, count, lambda i: lb + i * step, chosen)


def strided_for(agent: Agent, op: scf.ForOp, mask: int | None, key: LoopCount) -> Steps:
    """A loop whose start or step is block-uniform but not known (`for tile = block_id to
    n step grid_dim`): its trip count is chosen (0 .. `trip_counts`, the same for every loop
    with the same bounds), its induction values are block-uniform unknowns."""
    count = agent.bindings.get(key)
    if count is None:
        raise Choose(key, list(range(agent.kernel.trips_of(op) + 1)))
    chosen = count >= agent.kernel.trips_of(op) or key in agent.walk.watched
    yield from iterate(agent, op, mask, count, lambda _: UNIFORM, chosen)


def iterate(
    agent: Agent,
    op: scf.ForOp,
    mask: int | None,
    count: int,
    induction: Callable[[int], Value],
    chosen: bool,
) -> Steps:
    """`count` iterations of the loop's body, the i-th with the induction value
    `induction(i)`; `chosen`: this is the run with the most iterations of a loop whose trip
    count was chosen, whose heads the steady-state check compares."""
    body = op.body.blocks[0]
    carried = [agent.value(v) for v in op.iter_args]
    frame = Frame(agent, op, chosen)
    for i in range(count):
        frame.head(i, carried)
        agent.env[body.args[0]] = induction(i)
        for arg, v in zip(body.args[1:], carried, strict=True):
            agent.env[arg] = v
        carried = yield from agent.block(body, mask)
    frame.close()
    for r, v in zip(op.results, carried, strict=True):
        agent.env[r] = v


class Frame:
    """A loop an agent is in: its iteration and the values it carries that are not
    counters (`periods.LoopShape.state`), kept on the agent for the state the steady-state
    check compares; with `chosen` (the run with the most iterations of a loop whose trip
    count was chosen, CTA 0's), the state at the head of each iteration (`Walk.snapshot`)
    and where its events start."""

    def __init__(self, agent: Agent, op: Operation, chosen: bool):
        self.agent = agent
        self.op = op
        self.state = agent.kernel.loops[op].state
        walk = agent.walk
        self.heads: Heads | None = None
        self.snapshots = chosen and not agent.rank
        """Whether the heads keep their states (CTA 0's); the other CTAs' keep their times
        (`Walk.peer_heads`)."""
        if chosen:
            self.heads = Heads()
            kept = walk.peer_heads if agent.rank else walk.heads
            kept.setdefault(op, []).append(self.heads)
        self.index = len(agent.frames)
        agent.frames.append((op, 0))  # type: ignore[arg-type]
        agent.carried.append(())

    def head(self, i: int, carried: list[Value]) -> None:
        agent = self.agent
        agent.frames[self.index] = (self.op, i)  # type: ignore[assignment]
        agent.carried[self.index] = tuple(carried[k] for k in self.state)
        if self.heads is not None:
            walk = agent.walk
            if self.snapshots:
                self.heads.states.append(walk.snapshot(agent, i))
                self.heads.marks.append(len(walk.events))
                self.heads.beside.append(walk.beside(agent, self.index))
            walk.ticks += 1
            self.heads.times.append(walk.ticks)

    def close(self) -> None:
        self.agent.frames.pop()
        self.agent.carried.pop()
        if self.heads is not None:
            walk = self.agent.walk
            self.heads.end = len(walk.events)
            walk.ticks += 1
            self.heads.closed = walk.ticks


def while_op(agent: Agent, op: scf.WhileOp, mask: int | None) -> Steps | None:
    """An `scf.while` that holds copy ops is followed (`follow_while`); another only gives
    values."""
    if op not in agent.kernel.protocol_ops:
        return None
    return follow_while(agent, op, mask)


def follow_while(agent: Agent, op: scf.WhileOp, mask: int | None) -> Steps:
    """`scf.while` holding copy ops, iteration by iteration while its condition is known
    (a spin loop on copy.barrier_test ends once the test holds)."""
    before, after = op.before_region.blocks[0], op.after_region.blocks[0]
    carried = [agent.value(v) for v in op.arguments]
    for _ in range(MAX_ITERATIONS):
        for arg, v in zip(before.args, carried, strict=True):
            agent.env[arg] = v
        got = yield from agent.block(before, mask)
        cond = got[0] if got else VARYING
        if isinstance(cond, tuple) and len(set(cond)) == 1:
            cond = cond[0]
        if cond is UNIFORM and op in agent.kernel.counts:
            yield from counted_while(agent, op, mask, carried, got)
            return
        if not isinstance(cond, int):
            # rule: P10
            agent.report(
                warning(
                    op,
                    "cannot prove the copies of this scf.while: its condition is not known "
                    "(only a condition computed from constants, induction values and "
                    "copy.barrier_test is followed)",
                    "write the loop as scf.for with block-uniform bounds, or spin on "
                    "copy.barrier_test (or use copy.barrier_wait), or check the kernel at run "
                    "time with --debug-guards",
                )
            )
            raise Stop
        if not cond:
            for r, v in zip(op.results, got[1:], strict=True):
                agent.env[r] = v
            return
        for arg, v in zip(after.args, got[1:], strict=True):
            agent.env[arg] = v
        carried = yield from agent.block(after, mask)
    # rule: P10
    agent.report(
        warning(
            op,
            f"cannot prove the copies of this scf.while: it runs more than the "
            f"{MAX_ITERATIONS} iterations the analysis follows",
            "bound the loop, or check the kernel at run time with --debug-guards",
        )
    )
    raise Stop


def counted_while(
    agent: Agent, op: scf.WhileOp, mask: int | None, carried: list[Value], got: list[Value]
) -> Steps:
    """An `scf.while` whose condition is block-uniform but not known (a tile loop over a
    work counter, `while tile < tiles`): the number of iterations is chosen as a grid-stride
    loop's trip count (the same for every loop computed alike), the condition taken as
    holding that many times. `got`: what the before region gave in the first test."""
    key = agent.kernel.counts[op]
    count = agent.bindings.get(key)
    if count is None:
        raise Choose(key, list(range(agent.kernel.trips_of(op) + 1)))
    before, after = op.before_region.blocks[0], op.after_region.blocks[0]
    frame = Frame(agent, op, count >= agent.kernel.trips_of(op) or key in agent.walk.watched)
    for i in range(count):
        frame.head(i, carried)
        if i > 0:
            for arg, v in zip(before.args, carried, strict=True):
                agent.env[arg] = v
            got = yield from agent.block(before, mask)
        for arg, v in zip(after.args, got[1:], strict=True):
            agent.env[arg] = v
        carried = yield from agent.block(after, mask)
    frame.close()
    if count > 0:
        for arg, v in zip(before.args, carried, strict=True):
            agent.env[arg] = v
        got = yield from agent.block(before, mask)
    for r, v in zip(op.results, got[1:], strict=True):
        agent.env[r] = v
