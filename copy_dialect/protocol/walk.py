"""One run of the protocol analysis over a kernel: the ops in program order, `scf.if` by its
condition, `scf.for` iteration by iteration, every value the protocol depends on computed
(`values`), the state (`state`) updated and checked op by op.

A run has `bindings`: values the analysis chose for block-uniform unknowns (a loop's trip
count, a branch condition). When it meets an unbound one that decides what the protocol
does, it raises `Choose`, and the driver (`analysis`) runs the kernel again for each option.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import DenseArrayBase, MemRefType
from xdsl.ir import Block, Operation, SSAValue

from copy_dialect import ops as copy
from copy_dialect.memory import SMEM, memory_space
from copy_dialect.protocol.findings import ProtocolFinding, Related, error, warning
from copy_dialect.protocol.state import Classes, Deadlock, Region, Report, State, describe_key
from copy_dialect.protocol.values import UNIFORM, VARYING, Unknown, Value, plan

MAX_ITERATIONS = 4096
"""Iterations of one loop the analysis follows; a longer loop is reported, not proven."""

THREAD_READS = {"memref.load": 0, "vector.load": 0, "vector.transfer_read": 0}
THREAD_WRITES = {"memref.store": 1, "vector.store": 1, "vector.transfer_write": 1}
"""Ops by which threads access memory, and the operand that is the memref."""


class Choose(Exception):
    """The run needs a value for `value`: the driver runs again for each of `options`."""

    def __init__(self, value: SSAValue, options: Sequence[int]):
        super().__init__()
        self.value = value
        self.options = options


class Stop(Exception):
    """The run ends here: the analysis cannot follow the kernel further (reported)."""


@dataclass(frozen=True)
class CopyFacts:
    """What a `copy.async_copy` is, as the protocol sees it."""

    smem: SSAValue
    smem_indices: tuple[SSAValue, ...]
    barrier: SSAValue | None
    barrier_index: SSAValue | None
    predicate: SSAValue | None
    tma: bool
    load: bool
    bytes: int
    """Bytes its barrier is credited (the whole box for multicast, both CTAs' boxes for a
    leader-tracked load)."""
    expect: int
    """Bytes it expects itself when it arrives on its barrier (else 0)."""

    @staticmethod
    def of(op: copy.AsyncCopyOp) -> CopyFacts:
        g = op.geometry()
        bar = g.barrier
        impl = op.resolved_implementation()
        tma = (
            (bar is not None or not g.is_load) if impl is None else impl == copy.Implementation.TMA
        )
        nbytes = g.credited_bytes if tma else 0
        arrives = bar is not None and (op.arrive is None or op.arrive.value.data)
        return CopyFacts(
            g.smem,
            g.smem_indices,
            bar,
            g.barrier_index,
            g.predicate,
            tma,
            g.is_load,
            nbytes,
            nbytes if arrives else 0,
        )


def segments(op: Operation) -> list[tuple[SSAValue, ...]]:
    """An op's operands by operand definition, from its operandSegmentSizes read once (xDSL's
    accessors read them again for every operand)."""
    sizes = op.properties["operandSegmentSizes"]
    assert isinstance(sizes, DenseArrayBase)
    groups, start = [], 0
    for size in sizes.get_values():
        groups.append(tuple(op.operands[start : start + size]))
        start += size
    return groups


@dataclass(frozen=True)
class Kernel:
    """What the runs of one kernel share: its function, its block size (None when unknown),
    the loop bounds worth choosing, and the trip counts tried for them."""

    fn: func.FuncOp
    block: tuple[int, int, int] | None
    loop_bounds: frozenset[SSAValue]
    trip_counts: int
    ring: int
    max_pending: int
    """The largest `pending` count of the kernel's wait_groups."""
    """The largest barrier group: the longest lap (ring of slots) the steady-state check
    looks for, and the iterations at a loop's end that may see its end."""
    protocol_ops: frozenset[Operation]
    """Ops that hold a copy op (themselves or nested): the ones worth choosing a branch of."""
    plans: dict[Operation, Callable[[Sequence[Value]], Value] | None]
    """How each arith op computes its value (`values.plan`), made once per kernel."""
    geometry: dict[Operation, CopyFacts]
    """What each copy moves, decoded once per kernel."""
    operands: dict[Operation, tuple[SSAValue | None, ...]]
    """The named operands of each barrier_wait, read once per kernel."""

    @property
    def threads(self) -> int | None:
        return None if self.block is None else self.block[0] * self.block[1] * self.block[2]


def block_size(fn: func.FuncOp) -> tuple[int, int, int] | None:
    attr = fn.attributes.get("gpu.known_block_size")
    if not isinstance(attr, DenseArrayBase):
        return None
    values = attr.get_values()
    if len(values) != 3 or not all(isinstance(v, int) and 0 < v <= 1024 for v in values):
        return None
    x, y, z = (int(v) for v in values)
    return (x, y, z) if x * y * z <= 1024 else None


ALL = -1
"""The mask of every thread of the block; other masks are bit sets of thread ids, None an
unknown subset (a thread-dependent condition the analysis cannot evaluate)."""


class Walk:
    def __init__(self, kernel: Kernel, bindings: dict[SSAValue, int], report: Report):
        self.kernel = kernel
        self.bindings = bindings
        self.report = report
        self.state = State(report)
        self.state.pending_cap = kernel.max_pending + 1
        self.env: dict[SSAValue, Value] = {arg: UNIFORM for arg in kernel.fn.args}
        n = kernel.threads
        self.full = ALL if n is None else (1 << n) - 1
        self.events: list[tuple[object, ...]] = []
        """What the protocol saw, op by op (ring slots, barriers, parities relative to the
        barrier's phase, branches taken), without GMEM coordinates: the trace the steady-
        state check compares lap by lap."""
        self.heads: dict[scf.ForOp, list[tuple[tuple[object, ...], int]]] = {}
        """Per loop whose trip count was chosen: the state at the head of each iteration
        (`State.snapshot`) and where its events start."""

    # ---- values --------------------------------------------------------------------------

    def value(self, v: SSAValue) -> Value:
        if v in self.bindings:
            return self.bindings[v]
        return self.env.get(v, VARYING)

    def uniform_int(self, v: SSAValue) -> int | Unknown | tuple[int, ...]:
        """The value, folded to one int when every thread has the same."""
        got = self.value(v)
        if isinstance(got, tuple) and len(set(got)) == 1:
            return got[0]
        return got

    def thread_ids(self, dim: str) -> Value:
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

    # ---- who issues what -----------------------------------------------------------------

    def elected(self, op: Operation, mask: int | None) -> bool:
        """Ops thread 0 issues for the block: reached by thread 0? (P10)"""
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

    def whole_block(self, op: Operation, mask: int | None, why: str) -> None:
        """Ops every thread of the block must reach (P10)."""
        if mask == ALL or (mask is not None and mask == self.full):
            return
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

    def classes(self, mask: int | None) -> Classes:
        return Classes(mask)

    # ---- the walk --------------------------------------------------------------------------

    def run(self) -> None:
        self.block(self.kernel.fn.body.blocks[0], ALL)

    def block(self, block: Block, mask: int | None) -> list[Value]:
        for op in block.ops:
            if isinstance(op, scf.YieldOp):
                return [self.value(v) for v in op.operands]
            self.op(op, mask)
        return []

    def op(self, op: Operation, mask: int | None) -> None:
        if self.state.tmem_loads:
            self.state.use(op)
        if op.name.startswith("copy."):
            self.copy_op(op, mask)
        elif isinstance(op, scf.IfOp):
            self.if_op(op, mask)
        elif isinstance(op, scf.ForOp):
            self.for_op(op, mask)
        elif isinstance(op, func.ReturnOp):
            self.state.exit(op)
        elif op.name in THREAD_READS or op.name in THREAD_WRITES:
            self.thread_access(op, mask)
        elif op.name == "gpu.barrier":
            self.whole_block(op, mask, "is a block barrier")
            self.state.block_barrier()
        elif op.name == "gpu.thread_id":
            self.env[op.results[0]] = self.thread_ids(str(op.properties["dimension"].data))
        elif op.name == "gpu.lane_id":
            n = self.kernel.threads
            self.env[op.results[0]] = VARYING if n is None else tuple(t % 32 for t in range(n))
        elif op.name == "gpu.block_dim" and self.kernel.block is not None:
            dim = "xyz".index(str(op.properties["dimension"].data))
            self.env[op.results[0]] = self.kernel.block[dim]
        else:
            self.generic(op)

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

    def choose(self, v: SSAValue, options: Sequence[int]) -> None:
        """Ask the driver to bind `v`, or the loop bound it is computed from (so that a
        prologue's `k < count` and the loop agree on `count`)."""
        bound = self.loop_bound_of(v)
        if bound is not None:
            raise Choose(bound, self.trip_options(bound))
        raise Choose(v, options)

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

    def trip_options(self, bound: SSAValue) -> list[int]:
        loop = next(
            op
            for op in (u.operation for u in bound.uses)
            if isinstance(op, scf.ForOp) and op.ub == bound
        )
        lb, step = self.value(loop.lb), self.value(loop.step)
        if not isinstance(lb, int) or not isinstance(step, int) or step <= 0:
            return [0]
        return [lb + n * step for n in range(self.kernel.trip_counts + 1)]

    def if_op(self, op: scf.IfOp, mask: int | None) -> None:
        cond = self.uniform_int(op.cond)
        if cond is UNIFORM and op in self.kernel.protocol_ops:
            self.choose(op.cond, (1, 0))
        if op in self.kernel.protocol_ops:
            self.events.append((op, cond))
        then_mask, else_mask = self.mask_of(cond, mask)
        if cond is UNIFORM:
            then_mask = else_mask = mask
        results: list[list[Value]] = []
        for region, m in ((op.true_region, then_mask), (op.false_region, else_mask)):
            if region.blocks and m != 0:
                results.append(self.block(region.blocks[0], m))
        for i, r in enumerate(op.results):
            values = {res[i] for res in results if i < len(res)}
            self.env[r] = values.pop() if len(values) == 1 else VARYING

    def for_op(self, op: scf.ForOp, mask: int | None) -> None:
        body = op.body.blocks[0]
        lb, ub, step = (self.uniform_int(v) for v in (op.lb, op.ub, op.step))
        if op not in self.kernel.protocol_ops:
            # No copy op inside: one pass with unknown induction values stands for all.
            varying = any(isinstance(v, tuple) or v is VARYING for v in (lb, ub, step))
            for arg in body.args:
                self.env[arg] = VARYING if varying else UNIFORM
            self.block(body, None if varying else mask)
            for r in op.results:
                self.env[r] = VARYING
            return
        if ub is UNIFORM:
            self.choose(op.ub, ())
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
        heads = self.heads.setdefault(op, []) if op.ub in self.bindings else None
        for i in range(count):
            if heads is not None:
                heads.append((self.state.snapshot(), len(self.events)))
            self.env[body.args[0]] = lb + i * step
            for arg, v in zip(body.args[1:], carried, strict=True):
                self.env[arg] = v
            carried = self.block(body, mask)
        for r, v in zip(op.results, carried, strict=True):
            self.env[r] = v

    def thread_access(self, op: Operation, mask: int | None) -> None:
        write = op.name in THREAD_WRITES
        ref = op.operands[THREAD_WRITES[op.name] if write else 0]
        if isinstance(ref.type, MemRefType) and memory_space(ref.type) == SMEM:
            indices = op.operands[(2 if write else 1) :]
            region = self.region(ref, indices)
            self.state.thread_access(op, region, write, self.classes(mask))
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
        self.events.append((op, *values))

    def copy_op(self, op: Operation, mask: int | None) -> None:
        step = COPY_STEPS.get(type(op))
        if step is not None:
            step(self, op, mask)
        if op.results:
            self.generic(op)

    def operand_event(self, op: Operation) -> None:
        self.event(op, *(self.uniform_int(v) for v in op.operands))

    def barrier_init(self, op: copy.BarrierInitOp, mask: int | None) -> None:
        self.whole_block(op, mask, "initializes barriers with a block barrier")
        assert isinstance(op.result.type, copy.BarrierType)
        self.state.init_group(op, op.result, op.result.type.count.data, op.arrivals.value.data)

    def expect_tx(self, op: copy.BarrierArriveExpectTxOp, mask: int | None) -> None:
        self.operand_event(op)
        key = self.barrier_key(op, op.barrier, op.index)
        if self.elected(op, mask) and key is not None:
            self.state.arrive(op, key, 1, op.bytes.value.data)  # type: ignore[arg-type]

    def commit(self, op: copy.CommitGroupOp, mask: int | None) -> None:
        bulk = op.group.data is copy.GroupKind.BULK
        self.event(op)
        if bulk:
            self.elected(op, mask)
        else:
            self.whole_block(op, mask, "commits every thread's cp.async copies")
        self.state.commit(bulk)

    def wait_group(self, op: copy.WaitGroupOp, mask: int | None) -> None:
        self.event(op)
        self.whole_block(op, mask, "ends with a block barrier")
        bulk = op.group.data is copy.GroupKind.BULK
        self.state.wait_group(bulk, op.pending.value.data, op.is_read_only)

    def fence(self, op: copy.FenceAsyncSharedOp, mask: int | None) -> None:
        self.event(op)
        self.whole_block(op, mask, "ends with a block barrier")
        self.state.fence()

    def prefetch(self, op: copy.PrefetchOp, mask: int | None) -> None:
        self.elected(op, mask)

    def tmem_alloc(self, op: copy.TmemAllocOp, mask: int | None) -> None:
        self.event(op)
        self.whole_block(op, mask, "allocates TMEM with a block barrier")
        self.state.tmem_alloc(op, op.result)

    def tmem_dealloc(self, op: copy.TmemDeallocOp, mask: int | None) -> None:
        self.event(op)
        self.whole_block(op, mask, "frees TMEM after a block barrier")
        self.state.tmem_dealloc(op, op.tmem)

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
            self.state.read(op, region, Classes(1), "tcgen05.cp")
            self.state.async_read(op, region, "tcgen05.cp")

    def async_copy(self, op: copy.AsyncCopyOp, mask: int | None) -> None:
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
            self.whole_block(op, mask, "is a cp.async copy the block's threads share")
            s.cp_async(op, region)
            return
        if not self.elected(op, mask):
            return
        if not g.load:
            s.tma_store(op, region)
            return
        assert g.barrier is not None
        key = self.barrier_key(op, g.barrier, g.barrier_index)
        if key is None:
            return
        s.tma_load(op, region, key, g.expect, g.bytes)  # type: ignore[arg-type]

    def arrive(self, op: copy.BarrierArriveOp, mask: int | None) -> None:
        self.operand_event(op)
        key = self.barrier_key(op, op.barrier, op.index)
        if key is None:
            return
        count = 1 if op.count is None else op.count.value.data
        n = self.kernel.threads
        if mask is None or n is None:
            why = "the threads that reach it are not known" if n else "the block size is unknown"
            # rule: P6
            self.report(
                warning(
                    op,
                    f"cannot prove the phases of {describe_key(key)}: this arrival is made "
                    f"by every thread that reaches it, and {why}",
                    "give the kernel gpu.known_block_size, and put the arrival under scf.if "
                    "on the thread id when one thread should arrive",
                )
            )
            self.state.barriers[key].unknown = True
            return
        threads = bin(self.full if mask == ALL else mask).count("1")
        self.state.arrive(op, key, threads * count, 0)  # type: ignore[arg-type]

    def wait(self, op: copy.BarrierWaitOp, mask: int | None) -> None:
        operands = self.kernel.operands.get(op)
        if operands is None:
            barrier, index, parity_value = segments(op)
            operands = (barrier[0], index[0] if index else None, parity_value[0])
            self.kernel.operands[op] = operands
        barrier, index, parity_value = operands
        key = self.barrier_key(op, barrier, index)  # type: ignore[arg-type]
        if key is None:
            return
        parity = self.uniform_int(parity_value)  # type: ignore[arg-type]
        if not isinstance(parity, int):
            # rule: P6
            self.report(
                warning(
                    op,
                    f"cannot prove this wait on {describe_key(key)}: its parity is not known "
                    "statically",
                    "compute the parity from the loop's induction variable ((i / S) mod 2) or "
                    "carry it through the loop, or check the wait at run time with "
                    "--debug-guards",
                )
            )
            self.state.barriers[key].unknown = True
            return
        self.event(op, key[1], parity ^ (self.state.barriers[key].closed & 1))
        self.state.wait(op, key, parity, self.classes(mask))  # type: ignore[arg-type]


COPY_STEPS: dict[type[Operation], Callable[[Walk, Any, int | None], None]] = {
    copy.AsyncCopyOp: Walk.async_copy,
    copy.BarrierInitOp: Walk.barrier_init,
    copy.BarrierArriveOp: Walk.arrive,
    copy.BarrierArriveExpectTxOp: Walk.expect_tx,
    copy.BarrierWaitOp: Walk.wait,
    copy.CommitGroupOp: Walk.commit,
    copy.WaitGroupOp: Walk.wait_group,
    copy.FenceAsyncSharedOp: Walk.fence,
    copy.PrefetchOp: Walk.prefetch,
    copy.TmemAllocOp: Walk.tmem_alloc,
    copy.TmemDeallocOp: Walk.tmem_dealloc,
    copy.TmemLoadOp: Walk.tmem_load,
    copy.TmemStoreOp: Walk.tmem_store,
    copy.TmemWaitOp: Walk.tmem_wait,
    copy.SmemToTmemOp: Walk.smem_to_tmem,
}
"""How the walk follows each copy op (the others, `alloc_smem`, only give values)."""


def run_kernel(kernel: Kernel, bindings: dict[SSAValue, int], report: Report) -> Walk:
    """One run, up to its first error (what follows a race or a hang is not the kernel the
    author meant: one error per mistake); `Choose` propagates to the driver."""

    def first_error(finding: ProtocolFinding) -> None:
        report(finding)
        if finding.severity == "error":
            raise Stop

    walk = Walk(kernel, bindings, first_error)
    try:
        walk.run()
    except (Deadlock, Stop):
        walk.heads.clear()
    return walk


def steady(walk: Walk, loop: scf.ForOp, tail: int) -> bool:
    """Whether the loop reached a steady state in this run: a lap of P iterations (P up to
    `tail`) that leaves the state at the loop's head as it found it and sees the same
    events as the lap after it, both before the last `tail` iterations (whose conditions
    see the end of the loop). The trip counts the driver did not try then behave like
    those it did, with more such laps: the induction step of the proof."""
    heads = walk.heads.get(loop, [])
    marks = [start for _, start in heads] + [len(walk.events)]
    last = len(heads) - tail
    for period in range(1, tail + 1):
        for k in range(0, last - 2 * period + 1):
            if heads[k][0] != heads[k + period][0]:
                continue
            lap = [e for e in walk.events[marks[k] : marks[k + period]]]
            after = walk.events[marks[k + period] : marks[k + 2 * period]]
            if lap == after and heads[k + period][0] == heads[k + 2 * period][0]:
                return True
    return False
