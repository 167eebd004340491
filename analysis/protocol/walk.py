"""One program counter of a run of the protocol analysis: the block (outside roles) or one
role of a `copy.warp_specialize`, walking its ops in program order, every value the protocol
depends on computed (`values`), the shared state (`state`) updated and checked op by op.

The `Agent` is the generic walker: its values, its threads (the masks of the threads that
reach an op, their classes, who issues an op for them: P10), its blocks, the ops that only
give values, threads' SMEM accesses, and the dispatch of every other op to its handler, by
the table of `dispatch` that the run (`run`) hands it: `scf.if`, `scf.for` and `scf.while`
(`ops_scf`, which also asks the driver to choose unknowns), and the copy ops by concern
(`ops_barriers`, `ops_copies`, `ops_dsmem`, `ops_tensormaps`, `ops_tmem`, `ops_roles`).

An agent's walk is a generator: it yields where it blocks (a `barrier_wait` on a phase that
has not completed, a `named_barrier_sync` whose generation has not, the join of the roles)
and where another agent may now go on (`steps.Blocked`); the run schedules the agents.

A run has `bindings`: values the analysis chose for block-uniform unknowns (a loop's trip
count, a branch condition, a barrier_test's result). When an agent meets an unbound one that
decides what the protocol does, it raises `Choose` (`ops_scf.choose`), and the driver
(`analysis`) runs the kernel again for each option.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, SSAValue

from analysis.protocol.facts import Kernel
from analysis.protocol.findings import error
from analysis.protocol.groups import Groups
from analysis.protocol.reads import unread_ops
from analysis.protocol.records import Region
from analysis.protocol.steps import ALL, FIRST_WARP, Blocked, Run, Step, Steps, Stop
from analysis.protocol.values import VARYING, GenericPlan, Unknown, Value
from analysis.smem_values import THREAD_READS, THREAD_WRITES
from copy_dialect.memory import SMEM, memory_space

TERMINATORS = frozenset({scf.YieldOp, scf.ConditionOp})


class Way(Enum):
    """How an agent follows an op its run's dispatch table has no handler for."""

    GENERIC = "computes values"
    NOTHING = "gives nothing the protocol reads (a copy op with no handler and no result, `reads`)"
    ACCESS = "threads' SMEM access"
    FOREIGN_OP = "takes SMEM with effects the analysis does not own"
    RETURN = "func.return"
    BLOCK_BARRIER = "gpu.barrier"
    THREAD_ID = "gpu.thread_id"
    LANE_ID = "gpu.lane_id"
    BLOCK_DIM = "gpu.block_dim of a known block"


GENERIC, NOTHING, ACCESS, FOREIGN_OP, RETURN, BLOCK_BARRIER, THREAD_ID, LANE_ID, BLOCK_DIM = Way
Route = Way | Step

MATRIX_COPIES = {"copy.ldmatrix": "the warp's ldmatrix", "copy.stmatrix": "the warp's stmatrix"}
"""The warp-collective SMEM accesses, as findings name them (threads' loads and stores
otherwise)."""


def route_of(op: Operation, dispatch: Mapping[type[Operation], Step], kernel: Kernel) -> Route:
    """How an agent follows `op` under the run's `dispatch` table (the same in every run of
    the kernel): a generic op whose results the protocol never reads (`reads`) is skipped."""
    way = way_of(op, dispatch, kernel)
    if way is GENERIC and op in unread_of(dispatch, kernel):
        return NOTHING
    return way


def unread_of(dispatch: Mapping[type[Operation], Step], kernel: Kernel) -> frozenset[Operation]:
    """The generic ops under `dispatch` whose results the protocol never reads, once per
    kernel and table."""
    table = kernel.unread
    key = id(dispatch)
    if key not in table:
        table[key] = unread_ops(
            kernel.fn, lambda op: way_of(op, dispatch, kernel) is GENERIC, kernel.loops
        )
    return table[key]


def way_of(op: Operation, dispatch: Mapping[type[Operation], Step], kernel: Kernel) -> Route:
    kind = type(op)
    if kind in dispatch:
        return dispatch[kind]
    if op.name in THREAD_READS or op.name in THREAD_WRITES:
        return ACCESS
    if op.name.startswith("copy."):
        # The copy ops no handler follows (`alloc_smem`) only give values.
        return GENERIC if op.results else NOTHING
    if kind is func.ReturnOp:
        return RETURN
    if op.name == "gpu.barrier":
        return BLOCK_BARRIER
    if op.name == "gpu.thread_id":
        return THREAD_ID
    if op.name == "gpu.lane_id":
        return LANE_ID
    if op.name == "gpu.block_dim" and kernel.block is not None:
        return BLOCK_DIM
    return FOREIGN_OP if op in kernel.foreign else GENERIC


class Classes:
    """Which thread classes (0: thread 0, 1: the others) a set of the block's threads holds
    (outside roles)."""

    def __init__(self, mask: int | None):
        """`mask`: a bit set of thread ids, -1 for every thread, None for unknown threads."""
        self.members: tuple[int, ...] = (
            (0, 1) if mask is None else tuple(c for c, bits in ((0, 1), (1, ~1)) if mask & bits)
        )


class Agent:
    def __init__(
        self,
        walk: Run,
        name: str,
        role: int | None,
        threads: int | None,
        offset: int,
        parent: Agent | None,
        classes: tuple[int, int],
        rank: int = 0,
    ):
        self.walk = walk
        self.kernel = walk.kernel
        self.bindings = walk.bindings
        self.rank = parent.rank if parent is not None else rank
        """The CTA of the cluster it runs in (`cluster`: 0 when one CTA stands for all)."""
        fixed = walk.kernel.cluster.fixed[self.rank]
        self.pinned = {**self.bindings, **fixed} if fixed else self.bindings
        """The values the CTA's position in the cluster decides (`cluster.rank_values`) and
        the driver's choices (`bindings`), over what the ops compute."""
        self.role_name = name
        """Its name in the CTA ("role 1"), for notes that name it in several CTAs at once."""
        if len(walk.states) > 1:
            name = f"{name} of CTA {self.rank}"
        self.state = walk.states[self.rank]
        self.tmem = self.state.tmem
        """The TMEM part of the state (every op is checked against its loads, P11)."""
        self.dispatch = walk.dispatch
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
        names = self.state.hb.class_names
        if role is None:
            names[self.c0], names[self.c1] = "thread 0 of the block", "the block's other threads"
        elif self.c0 == self.c1:
            names[self.c0] = name
        else:
            names[self.c0] = f"the first warp of {name}"
            names[self.c1] = f"the other warps of {name}"
        self.env: dict[SSAValue, Value] = {}
        self.groups: Groups = self.state.group_sets.issuer(name)
        self.frames: list[tuple[scf.ForOp, int]] = []
        self.carried: list[tuple[Value, ...]] = []
        """Per frame: the values its loop carries into this iteration that the protocol
        reads and that are not counters (`periods.LoopShape.state`)."""
        self.at: Operation | None = None
        self.done = False
        self.blocked: Blocked | None = None
        self.steps: Steps | None = None
        self.routes: dict[Operation, Route] = walk.kernel.routes.setdefault(id(self.dispatch), {})
        """How it follows each op (`route`), made once per kernel."""
        self.last: dict[Operation, list[object]] = {}
        """Per op `generic` computed: its operands and results, the operands' values and
        the result it computed last."""

    @property
    def cta(self) -> int | None:
        """Its CTA's rank where the run models the cluster's CTAs (None: one CTA stands for
        all of them)."""
        return self.rank if len(self.walk.states) > 1 else None

    # ---- values --------------------------------------------------------------------------

    def value(self, v: SSAValue) -> Value:
        pinned = self.pinned
        if pinned:
            got = pinned.get(v)
            if got is not None:
                return got
        got = self.env.get(v)
        if got is not None:
            return got
        if self.parent is not None:
            # A value from outside the role: fixed while the role runs (the block waits at
            # the join), so kept here, its threads' part of a per-thread one.
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

    def region(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> Region:
        index = []
        for v in indices:
            got = self.uniform_int(v)
            index.append(got if isinstance(got, int) else None)
        return Region(buffer, tuple(index))

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

    @property
    def issuer(self) -> str:
        """Who issues the ops of the elected thread for this agent, for messages."""
        if self.role is None:
            return "thread 0 of the block"
        return f"the elected thread of {self.name}"

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
        self.state.hb.sync(self.classes)
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
        hb = self.state.hb
        hb.live = [c for c in hb.live if c not in self.classes]
        hb.progress = True

    def block(self, block: Block, mask: int | None) -> Steps:
        hb = self.state.hb
        ops = self.kernel.bodies.get(block)
        if ops is None:
            ops = self.kernel.bodies[block] = tuple(block.ops)
        for op in ops:
            if type(op) in TERMINATORS:
                return [self.value(v) for v in op.operands]
            self.at = op
            steps = self.op(op, mask)
            if steps is not None:
                yield from steps
            if hb.progress:
                hb.progress = False
                if hb.concurrent:
                    yield None
        return []

    def op(self, op: Operation, mask: int | None) -> Steps | None:
        if self.tmem.loads:
            self.tmem.use(op)
        route = self.routes.get(op)
        if route is None:
            route = self.routes[op] = route_of(op, self.dispatch, self.kernel)
        if route is GENERIC:
            self.generic(op)
        elif route is NOTHING:
            pass
        elif route is ACCESS:
            # memref and vector accesses, and the warp's copy.ldmatrix / copy.stmatrix
            self.thread_access(op, mask)
        elif route is FOREIGN_OP:
            self.walk.foreign(self, op, mask)
            self.generic(op)
        elif route is RETURN:
            self.state.ends.exit(op, self.groups, self.classes)
        elif route is BLOCK_BARRIER:
            self.whole_group(op, mask, "is a block barrier")
            self.sync()
        elif route is THREAD_ID:
            self.env[op.results[0]] = self.thread_ids(str(op.properties["dimension"].data))
        elif route is LANE_ID:
            n = self.n
            self.env[op.results[0]] = VARYING if n is None else tuple(t % 32 for t in range(n))
        elif route is BLOCK_DIM:
            assert self.kernel.block is not None
            dim = "xyz".index(str(op.properties["dimension"].data))
            self.env[op.results[0]] = self.kernel.block[dim]
        else:
            steps = route(self, op, mask)
            if steps is None and op.results:
                # What the handler left: the results of a copy op, of a loop with no copy op.
                self.generic(op)
            return steps
        return None

    def generic(self, op: Operation) -> None:
        """The op's results, as `values` computes them from its operands' (the same
        operands give the same results: the last are kept per op)."""
        last = self.last.get(op)
        if last is None:
            plans = self.kernel.plans
            how = plans.get(op)
            if how is None:
                how = plans[op] = GenericPlan.of(op)
            last = self.last[op] = [how, None, None]
        how = last[0]
        value = self.value
        args = [value(v) for v in how.operands]
        if last[1] == args:  # (values are ints, tuples of ints and enums: equal is the same)
            result = last[2]
        else:
            # (the same op on the same values in another agent or run: the kernel's memo)
            memo = self.kernel.results
            key = (how, *args)
            result = memo.get(key)
            if result is None:
                result = memo[key] = how.apply(args)
            last[1], last[2] = args, result
        env = self.env
        for r in how.results:
            env[r] = result

    def thread_access(self, op: Operation, mask: int | None) -> None:
        write = op.name in THREAD_WRITES
        ref = op.operands[THREAD_WRITES[op.name] if write else 0]
        if isinstance(ref.type, MemRefType) and memory_space(ref.type) == SMEM:
            indices = op.operands[(2 if write else 1) :]
            region = self.region(ref, indices)
            what = MATRIX_COPIES.get(op.name, "")
            self.state.smem.thread_access(op, region, write, self.members(mask), self.name, what)
        self.generic(op)

    # ---- what the protocol saw ----------------------------------------------------------

    def event(self, op: Operation, *values: object) -> None:
        self.walk.events.append((op, *values))

    def operand_event(self, op: Operation) -> None:
        self.event(op, *(self.uniform_int(v) for v in op.operands))
