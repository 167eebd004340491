"""One program counter of a run of the protocol analysis: the block (outside roles) or one
role of a `copy.warp_specialize`, walking its ops in program order, `scf.if` by its
condition, `scf.for` iteration by iteration, `scf.while` while its condition is known, every
value the protocol depends on computed (`values`), the shared state (`state`) updated and
checked op by op.

An agent's walk is a generator: it yields where it blocks (a `barrier_wait` on a phase that
has not completed, a `named_barrier_sync` whose generation has not, the join of the roles)
and where another agent may now go on; the run (`run`) schedules the agents.

A run has `bindings`: values the analysis chose for block-uniform unknowns (a loop's trip
count, a branch condition, a barrier_test's result). When an agent meets an unbound one that
decides what the protocol does, it raises `Choose`, and the driver (`analysis`) runs the
kernel again for each option.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, SSAValue

from analysis.protocol.clocks import join, meet
from analysis.protocol.facts import CopyFacts, segments
from analysis.protocol.findings import Related, error, warning
from analysis.protocol.state import Classes, Groups, Region, Waiter, describe_key
from analysis.protocol.values import UNIFORM, VARYING, Unknown, Value, plan
from copy_dialect import ops as copy
from copy_dialect.memory import SMEM, memory_space
from copy_dialect.verify_common import constant_int

if TYPE_CHECKING:
    from analysis.protocol.run import Walk

MAX_ITERATIONS = 4096
"""Iterations of one loop the analysis follows; a longer loop is reported, not proven."""

THREAD_READS = {"memref.load": 0, "vector.load": 0, "vector.transfer_read": 0}
THREAD_WRITES = {"memref.store": 1, "vector.store": 1, "vector.transfer_write": 1}
"""Ops by which threads access memory, and the operand that is the memref."""

WARP = 32
FIRST_WARP = (1 << WARP) - 1
"""The lanes of a role's first warp, in the role's thread mask (its elected thread is one)."""

ALL = -1
"""The mask of every thread of the block; other masks are bit sets of thread ids (of the
block, or of the role: its thread index %t), None an unknown subset (a thread-dependent
condition the analysis cannot evaluate)."""


class Choose(Exception):
    """The run needs a value for `value`: the driver runs again for each of `options`."""

    def __init__(self, value: SSAValue, options: Sequence[int]):
        super().__init__()
        self.value = value
        self.options = options


class Stop(Exception):
    """The run ends here: the analysis cannot follow the kernel further (reported)."""


@dataclass
class Blocked:
    """Where an agent waits: it may go on once `ready()`; `stuck(others)` reports the hang
    when every agent waits (`others`: notes on where the others wait). `infeasible`: the
    wait stands for a barrier_test chosen true, and a test that never sees its phase only
    returns false (the run is not one the kernel can take)."""

    op: Operation
    ready: Callable[[], bool]
    stuck: Callable[[list[Related]], None] | None
    infeasible: bool = False
    what: str = ""
    """What it waits for, for the others' hang report."""


Steps = Generator[Blocked | None, None, Any]



@dataclass(frozen=True)
class IssueWords:
    """How a fix note says an op of each issuer counts (`Agent.issued`)."""

    elected: str
    unknown: str
    """What the op does for the threads that reach it, before "every thread ..." (P6)."""
    unknown_fix: str
    warps: str
    """With `{}` for the number of warps."""
    threads_text: str
    """With `{}` for the number of threads."""
    threads_only_in_roles: bool
    """Whether the threads' wording is given only inside a role (else always)."""

    def threads(self, threads: int, in_role: bool) -> str | None:
        if self.threads_only_in_roles and not in_role:
            return None
        return self.threads_text.format(threads)


ARRIVAL = IssueWords(
    elected="issuer elected makes one arrival per execution",
    unknown="this arrival is made by",
    unknown_fix="give the kernel gpu.known_block_size, and put the arrival under scf.if on "
    "the thread id when one thread should arrive",
    warps="issuer warps makes one arrival per warp that reaches it, {} here; issuer elected "
    "makes one per execution",
    threads_text="issuer threads makes one arrival per thread, {} here; issuer warps makes one "
    "per warp, issuer elected one per execution",
    threads_only_in_roles=True,
)
"""copy.barrier_arrive's wording."""

ACTION = IssueWords(
    elected="issuer elected acts once per execution",
    unknown="this op acts for",
    unknown_fix="give the kernel gpu.known_block_size, and put the op under scf.if on the "
    "thread id when one thread should act (or use issuer elected)",
    warps="issuer warps acts once per warp that reaches it, {} here",
    threads_text="issuer threads acts once per thread, {} here; issuer elected once",
    threads_only_in_roles=False,
)
"""The wording of the other ops that take an issuer (arrive_drop, complete_tx)."""

TRACKED = IssueWords(
    elected="",
    unknown="a cp.async copy on a barrier arrives once for",
    unknown_fix="give the kernel gpu.known_block_size (each thread that issues the copy "
    "arrives once)",
    warps="",
    threads_text="a cp.async copy on a barrier makes one arrival per issuing thread, {} here",
    threads_only_in_roles=False,
)
"""An mbarrier-tracked cp.async copy's wording (`copy.async_copy ... impl cp_async` with a
barrier: one arrival per issuing thread)."""

class Agent:
    def __init__(
        self,
        walk: Walk,
        name: str,
        role: int | None,
        threads: int | None,
        offset: int,
        parent: Agent | None,
        classes: tuple[int, int],
    ):
        self.walk = walk
        self.kernel = walk.kernel
        self.bindings = walk.bindings
        self.state = walk.state
        self.report = walk.report
        self.name = name
        self.role = role
        """Its index in copy.warp_specialize; None for the block."""
        self.n = threads
        self.full = ALL if threads is None else (1 << threads) - 1
        self.offset = offset
        """Its first thread in the block (per-thread values of the block are sliced)."""
        self.parent = parent
        self.c0, self.c1 = classes
        """Its thread classes: thread 0 and the others (the block); the first warp and the
        other warps (a role; one class for a role of one warp)."""
        self.classes = (self.c0,) if self.c0 == self.c1 else (self.c0, self.c1)
        names = self.state.class_names
        if role is None:
            names[self.c0], names[self.c1] = "thread 0 of the block", "the block's other threads"
        elif self.c0 == self.c1:
            names[self.c0] = name
        else:
            names[self.c0] = f"the first warp of {name}"
            names[self.c1] = f"the other warps of {name}"
        self.env: dict[SSAValue, Value] = {}
        self.groups = Groups(name)
        self.state.group_sets.append(self.groups)
        self.frames: list[tuple[scf.ForOp, int]] = []
        self.at: Operation | None = None
        self.done = False
        self.blocked: Blocked | None = None
        self.steps: Steps | None = None

    # ---- values --------------------------------------------------------------------------

    def value(self, v: SSAValue) -> Value:
        got = self.bindings.get(v)
        if got is not None:
            return got
        got = self.env.get(v)
        if got is not None:
            return got
        if self.parent is not None:
            got = self.parent.value(v)
            if isinstance(got, tuple) and self.n is not None:
                got = got[self.offset : self.offset + self.n]
                self.env[v] = got
            return got
        return VARYING

    def uniform_int(self, v: SSAValue) -> int | Unknown | tuple[int, ...]:
        """The value, folded to one int when every thread has the same."""
        got = self.value(v)
        if isinstance(got, tuple) and len(set(got)) == 1:
            return got[0]
        return got

    def thread_ids(self, dim: str) -> Value:
        if self.role is not None:
            assert self.n is not None
            return tuple(self.offset + t for t in range(self.n)) if dim == "x" else 0
        block = self.kernel.block
        if block is None:
            return VARYING
        x, y, z = block
        n = x * y * z
        if dim == "x":
            return tuple(t % x for t in range(n))
        if dim == "y":
            return tuple((t // x) % y for t in range(n))
        return tuple(t // (x * y) for t in range(n))

    def mask_of(self, cond: Value, mask: int | None) -> tuple[int | None, int | None]:
        """The threads of `mask` for which `cond` holds, and those for which it does not."""
        if isinstance(cond, int):
            return (mask, 0) if cond else (0, mask)
        if isinstance(cond, tuple) and mask is not None:
            bits = sum(1 << t for t, c in enumerate(cond) if c)
            full = self.full if mask == ALL else mask
            return full & bits, full & ~bits
        return None, None

    def threads_in(self, mask: int) -> int:
        return bin(self.full if mask == ALL else mask).count("1")

    # ---- who issues what -----------------------------------------------------------------

    def members(self, mask: int | None) -> tuple[int, ...]:
        """The classes that may have threads in `mask`: who must know what they touch."""
        if mask == ALL or mask is None or mask == self.full:
            return self.classes
        if self.role is None:
            return tuple(self.classes[c] for c in Classes(mask).members)
        return tuple(
            c for c, bits in ((self.c0, FIRST_WARP), (self.c1, self.full & ~FIRST_WARP))
            if mask & bits
        ) if len(self.classes) == 2 else self.classes  # fmt: skip

    def observers(self, mask: int | None) -> tuple[int, ...]:
        """The classes all of whose threads are in `mask`: who learns what they observe. (The
        block keeps the analysis' first model: a class observes when any thread of it does.)"""
        if self.role is None:
            return self.members(mask)
        if mask is None:
            return ()
        found = []
        if mask & FIRST_WARP == FIRST_WARP:
            found.append(self.c0)
        rest = self.full & ~FIRST_WARP
        if len(self.classes) == 2 and mask & rest == rest:
            found.append(self.c1)
        return tuple(found)

    def elected(self, op: Operation, mask: int | None) -> bool:
        """Ops the elected thread issues: reached by it? (P10) Outside roles the elected
        thread is thread 0; in a role it is a lane of the role's first warp that elect.sync
        picks, so the whole first warp must reach the op."""
        if self.role is not None:
            if mask is not None and mask & FIRST_WARP == FIRST_WARP:
                return True
            # rule: P10
            self.report(
                error(
                    op,
                    f"the elected thread of {self.name} (a lane of its first warp, which "
                    "elect.sync picks), which issues this op for the role, may not reach it: "
                    "the op sits under a condition that depends on the thread's index in the "
                    "role",
                    "move it out of the scf.if, or make the condition role-uniform (or "
                    "warp-uniform and true for the role's first warp, %t / 32 == 0)",
                )
            )
            return False
        if mask == ALL or (mask is not None and mask & 1):
            return True
        reach = "may not reach" if mask is None else "does not reach"
        # rule: P10
        self.report(
            error(
                op,
                f"thread 0, which issues this op for the block, {reach} it: the op sits "
                "under a condition that depends on the thread",
                "move it out of the scf.if, make the condition block-uniform, or one that "
                "holds for thread 0 (gpu.thread_id x == 0)",
            )
        )
        return False

    def whole_group(self, op: Operation, mask: int | None, why: str, role_why: str = "") -> None:
        """Ops every thread of the block (or of the role) must reach (P10)."""
        if mask == ALL or (mask is not None and mask == self.full):
            return
        if self.role is not None:
            assert self.role is not None
            why = role_why or why
            # rule: P10
            self.report(
                error(
                    op,
                    f"not every thread of {self.name} reaches this op, which {why}",
                    "move it out of the scf.if / scf.for whose condition depends on the "
                    "thread's index in the role, or make that condition role-uniform",
                )
            )
            raise Stop
        # rule: P10
        self.report(
            error(
                op,
                f"not every thread of the block reaches this op, which {why}",
                "move it out of the scf.if / scf.for whose condition depends on the thread, or "
                "make that condition block-uniform",
            )
        )
        raise Stop

    def role_barrier(self) -> str:
        assert self.role is not None
        return f"ends with {self.name}'s barrier (bar.sync {self.role + 1})"

    def whole_warps(self, op: Operation, mask: int | None) -> None:
        if mask == ALL or mask == self.full:
            return
        if mask is not None and all(
            (mask >> w) & 0xFFFFFFFF in (0, 0xFFFFFFFF) for w in range(0, 1024, 32)
        ):
            return
        # rule: P10
        self.report(
            error(
                op,
                "part of a warp reaches this op, a .sync.aligned op every thread of each "
                "warp must execute",
                "move it out of the scf.if, or make the condition warp-uniform (on the warp "
                "index, thread id / 32)",
            )
        )
        raise Stop

    def sync(self) -> None:
        """A block barrier (outside roles) or the role's barrier."""
        self.state.sync(self.classes)
        self.state.after_sync(self.role is None)

    # ---- the walk --------------------------------------------------------------------------

    def main(self) -> Steps:
        """The block's walk: the kernel's body."""
        yield from self.block(self.kernel.fn.body.blocks[0], ALL)

    def role_body(self, body: Block) -> Steps:
        assert self.n is not None
        self.env[body.args[0]] = tuple(range(self.n))
        yield from self.block(body, self.full)
        self.done = True
        self.state.live = [c for c in self.state.live if c not in self.classes]
        self.state.progress = True

    def block(self, block: Block, mask: int | None) -> Steps:
        state = self.state
        for op in block.ops:
            if type(op) in TERMINATORS:
                return [self.value(v) for v in op.operands]
            self.at = op
            steps = self.op(op, mask)
            if steps is not None:
                yield from steps
            if state.progress:
                state.progress = False
                if state.concurrent:
                    yield None
        return []

    def op(self, op: Operation, mask: int | None) -> Steps | None:
        if self.state.tmem_loads:
            self.state.use(op)
        if op.name.startswith("copy."):
            return self.copy_op(op, mask)
        kind = type(op)
        if kind in REGION_STEPS and (kind is not scf.WhileOp or op in self.kernel.protocol_ops):
            return REGION_STEPS[kind](self, op, mask)
        if kind is func.ReturnOp:
            self.state.exit(op, self.groups, self.classes)
        elif op.name in THREAD_READS or op.name in THREAD_WRITES:
            self.thread_access(op, mask)
        elif op.name == "gpu.barrier":
            self.whole_group(op, mask, "is a block barrier")
            self.sync()
        elif op.name == "gpu.thread_id":
            self.env[op.results[0]] = self.thread_ids(str(op.properties["dimension"].data))
        elif op.name == "gpu.lane_id":
            n = self.n
            self.env[op.results[0]] = VARYING if n is None else tuple(t % 32 for t in range(n))
        elif op.name == "gpu.block_dim" and self.kernel.block is not None:
            dim = "xyz".index(str(op.properties["dimension"].data))
            self.env[op.results[0]] = self.kernel.block[dim]
        else:
            self.generic(op)
        return None

    def generic(self, op: Operation) -> None:
        args = [self.value(v) for v in op.operands]
        plans = self.kernel.plans
        if op in plans:
            how = plans[op]
        else:
            how = plans[op] = plan(op) if op.name.startswith("arith.") else None
        result = None if how is None else how(args)
        if result is None:
            uniform = op.name.startswith("gpu.") or all(
                isinstance(a, int) or a is UNIFORM for a in args
            )
            result = UNIFORM if uniform and not op.regions else VARYING
        for r in op.results:
            self.env[r] = result

    def choose(self, v: SSAValue, options: Sequence[int], loop: scf.ForOp | None = None) -> None:
        """Ask the driver to bind `v`, or the loop bound it is computed from (so that a
        prologue's `k < count` and the loop agree on `count`); `loop`: the loop whose bound
        `v` is, when this agent is at it."""
        canon = self.kernel.canon
        bound = self.loop_bound_of(v)
        if bound is not None:
            raise Choose(canon.get(bound, bound), self.trip_options(bound, loop))
        raise Choose(canon.get(v, v), options)

    def loop_bound_of(self, v: SSAValue) -> SSAValue | None:
        stack, seen = [v], set()
        while stack:
            cur = stack.pop()
            if cur in self.kernel.loop_bounds and cur not in self.bindings:
                return cur
            if cur in seen or cur in self.bindings or not isinstance(cur.owner, Operation):
                continue
            seen.add(cur)
            if cur.owner.name.startswith("arith."):
                stack.extend(cur.owner.operands)
        return None

    def trip_options(self, bound: SSAValue, at: scf.ForOp | None = None) -> list[int]:
        """The bounds tried: 0 to `trip_counts` iterations of the loop `at` (this agent's), or
        else of a loop bounded by `bound` (or a value equal to it) whose start and step are
        constants (another role's loop: its values are not this agent's)."""
        canon = self.kernel.canon
        rep = canon.get(bound, bound)
        loops = [] if at is None else [at]
        loops += [
            op
            for alias in (rep, *self.kernel.aliases.get(rep, ()))
            for op in (u.operation for u in alias.uses)
            if isinstance(op, scf.ForOp) and op.ub == alias
        ]
        for loop in loops:
            if loop is at:
                lb, step = self.value(loop.lb), self.value(loop.step)
            else:
                lb, step = constant_int(loop.lb), constant_int(loop.step)
            if isinstance(lb, int) and isinstance(step, int) and step > 0:
                return [lb + n * step for n in range(self.kernel.trip_counts + 1)]
        return [0]

    def if_op(self, op: scf.IfOp, mask: int | None) -> Steps:
        cond = self.uniform_int(op.cond)
        if cond is UNIFORM and op in self.kernel.protocol_ops:
            self.choose(op.cond, (1, 0))
        if op in self.kernel.protocol_ops:
            self.walk.events.append((op, cond))
        then_mask, else_mask = self.mask_of(cond, mask)
        if cond is UNIFORM:
            then_mask = else_mask = mask
        results: list[list[Value]] = []
        for region, m in ((op.true_region, then_mask), (op.false_region, else_mask)):
            if region.blocks and m != 0:
                results.append((yield from self.block(region.blocks[0], m)))
        for i, r in enumerate(op.results):
            values = {res[i] for res in results if i < len(res)}
            self.env[r] = values.pop() if len(values) == 1 else VARYING

    def for_op(self, op: scf.ForOp, mask: int | None) -> Steps:
        body = op.body.blocks[0]
        lb, ub, step = (self.uniform_int(v) for v in (op.lb, op.ub, op.step))
        if op not in self.kernel.protocol_ops:
            # No copy op inside: one pass with unknown induction values stands for all.
            varying = any(isinstance(v, tuple) or v is VARYING for v in (lb, ub, step))
            for arg in body.args:
                self.env[arg] = VARYING if varying else UNIFORM
            yield from self.block(body, None if varying else mask)
            for r in op.results:
                self.env[r] = VARYING
            return
        if ub is UNIFORM:
            self.choose(op.ub, (), op)
        if not all(isinstance(v, int) for v in (lb, ub, step)) or step <= 0:  # type: ignore[operator]
            # rule: P10
            self.report(
                warning(
                    op,
                    "cannot prove the copies in this loop: its bounds are not known for "
                    "every thread",
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
            self.report(
                warning(
                    op,
                    f"cannot prove the copies in this loop: its {count} iterations are more "
                    f"than the {MAX_ITERATIONS} the analysis follows",
                    "split the loop, or check the kernel at run time with --debug-guards",
                )
            )
            raise Stop
        carried = [self.value(v) for v in op.iter_args]
        # Only the run with the most iterations is checked for a steady state (`steady`).
        chosen = op.ub in self.bindings and count >= self.kernel.trip_counts
        heads = self.walk.heads.setdefault(op, []) if chosen else None
        frame = len(self.frames)
        self.frames.append((op, 0))
        for i in range(count):
            self.frames[frame] = (op, i)
            if heads is not None:
                heads.append((self.walk.snapshot(self, i), len(self.walk.events)))
            self.env[body.args[0]] = lb + i * step
            for arg, v in zip(body.args[1:], carried, strict=True):
                self.env[arg] = v
            carried = yield from self.block(body, mask)
        self.frames.pop()
        for r, v in zip(op.results, carried, strict=True):
            self.env[r] = v

    def while_op(self, op: scf.WhileOp, mask: int | None) -> Steps:
        """`scf.while` holding copy ops, iteration by iteration while its condition is known
        (a spin loop on copy.barrier_test ends once the test holds)."""
        before, after = op.before_region.blocks[0], op.after_region.blocks[0]
        carried = [self.value(v) for v in op.arguments]
        for _ in range(MAX_ITERATIONS):
            for arg, v in zip(before.args, carried, strict=True):
                self.env[arg] = v
            got = yield from self.block(before, mask)
            cond = got[0] if got else VARYING
            if isinstance(cond, tuple) and len(set(cond)) == 1:
                cond = cond[0]
            if not isinstance(cond, int):
                # rule: P10
                self.report(
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
                    self.env[r] = v
                return
            for arg, v in zip(after.args, got[1:], strict=True):
                self.env[arg] = v
            carried = yield from self.block(after, mask)
        # rule: P10
        self.report(
            warning(
                op,
                f"cannot prove the copies of this scf.while: it runs more than the "
                f"{MAX_ITERATIONS} iterations the analysis follows",
                "bound the loop, or check the kernel at run time with --debug-guards",
            )
        )
        raise Stop

    def thread_access(self, op: Operation, mask: int | None) -> None:
        write = op.name in THREAD_WRITES
        ref = op.operands[THREAD_WRITES[op.name] if write else 0]
        if isinstance(ref.type, MemRefType) and memory_space(ref.type) == SMEM:
            indices = op.operands[(2 if write else 1) :]
            region = self.region(ref, indices)
            self.state.thread_access(op, region, write, self.members(mask), self.name)
        self.generic(op)

    def region(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> Region:
        index = []
        for v in indices:
            got = self.uniform_int(v)
            index.append(got if isinstance(got, int) else None)
        return Region(buffer, tuple(index))

    # ---- copy ops --------------------------------------------------------------------------

    def barrier_key(self, op: Operation, group: SSAValue, index: SSAValue | None) -> object:
        """The barrier an op names, or None (reported) when the analysis cannot tell."""
        found = self.state.groups.get(group)
        if found is None:
            return None
        init, size = found
        got = 0 if index is None else self.uniform_int(index)
        if isinstance(got, int):
            if 0 <= got < size:
                if not self.state.live_barrier(op, (group, got)):
                    raise Stop
                return (group, got)
            # rule: P9
            self.report(
                error(
                    op,
                    f"barrier index {got} is out of range: the group holds barriers 0 to "
                    f"{size - 1}",
                    f"compute the index modulo {size} (arith.remui: the ring's slot), or make the "
                    "group larger",
                    Related(init, "the group"),
                )
            )
            raise Stop
        # rule: P9
        self.report(
            warning(
                op,
                "cannot prove this op's barrier: its index is not known statically",
                "compute it from constants and the loop's induction variable (i mod S), or "
                "check it at run time with --debug-guards",
            )
        )
        for i in range(size):
            self.state.barriers[(group, i)].unknown = True
        return None

    def event(self, op: Operation, *values: object) -> None:
        self.walk.events.append((op, *values))

    def copy_op(self, op: Operation, mask: int | None) -> Steps | None:
        step = COPY_STEPS.get(type(op))
        steps = None if step is None else step(self, op, mask)
        if steps is not None:
            return steps
        if op.results:
            self.generic(op)
        return None

    def operand_event(self, op: Operation) -> None:
        self.event(op, *(self.uniform_int(v) for v in op.operands))

    def barrier_init(self, op: copy.BarrierInitOp, mask: int | None) -> None:
        self.whole_group(op, mask, "initializes barriers with a block barrier")
        assert isinstance(op.result.type, copy.BarrierType)
        self.state.init_group(op, op.result, op.result.type.count.data, op.arrivals.value.data)
        self.sync()

    def expect_tx(self, op: copy.BarrierArriveExpectTxOp, mask: int | None) -> None:
        self.operand_event(op)
        key = self.barrier_key(op, op.barrier, op.index)
        if self.elected(op, mask) and key is not None:
            self.state.stamp(self.c0)
            self.state.arrive(op, key, 1, op.bytes.value.data, (self.c0,), self.name)  # type: ignore[arg-type]

    def commit(self, op: copy.CommitGroupOp, mask: int | None) -> None:
        bulk = op.group.data is copy.GroupKind.BULK
        self.event(op)
        if bulk:
            self.elected(op, mask)
        else:
            self.whole_group(op, mask, "commits every thread's cp.async copies")
        self.state.commit(self.groups, bulk)

    def wait_group(self, op: copy.WaitGroupOp, mask: int | None) -> None:
        self.event(op)
        role_why = self.role_barrier() if self.role is not None else ""
        self.whole_group(op, mask, "ends with a block barrier", role_why)
        bulk = op.group.data is copy.GroupKind.BULK
        self.state.wait_group(
            self.groups, bulk, op.pending.value.data, op.is_read_only, self.classes,
            self.role is None,
        )  # fmt: skip

    def fence(self, op: copy.FenceAsyncSharedOp, mask: int | None) -> None:
        self.event(op)
        role_why = self.role_barrier() if self.role is not None else ""
        self.whole_group(op, mask, "ends with a block barrier", role_why)
        self.state.fence(self.classes, self.role is None)

    def prefetch(self, op: copy.PrefetchOp, mask: int | None) -> None:
        self.elected(op, mask)

    def tmem_alloc(self, op: copy.TmemAllocOp, mask: int | None) -> None:
        self.event(op)
        self.whole_group(op, mask, "allocates TMEM with a block barrier")
        self.state.tmem_alloc(op, op.result)
        self.sync()

    def tmem_dealloc(self, op: copy.TmemDeallocOp, mask: int | None) -> None:
        self.event(op)
        self.whole_group(op, mask, "frees TMEM after a block barrier")
        self.state.tmem_dealloc(op, op.tmem)
        self.sync()

    def tmem_load(self, op: copy.TmemLoadOp, mask: int | None) -> None:
        self.operand_event(op)
        self.whole_warps(op, mask)
        self.state.tmem_load(op, op.tmem)

    def tmem_store(self, op: copy.TmemStoreOp, mask: int | None) -> None:
        self.operand_event(op)
        self.whole_warps(op, mask)
        self.state.tmem_store(op, op.tmem)

    def tmem_wait(self, op: copy.TmemWaitOp, mask: int | None) -> None:
        self.event(op)
        self.state.tmem_wait(op.kind.data == copy.TmemWaitKind.LOAD)

    def smem_to_tmem(self, op: copy.SmemToTmemOp, mask: int | None) -> None:
        self.operand_event(op)
        if self.elected(op, mask):
            region = self.region(op.src, ())
            self.state.read(op, region, (self.c0,), "tcgen05.cp")
            self.state.async_read(op, region, "tcgen05.cp", (self.c0,))

    def async_copy(self, op: copy.AsyncCopyOp | copy.Im2colLoadOp, mask: int | None) -> None:
        s = self.state
        g = self.kernel.geometry.get(op)
        if g is None:
            g = self.kernel.geometry[op] = CopyFacts.of(op)
        if g.predicate is not None:
            p = self.uniform_int(g.predicate)
            if p is UNIFORM:
                self.choose(g.predicate, (1, 0))
            if isinstance(p, tuple):
                p = p[0]
            if p == 0:
                return
        region = self.region(g.smem, g.smem_indices)
        index = None if g.barrier_index is None else self.uniform_int(g.barrier_index)
        self.event(op, region, index)
        if not g.tma:
            self.whole_group(
                op, mask, "is a cp.async copy the block's threads share",
                "is a cp.async copy the role's threads share",
            )  # fmt: skip
            if g.barrier is None:
                s.cp_async(op, region, self.groups, self.classes)
                return
            key = self.barrier_key(op, g.barrier, g.barrier_index)
            got = None if key is None else self.issued(op, mask, key, copy.Issuer.THREADS, TRACKED)
            if got is not None:
                times, members, how = got
                s.tracked_cp_async(op, region, key, times, members, self.name, how)  # type: ignore[arg-type]
            return
        if not self.elected(op, mask):
            return
        if not g.load:
            s.tma_store(op, region, self.groups, self.c0)
            if g.map is not None:
                s.map_copy(op, g.map, None, None, self.groups)
            return
        assert g.barrier is not None
        key = self.barrier_key(op, g.barrier, g.barrier_index)
        if key is None:
            return
        end = s.tma_load(op, region, key, g.expect, g.bytes, self.c0, self.name)  # type: ignore[arg-type]
        if g.map is not None:
            s.map_copy(op, g.map, key, end, self.groups)  # type: ignore[arg-type]

    def tensormap_replace(self, op: copy.TensorMapReplaceOp, mask: int | None) -> None:
        self.event(op)
        if self.elected(op, mask):
            self.state.stamp(self.c0)
            self.state.map_replace(op, op.map, self.c0)

    def tensormap_release(self, op: copy.TensorMapFenceReleaseOp, mask: int | None) -> None:
        self.event(op)
        if self.elected(op, mask):
            self.state.map_release(op.map)

    def tensormap_acquire(self, op: copy.TensorMapFenceAcquireOp, mask: int | None) -> None:
        self.event(op)
        if self.elected(op, mask):
            self.state.map_acquire(op, op.map)

    def arrive(self, op: copy.BarrierArriveOp, mask: int | None) -> None:
        self.operand_event(op)
        key = self.barrier_key(op, op.barrier, op.index)
        if key is None:
            return
        count = 1 if op.count is None else op.count.value.data
        got = self.issued(op, mask, key, op.arriving, ARRIVAL)
        if got is not None:
            times, members, how = got
            self.state.arrive(op, key, times * count, 0, members, self.name, how)  # type: ignore[arg-type]

    # ---- distributed shared memory (copy_dialect.dsmem) --------------------------------

    def peer_key(
        self, op: Operation, barrier: SSAValue, index: SSAValue | None, peer: SSAValue
    ) -> tuple[SSAValue, int] | None:
        """The local barrier that stands for the peer's one a DSMEM op completes on: in a
        symmetric cluster what a CTA sends its peer is what it receives, as long as the
        peers are a permutation of the ranks (rank ^ 1, (rank + 1) % n). A constant rank
        sends every CTA's write to one CTA: reported, the barrier left unknown."""
        key = self.barrier_key(op, barrier, index)
        if key is None:
            return None
        rank = self.uniform_int(peer)
        if isinstance(rank, int):
            # rule: P6
            self.report(
                warning(
                    op,
                    f"cannot prove the phases of {describe_key(key)}: the peer rank is the "  # type: ignore[arg-type]
                    f"constant {rank}, so every CTA of the cluster writes CTA {rank} and the "
                    "others receive nothing",
                    "compute the peer from the CTA's rank as a permutation (rank ^ 1 in a "
                    "pair, (rank + 1) % n in a ring): the analysis credits each CTA with what "
                    "it sends",
                )
            )
            self.state.barriers[key].unknown = True  # type: ignore[index]
            return None
        return key  # type: ignore[return-value]

    def peer_store(self, op: copy.PeerStoreOp, mask: int | None) -> None:
        # The threads' stores fill the ref together: the region is the slot that the leading
        # block-uniform indices pick (the whole ref when the first varies by thread).
        known = []
        for v in op.indices:
            got = self.uniform_int(v)
            if not isinstance(got, int):
                break
            known.append(v)
        region = self.region(op.ref, known)
        self.event(op, region)
        key = self.peer_key(op, op.barrier, op.barrier_index, op.peer)
        if key is None:
            return
        if mask is None or self.n is None:
            why = (
                "the threads that reach it are not known" if self.n else "the block size is unknown"
            )
            # rule: P6
            self.report(
                warning(
                    op,
                    f"cannot prove the phases of {describe_key(key)}: every thread that reaches "
                    f"this store sends its value, and {why}",
                    "give the kernel gpu.known_block_size, and make the threads that store "
                    "known (a block-uniform loop, a condition on the thread id)",
                )
            )
            self.state.barriers[key].unknown = True
            return
        nbytes = self.threads_in(mask) * op.value_bytes
        what = "the peer's red.async" if op.reduction is not None else "the peer's st.async"
        self.state.peer_write(op, region, key, nbytes, self.members(mask), what)

    def peer_copy(self, op: copy.PeerCopyOp, mask: int | None) -> None:
        src = self.region(op.src, op.src_indices)
        dst = self.region(op.dst, op.dst_indices)
        self.event(op, src, dst)
        if not self.elected(op, mask):
            return
        key = self.peer_key(op, op.barrier, op.barrier_index, op.peer)
        s = self.state
        s.read(op, src, (self.c0,), "the peer copy")
        s.async_read(op, src, "the peer copy", (self.c0,))
        if key is None:
            return
        s.peer_write(op, dst, key, op.delivered_bytes, (self.c0,), "the peer's bulk copy")

    def peer_arrive(self, op: copy.PeerArriveOp, mask: int | None) -> None:
        self.operand_event(op)
        if not self.elected(op, mask):
            return
        key = self.peer_key(op, op.barrier, op.barrier_index, op.peer)
        if key is None:
            return
        self.state.stamp(self.c0)
        how = "copy.peer_arrive makes one arrival per execution, on the peer's barrier"
        self.state.arrive(op, key, 1, op.tx_bytes, (self.c0,), self.name, how)

    def wait_operands(self, op: Operation) -> tuple[SSAValue, SSAValue | None, SSAValue]:
        operands = self.kernel.operands.get(op)
        if operands is None:
            barrier, index, parity_value = segments(op)
            operands = (barrier[0], index[0] if index else None, parity_value[0])
            self.kernel.operands[op] = operands
        return operands  # type: ignore[return-value]

    def wait_key(self, op: Operation) -> tuple[object, int] | None:
        """The barrier and parity of a barrier_wait or barrier_test, or None (reported)."""
        barrier, index, parity_value = self.wait_operands(op)
        key = self.barrier_key(op, barrier, index)
        if key is None:
            return None
        parity = self.uniform_int(parity_value)
        if not isinstance(parity, int):
            # rule: P6
            self.report(
                warning(
                    op,
                    f"cannot prove this wait on {describe_key(key)}: its parity is not known "  # type: ignore[arg-type]
                    "statically",
                    "compute the parity from the loop's induction variable ((i / S) mod 2) or "
                    "carry it through the loop, or check the wait at run time with "
                    "--debug-guards",
                )
            )
            self.state.barriers[key].unknown = True  # type: ignore[index]
            return None
        return key, parity

    def wait(self, op: copy.BarrierWaitOp, mask: int | None) -> Steps | None:
        found = self.wait_key(op)
        if found is None:
            return None
        key, parity = found
        b = self.state.barriers[key]  # type: ignore[index]
        self.event(op, key[1], parity ^ (b.closed & 1))  # type: ignore[index]
        return self.wait_for(op, key, parity, self.observers(mask))  # type: ignore[arg-type]

    def wait_for(
        self,
        op: Operation,
        key: tuple[SSAValue, int],
        parity: int,
        observers: tuple[int, ...],
        infeasible: bool = False,
    ) -> Steps:
        """The classes `observers` wait on `parity`: those whose phase has not completed
        block until it has; all observe it."""
        s = self.state
        b = s.barriers[key]
        if b.unknown:
            return
        targets = s.wait_targets(op, key, parity, observers, self.name, self.role is not None)
        if not targets:
            return
        need = max(t for _, t in targets)
        if b.closed <= need:
            waiter = Waiter(op, self.name, min(t for _, t in targets))
            b.waiting.append(waiter)
            yield Blocked(
                op,
                lambda: b.closed > need or b.unknown,
                lambda others: s.hang(op, key, need, others, s.concurrent),
                infeasible,
                f"{op.name} on {describe_key(key)} (phase {need})",
            )
            b.waiting.remove(waiter)
        s.observe(op, key, targets, self.name, self.role is not None)

    def test(self, op: copy.BarrierTestOp, mask: int | None) -> Steps:
        """`copy.barrier_test`: true once the phase of its parity has completed. In a spin
        loop (the `before` region of an scf.while) the loop ends once it holds, so the test
        stands for a wait; elsewhere its result is chosen: true (the tester then observes the
        phase, as after a wait) or false (it learns nothing)."""
        result = op.results[0]
        found = self.wait_key(op)
        if found is None:
            self.env[result] = VARYING
            return
        key, parity = found
        s = self.state
        b = s.barriers[key]  # type: ignore[index]
        observers = self.observers(mask)
        # Knows the phase of this parity already (the phase before): true at once.
        if all(s.known(c, key) % 2 != parity for c in observers) and observers:  # type: ignore[arg-type]
            self.env[result] = 1
            return
        parent = op.parent_op()
        spin = isinstance(parent, scf.WhileOp) and op.parent_block() is parent.before_region.block
        if not spin:
            bound = self.bindings.get(result)
            if bound is None:
                self.choose(result, (1, 0))
            self.event(op, key[1], parity ^ (b.closed & 1), bound)  # type: ignore[index]
            if not bound:
                self.env[result] = 0
                return
        yield from self.wait_for(op, key, parity, observers, infeasible=not spin)  # type: ignore[arg-type]
        self.env[result] = 1

    # ---- mbarrier breadth: arrive_drop, expect_tx, complete_tx, inval, reinit ------------

    def issued(
        self,
        op: Operation,
        mask: int | None,
        key: object,
        issuer: copy.Issuer,
        words: IssueWords = ACTION,
    ) -> tuple[int, tuple[int, ...], str | None] | None:
        """How many times an op of `issuer` (threads, warps, elected) acts when the threads
        of `mask` reach it, the classes that take part, and how it counts (for a fix note,
        in `words`); None when nothing acts or the analysis cannot tell (reported, P6)."""
        s = self.state
        if issuer is copy.Issuer.ELECTED:
            if not self.elected(op, mask):
                return None
            s.stamp(self.c0)
            return 1, (self.c0,), words.elected
        n = self.n
        if mask is None or n is None:
            why = "the threads that reach it are not known" if n else "the block size is unknown"
            # rule: P6
            self.report(
                warning(
                    op,
                    f"cannot prove the phases of {describe_key(key)}: {words.unknown} "  # type: ignore[arg-type]
                    f"every thread that reaches it, and {why}",
                    words.unknown_fix,
                )
            )
            s.barriers[key].unknown = True  # type: ignore[index]
            return None
        members = self.members(mask)
        for c in members:
            s.stamp(c)
        threads = self.threads_in(mask)
        if issuer is copy.Issuer.WARPS:
            self.whole_warps(op, mask)
            warps = -(-threads // WARP)
            return warps, members, words.warps.format(warps)
        return threads, members, words.threads(threads, self.role is not None)

    def arrive_drop(self, op: copy.BarrierArriveDropOp, mask: int | None) -> None:
        self.operand_event(op)
        key = self.barrier_key(op, op.barrier, op.index)
        if key is None:
            return
        got = self.issued(op, mask, key, op.arriving)
        if got is None:
            return
        times, members, how = got
        tx = 0 if op.expect_tx is None else op.expect_tx.value.data
        self.state.arrive_drop(op, key, times * op.arrivals, times * tx, members, self.name, how)  # type: ignore[arg-type]

    def expect_tx_only(self, op: copy.BarrierExpectTxOp, mask: int | None) -> None:
        self.operand_event(op)
        key = self.barrier_key(op, op.barrier, op.index)
        if self.elected(op, mask) and key is not None:
            self.state.stamp(self.c0)
            self.state.expect(op, key, op.bytes.value.data, (self.c0,))  # type: ignore[arg-type]

    def complete_tx(self, op: copy.BarrierCompleteTxOp, mask: int | None) -> None:
        self.operand_event(op)
        key = self.barrier_key(op, op.barrier, op.index)
        if key is None:
            return
        got = self.issued(op, mask, key, op.arriving)
        if got is not None:
            times, members, _ = got
            self.state.complete_tx(op, key, times * op.bytes.value.data, members)  # type: ignore[arg-type]

    def barrier_inval(self, op: copy.BarrierInvalOp, mask: int | None) -> None:
        self.event(op)
        self.whole_group(op, mask, "invalidates barriers after a block barrier")
        self.sync()
        if not self.state.inval_group(op, op.barrier):
            raise Stop

    def barrier_reinit(self, op: copy.BarrierReinitOp, mask: int | None) -> None:
        self.event(op)
        self.whole_group(op, mask, "initializes barriers with a block barrier")
        if not self.state.reinit_group(op, op.barrier, op.arrivals.value.data):
            raise Stop
        self.sync()

    def named_barrier(self, op: Operation, mask: int | None, sync: bool) -> Steps | None:
        assert isinstance(op, copy.NamedBarrierSyncOp | copy.NamedBarrierArriveOp)
        self.event(op)
        why = "is a named barrier the block's threads meet at (bar.sync or bar.arrive)"
        self.whole_group(op, mask, why, why.replace("block's", "role's"))
        barrier, threads = op.id.value.data, op.threads.value.data
        if self.n is None:
            # rule: P13
            self.report(
                warning(
                    op,
                    f"cannot prove named barrier {barrier}: the block size is unknown, so "
                    "the threads that meet here are not known",
                    "give the kernel gpu.known_block_size",
                )
            )
            return None
        s = self.state
        for c in self.classes:
            s.stamp(c)
        taken = set(s.named) | set(range(self.kernel.roles + 1))
        free = next((i for i in range(16) if i not in taken), None)
        nb, g = s.named_arrive(op, barrier, threads, self.n, self.classes, self, self.name, free)
        if not sync:
            return None
        return self.named_wait(op, barrier, nb, g)

    def named_wait(self, op: Operation, barrier: int, nb: Any, g: int) -> Steps:
        s = self.state
        if nb.completed <= g:
            yield Blocked(
                op,
                lambda: nb.completed > g,
                lambda others: s.named_stuck(op, barrier, others),
                what=f"{op.name} {barrier} (generation {g})",
            )
        done = nb.gens[g]
        for c in self.classes:
            s.clocks[c] = join(s.clocks[c], done)
        s.prune()

    def named_sync(self, op: copy.NamedBarrierSyncOp, mask: int | None) -> Steps | None:
        return self.named_barrier(op, mask, True)

    def named_arrive(self, op: copy.NamedBarrierArriveOp, mask: int | None) -> Steps | None:
        return self.named_barrier(op, mask, False)

    def warp_specialize(self, op: copy.WarpSpecializeOp, mask: int | None) -> Steps:
        """The roles start where the block is (what every thread of the block knows) and
        run at once; the block goes on once every role has ended (the join)."""
        s = self.state
        start = meet(s.clocks[self.c0], s.clocks[self.c1])
        roles = []
        for r in range(len(op.roles)):
            first = s.new_class(start)
            rest = s.new_class(start) if op.role_warps[r] > 1 else first
            agent = Agent(
                self.walk, f"role {r}", r, op.role_threads(r), WARP * op.first_warp(r), self,
                (first, rest),
            )  # fmt: skip
            agent.steps = agent.role_body(op.role_block(r))
            roles.append(agent)
        self.walk.fork(roles)
        yield Blocked(op, lambda: all(a.done for a in roles), None)
        self.walk.join(self, roles, op)


TERMINATORS = frozenset({scf.YieldOp, scf.ConditionOp})
REGION_STEPS: dict[type[Operation], Callable[[Agent, Any, int | None], Steps]] = {
    scf.IfOp: Agent.if_op,
    scf.ForOp: Agent.for_op,
    scf.WhileOp: Agent.while_op,
}
"""Ops with regions the agents walk (an scf.while only when it holds copy ops)."""

COPY_STEPS: dict[type[Operation], Callable[[Agent, Any, int | None], Steps | None]] = {
    copy.AsyncCopyOp: Agent.async_copy,
    copy.Im2colLoadOp: Agent.async_copy,  # a TMA load, as the protocol sees it
    copy.BarrierInitOp: Agent.barrier_init,
    copy.BarrierArriveOp: Agent.arrive,
    copy.BarrierArriveExpectTxOp: Agent.expect_tx,
    copy.BarrierWaitOp: Agent.wait,
    copy.BarrierTestOp: Agent.test,
    copy.BarrierArriveDropOp: Agent.arrive_drop,
    copy.BarrierExpectTxOp: Agent.expect_tx_only,
    copy.BarrierCompleteTxOp: Agent.complete_tx,
    copy.BarrierInvalOp: Agent.barrier_inval,
    copy.BarrierReinitOp: Agent.barrier_reinit,
    copy.CommitGroupOp: Agent.commit,
    copy.WaitGroupOp: Agent.wait_group,
    copy.FenceAsyncSharedOp: Agent.fence,
    copy.PrefetchOp: Agent.prefetch,
    copy.TmemAllocOp: Agent.tmem_alloc,
    copy.TmemDeallocOp: Agent.tmem_dealloc,
    copy.TmemLoadOp: Agent.tmem_load,
    copy.TmemStoreOp: Agent.tmem_store,
    copy.TmemWaitOp: Agent.tmem_wait,
    copy.SmemToTmemOp: Agent.smem_to_tmem,
    copy.NamedBarrierSyncOp: Agent.named_sync,
    copy.NamedBarrierArriveOp: Agent.named_arrive,
    copy.WarpSpecializeOp: Agent.warp_specialize,
    copy.PeerStoreOp: Agent.peer_store,
    copy.PeerCopyOp: Agent.peer_copy,
    copy.PeerArriveOp: Agent.peer_arrive,
    copy.TensorMapReplaceOp: Agent.tensormap_replace,
    copy.TensorMapFenceReleaseOp: Agent.tensormap_release,
    copy.TensorMapFenceAcquireOp: Agent.tensormap_acquire,
}
"""How an agent follows each copy op (the others, `alloc_smem`, only give values)."""
