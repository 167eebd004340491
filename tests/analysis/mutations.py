"""Mutation operators: one-op edits of a kernel that model a kernel author's mistakes with the
copy protocol (a wait deleted, a parity flipped, a count off by one, an op issued by the
wrong threads). `targets(module)` functions list the ops an operator applies to, in walk
order; an operator mutates the op in place. tests/analysis/test_protocol_mutations.py applies
them to the kernels we ship, tests/analysis/corpus_mutations.py to the corpus."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, gpu, memref, scf, vector
from xdsl.dialects.builtin import BoolAttr, IntegerAttr, MemRefType, ModuleOp, UnitAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from copy_dialect import ops as copy
from copy_dialect.memory import SMEM, memory_space


def tma_loads(module: ModuleOp) -> list[Operation]:
    """The TMA loads that arrive on their barrier, one per place in the kernel: the
    prologue loads of a ring after the first are the same op for another slot."""
    places: dict[tuple[str, ...], Operation] = {}
    for op in module.walk():
        if isinstance(op, copy.AsyncCopyOp) and op.barrier is not None and op.arrives:
            places.setdefault(tuple(p.name for p in ancestors(op)), op)
    return list(places.values())


def ancestors(op: Operation) -> list[Operation]:
    found = []
    while (op := op.parent_op()) is not None:
        found.append(op)
    return found


def full_bulk_waits(module: ModuleOp) -> list[Operation]:
    return [
        op
        for op in module.walk()
        if isinstance(op, copy.WaitGroupOp)
        and op.group.data == copy.GroupKind.BULK
        and not op.is_read_only
    ]


def ops_of(kind: type[Operation]) -> Callable[[ModuleOp], list[Operation]]:
    return lambda module: [op for op in module.walk() if isinstance(op, kind)]


def delete(op: Operation) -> None:
    Rewriter.erase_op(op)


def flip_parity(op: Operation) -> None:
    assert isinstance(op, copy.BarrierWaitOp)
    true = arith.ConstantOp.from_int_and_width(1, 1)
    flipped = arith.XOrIOp(op.parity, true.result)
    Rewriter.insert_op([true, flipped], InsertPoint.before(op))
    op.operands = [o if o is not op.parity else flipped.result for o in op.operands]


def fewer_groups(op: Operation) -> None:
    assert isinstance(op, copy.WaitGroupOp)
    op.properties["pending"] = IntegerAttr(op.pending.value.data + 1, op.pending.type)


def reads_only(op: Operation) -> None:
    assert isinstance(op, copy.WaitGroupOp)
    op.properties["read_only"] = UnitAttr()


def no_arrive(op: Operation) -> None:
    assert isinstance(op, copy.AsyncCopyOp)
    op.properties["arrive"] = BoolAttr.from_bool(False)


def one_more_arrival(op: Operation) -> None:
    assert isinstance(op, copy.BarrierInitOp)
    op.properties["arrivals"] = IntegerAttr(op.arrivals.value.data + 1, op.arrivals.type)


def expect_tx(delta: int) -> Callable[[Operation], None]:
    """The load's own arrival replaced by a barrier_arrive_expect_tx before it, of its box
    bytes + `delta` (a leader-tracked load would count both CTAs' boxes)."""

    def mutate(op: Operation) -> None:
        assert isinstance(op, copy.AsyncCopyOp)
        assert op.barrier is not None
        expect = copy.BarrierArriveExpectTxOp(
            op.barrier, op.barrier_index, bytes=op.box_bytes + delta
        )
        Rewriter.insert_op(expect, InsertPoint.before(op))
        op.properties["arrive"] = BoolAttr.from_bool(False)

    return mutate


def tma_ops(module: ModuleOp) -> list[Operation]:
    """The ops thread 0 issues for the block: TMA copies and bulk commits."""
    return [
        op
        for op in module.walk()
        if isinstance(op, copy.AsyncCopyOp)
        and (op.barrier is not None or not op.geometry().is_load)
        or isinstance(op, copy.CommitGroupOp)
        and op.group.data == copy.GroupKind.BULK
    ]


def role_of(op: Operation) -> tuple[copy.WarpSpecializeOp, Block] | None:
    """The copy.warp_specialize role that holds `op`, and its body."""
    for a in ancestors(op):
        if isinstance(a, copy.WarpSpecializeOp):
            body = next(r.blocks[0] for r in a.roles if r.blocks[0].is_ancestor(op))
            return a, body
    return None


def by_thread(t: int) -> Callable[[Operation], None]:
    """The op moved under `scf.if` on thread id x == t (in a role: its thread index %t)."""

    def mutate(op: Operation) -> None:
        role = role_of(op)
        ops: list[Operation] = []
        if role is None:
            tid = gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))
            ops.append(tid)
            index = tid.result
        else:
            index = role[1].args[0]
        which = arith.ConstantOp(IntegerAttr.from_index_int_value(t))
        cond = arith.CmpiOp(index, which, "eq")
        branch = scf.IfOp(cond, [], Region(Block()))
        Rewriter.insert_op([*ops, which, cond, branch], InsertPoint.before(op))
        op.detach()
        branch.true_region.block.add_ops([op, scf.YieldOp()])

    return mutate


def issuer(who: str) -> Callable[[Operation], None]:
    """The arrival made by another issuer."""

    def mutate(op: Operation) -> None:
        assert isinstance(op, copy.BarrierArriveOp)
        op.properties["issuer"] = copy.IssuerAttr(copy.Issuer(who))

    return mutate


def arrives_as(who: str) -> Callable[[ModuleOp], list[Operation]]:
    """The barrier_arrives of the kernel made by another issuer than `who`."""
    return lambda module: [
        op
        for op in module.walk()
        if isinstance(op, copy.BarrierArriveOp) and op.arriving != copy.Issuer(who)
    ]


# --- the corpus's operators (tests/analysis/corpus_mutations.py) ----------------------


def parity(value: bool) -> Callable[[Operation], None]:
    """The wait's parity replaced by a constant: the first lap's (False for a consumer's
    full barrier) or the other one, as a kernel that tracks no phase has it."""

    def mutate(op: Operation) -> None:
        assert isinstance(op, copy.BarrierWaitOp)
        const = arith.ConstantOp.from_int_and_width(int(value), 1)
        Rewriter.insert_op(const, InsertPoint.before(op))
        op.operands = [o if o is not op.parity else const.result for o in op.operands]

    return mutate


def constant_value(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def waits_not_constant(value: bool) -> Callable[[ModuleOp], list[Operation]]:
    """The barrier_waits whose parity is not already the constant `value`."""
    return lambda module: [
        op
        for op in module.walk()
        if isinstance(op, copy.BarrierWaitOp) and constant_value(op.parity) != int(value)
    ]


def arrivals(delta: int) -> Callable[[Operation], None]:
    def mutate(op: Operation) -> None:
        assert isinstance(op, copy.BarrierInitOp)
        op.properties["arrivals"] = IntegerAttr(op.arrivals.value.data + delta, op.arrivals.type)

    return mutate


def inits_above_one(module: ModuleOp) -> list[Operation]:
    return [
        op
        for op in module.walk()
        if isinstance(op, copy.BarrierInitOp) and op.arrivals.value.data > 1
    ]


def expect_bytes(delta: int) -> Callable[[Operation], None]:
    def mutate(op: Operation) -> None:
        assert isinstance(op, copy.BarrierArriveExpectTxOp)
        op.properties["bytes"] = IntegerAttr(op.bytes.value.data + delta, op.bytes.type)

    return mutate


def named_threads(delta: int) -> Callable[[Operation], None]:
    """A named barrier that counts one warp more or fewer."""

    def mutate(op: Operation) -> None:
        assert isinstance(op, copy.NamedBarrierSyncOp)
        op.properties["threads"] = IntegerAttr(op.threads.value.data + delta, op.threads.type)

    return mutate


def pending(value: int) -> Callable[[Operation], None]:
    def mutate(op: Operation) -> None:
        assert isinstance(op, copy.WaitGroupOp)
        op.properties["pending"] = IntegerAttr(value, op.pending.type)

    return mutate


def next_of(op: Operation, value: SSAValue, count: int) -> SSAValue:
    """(value + 1) mod count, computed right before `op`: the next slot of a ring."""
    one = arith.ConstantOp(IntegerAttr.from_index_int_value(1))
    n = arith.ConstantOp(IntegerAttr.from_index_int_value(count))
    plus = arith.AddiOp(value, one.result)
    wrapped = arith.RemUIOp(plus.result, n.result)
    Rewriter.insert_op([one, n, plus, wrapped], InsertPoint.before(op))
    return wrapped.result


def barrier_index_of(op: Operation) -> tuple[SSAValue, int] | None:
    """The barrier index an op names and the size of its barrier group (None: no index)."""
    barrier = getattr(op, "barrier", None)
    index = getattr(op, "barrier_index", None) if hasattr(op, "barrier_index") else None
    if index is None:
        index = getattr(op, "index", None)
    if barrier is None or not isinstance(index, SSAValue):
        return None
    if not isinstance(barrier.type, copy.BarrierType):
        return None
    return index, barrier.type.count.data


def barrier_indexed(module: ModuleOp) -> list[Operation]:
    """The ops that name a barrier of a group of more than one by index."""
    return [
        op
        for op in module.walk()
        if op.dialect_name() == "copy"
        and not isinstance(op, copy.BarrierInitOp)
        and (found := barrier_index_of(op)) is not None
        and found[1] > 1
    ]


def next_barrier(op: Operation) -> None:
    """The op names the next barrier of its group (index + 1 mod the group's size)."""
    found = barrier_index_of(op)
    assert found is not None
    index, count = found
    wrapped = next_of(op, index, count)
    op.operands = [o if o is not index else wrapped for o in op.operands]


def is_smem(value: SSAValue) -> bool:
    return isinstance(value.type, MemRefType) and memory_space(value.type) == SMEM


def slot_of(op: Operation) -> tuple[SSAValue, int] | None:
    """The ring slot an op addresses: a copy's SMEM slot index (the SMEM ref indexed on a
    leading dim), a peer store's or an SMEM read's first index into a ring buffer."""
    if isinstance(op, copy.AsyncCopyOp):
        ref, indices = (op.dst, op.dst_indices) if is_smem(op.dst) else (op.src, op.src_indices)
        if not is_smem(ref) or not indices:
            return None
    elif isinstance(op, copy.PeerStoreOp):
        ref, indices = op.ref, op.indices
    elif isinstance(op, memref.LoadOp | vector.LoadOp):
        ref, indices = op.operands[0], op.operands[1:]
    else:
        return None
    assert isinstance(ref.type, MemRefType)
    count = ref.type.get_shape()[0]
    if not indices or count <= 1:
        return None
    return indices[0], count


def ring_buffers(module: ModuleOp) -> set[SSAValue]:
    """The SMEM buffers that copies or peer stores fill slot by slot."""
    found: set[SSAValue] = set()
    for op in module.walk():
        if isinstance(op, copy.AsyncCopyOp | copy.PeerStoreOp) and slot_of(op) is not None:
            found.add(op.ref if isinstance(op, copy.PeerStoreOp) else smem_ref(op))
    return found


def smem_ref(op: copy.AsyncCopyOp) -> SSAValue:
    return op.dst if is_smem(op.dst) else op.src


def slotted(module: ModuleOp) -> list[Operation]:
    """The copies and peer stores that fill a ring's slot, and the reads of a ring's slot."""
    rings = ring_buffers(module)
    return [
        op
        for op in module.walk()
        if slot_of(op) is not None
        and (
            isinstance(op, copy.AsyncCopyOp | copy.PeerStoreOp)
            or isinstance(op, memref.LoadOp | vector.LoadOp)
            and op.operands[0] in rings
        )
    ]


def next_slot(op: Operation) -> None:
    """The op addresses the next slot of its ring (slot + 1 mod the ring's size)."""
    found = slot_of(op)
    assert found is not None
    index, count = found
    wrapped = next_of(op, index, count)
    position = next(i for i, o in enumerate(op.operands) if o is index)
    operands = list(op.operands)
    operands[position] = wrapped
    op.operands = operands


def reads_smem(op: Operation) -> bool:
    """`op` or an op nested in it reads SMEM (a thread's load, a TMA store's source)."""
    for o in op.walk():
        if isinstance(o, memref.LoadOp | vector.LoadOp) and is_smem(o.operands[0]):
            return True
        if isinstance(o, copy.AsyncCopyOp) and is_smem(o.src):
            return True
    return False


def first_read_before(op: Operation) -> Operation | None:
    """The first op of `op`'s block, after the block's last barrier_wait before `op`, that
    reads SMEM, if every operand of `op` is defined before it."""
    block = op.parent_block()
    assert block is not None
    ops = list(block.ops)
    here = ops.index(op)
    start = max((i + 1 for i in range(here) if isinstance(ops[i], copy.BarrierWaitOp)), default=0)
    for i in range(start, here):
        if reads_smem(ops[i]):
            defined = {r for o in ops[i:here] for r in o.results}
            return None if any(v in defined for v in op.operands) else ops[i]
    return None


def releases(module: ModuleOp) -> list[Operation]:
    """The arrivals (local or on a peer) that follow reads of SMEM in their block."""
    return [
        op
        for op in module.walk()
        if isinstance(op, copy.BarrierArriveOp | copy.PeerArriveOp)
        and first_read_before(op) is not None
    ]


def release_early(op: Operation) -> None:
    """The release moved above the reads it should follow."""
    read = first_read_before(op)
    assert read is not None
    op.detach()
    Rewriter.insert_op(op, InsertPoint.before(read))


def ring_loops(module: ModuleOp) -> list[Operation]:
    """The scf.for loops that hold copy-protocol ops."""
    return [
        op
        for op in module.walk()
        if isinstance(op, scf.ForOp) and any(o.dialect_name() == "copy" for o in op.body.walk())
    ]


def loop_bound(delta: int) -> Callable[[Operation], None]:
    """The loop's upper bound changed by `delta` (the one loop only)."""

    def mutate(op: Operation) -> None:
        assert isinstance(op, scf.ForOp)
        step = arith.ConstantOp(IntegerAttr.from_index_int_value(abs(delta)))
        kind = arith.AddiOp if delta > 0 else arith.SubiOp
        bound = kind(op.ub, step.result)
        Rewriter.insert_op([step, bound], InsertPoint.before(op))
        op.operands = [bound.result if o is op.ub else o for o in op.operands]

    return mutate
