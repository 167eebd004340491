"""What the ops on one barrier group must agree on: the bytes a phase expects against those
its copies deliver (rules TR16, D10), a nocomplete arrival against the group's arrival counts
(MB2), and cp.async arrivals against transaction bytes (MB12). The arrivals each op makes
are the dialect's (`copy_dialect.arrivals`).

TR16 holds within one block: `copy.barrier_arrive_expect_tx` counts the bytes of the copies
between the previous and the next wait on its barrier. What one block cannot tell (dynamic
indices, phases across blocks, copies that arrive themselves) is the protocol analysis's
(P5)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.ir import Block, Operation, SSAValue

from analysis.kernel.kernel import Kernel
from copy_dialect.arrivals import PER_THREAD_ARRIVAL, arrivals_of
from copy_dialect.attributes import BarrierType
from copy_dialect.barriers import (
    BarrierArriveExpectTxOp,
    BarrierArriveOp,
    BarrierInitOp,
    BarrierWaitOp,
    Reinitializes,
)
from copy_dialect.copies import AsyncCopyOp
from copy_dialect.dsmem import TxDelivery
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.gather4 import Gather4Op
from copy_dialect.im2col import Im2colLoadOp
from copy_dialect.mbarriers import BarrierArriveDropOp
from copy_dialect.verify_common import constant_int


def check_expected_bytes(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """Each `copy.barrier_arrive_expect_tx` of `kernel` expects the bytes its phase's copies
    deliver, where its block tells them. A barrier group another CTA's multicast gather4
    completes bytes on receives them from no copy of its block: the protocol analysis,
    which models every CTA, counts them (P5)."""
    remote = {op.barrier for op in kernel.instances(Gather4Op) if op.multicast is not None}
    for block in _blocks(kernel):
        for op, delivered in phase_bytes(block).items():
            if op.barrier in remote:
                continue
            expected = op.bytes.value.data
            # rule: TR16, D10
            if delivered is not None and delivered != expected:
                yield (
                    op,
                    Error(
                        f"expect_tx of {expected} bytes does not match the {delivered} bytes the "
                        "copies on this barrier deliver",
                        note="a larger count hangs the waiters, a smaller one releases them before "
                        f"the data has landed: expect {delivered}",
                    ),
                )


def check_nocomplete_arrivals(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """A nocomplete arrival (`copy.barrier_arrive`, `copy.barrier_arrive_drop`) leaves the
    phase an arrival to go: its count is below every arrival count its group's init and
    reinits give."""
    for op in kernel.instances(BarrierArriveOp, BarrierArriveDropOp):
        if op.nocomplete is None:
            continue
        count = arrivals_of(op).each
        arrivals = group_arrivals(op.barrier)
        # rule: MB2
        if arrivals is not None and count >= arrivals:
            yield (
                op,
                Error(
                    f"a nocomplete arrival must leave the phase one arrival to go: expected a "
                    f"count below the barrier's {arrivals} arrivals, got {count}",
                    note=f"a count of {count} takes the phase's pending count to 0, which "
                    "completes it (undefined with .noComplete): "
                    + (
                        f"use count {arrivals - 1} or less, or drop nocomplete"
                        if arrivals > 1
                        else "drop nocomplete (a barrier of 1 arrival completes at any arrival)"
                    ),
                ),
            )


def group_arrivals(barrier: SSAValue) -> int | None:
    """The largest arrival count a phase of the group can expect: its barrier_init's and its
    reinits' (None when the group does not come from a barrier_init here)."""
    init = barrier.owner
    if not isinstance(init, BarrierInitOp):
        return None
    counts = [init.arrivals.value.data]
    for use in barrier.uses:
        if use.operation.has_trait(Reinitializes):
            counts.append(use.operation.arrivals.value.data)  # type: ignore[attr-defined]
    return max(counts)


TX_EXPECTING = ("copy.barrier_arrive_expect_tx", "copy.barrier_expect_tx")
"""The ops that give a barrier phase transaction bytes to expect (MB12)."""


def check_tracked_cp_async(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """No op gives transaction bytes to a barrier group that cp.async copies arrive on
    (mbarrier-tracked cp.async, `copy.async_copy` or `copy.im2col_load` `impl cp_async`):
    their arrivals carry no bytes."""
    expecting: dict[SSAValue, Operation | None] = {}
    for op in kernel.instances(AsyncCopyOp, Im2colLoadOp, Gather4Op):
        barrier = op.geometry().barrier
        if barrier is None:
            continue
        if barrier not in expecting:
            expecting[barrier] = next(
                (u.operation for u in barrier.uses if u.operation.name in TX_EXPECTING), None
            )
        user = expecting[barrier]
        # rule: MB12
        if user is not None and arrivals_of(op) == PER_THREAD_ARRIVAL:
            yield (
                op,
                Error(
                    f"a cp.async copy arrives on this barrier group, which {user.name} gives "
                    "transaction bytes: cp.async copies deliver no bytes to a barrier, only "
                    "their threads' arrivals",
                    note=f"drop the {user.name} (count the copies' arrivals, one per issuing "
                    "thread, in the barrier's arrivals), or give the TMA loads a barrier group "
                    "of their own",
                ),
            )


def _blocks(kernel: Kernel) -> Iterator[Block]:
    """The blocks of `kernel` that hold a `copy.barrier_arrive_expect_tx`."""
    seen: set[int] = set()
    for op in kernel.instances(BarrierArriveExpectTxOp):
        if op.parent is not None:
            if id(op.parent) not in seen:
                seen.add(id(op.parent))
                yield op.parent


@dataclass
class _Phase:
    """A phase of one barrier in a block: the copies on it since the previous wait on it."""

    start: int
    """Where the phase starts: the position of the previous wait in the block, -1 for none."""
    bytes: int = 0
    """What the copies that do not arrive themselves deliver."""
    arriving: bool = False
    """Whether a copy that arrives itself is in the phase."""
    expecting: list[BarrierArriveExpectTxOp] = field(default_factory=list)
    """The phase's arrive_expect_tx ops."""


def phase_bytes(block: Block) -> dict[BarrierArriveExpectTxOp, int | None]:
    """For each `copy.barrier_arrive_expect_tx` of `block`, the bytes the copies of its
    barrier phase deliver: those between the previous and the next wait on the same barrier
    (rules TR16, D10). None when that cannot be told from this block: a dynamic index (its
    own, or of a copy or wait on the same group in the phase), no next wait here, a copy that
    arrives itself, or a use of the group inside a nested region. One pass over the
    block."""
    delivered: dict[BarrierArriveExpectTxOp, int | None] = {}
    phases: dict[tuple[SSAValue, int], _Phase] = {}
    # Per barrier group, the last position where a dynamic index or a nested use of the
    # group makes every phase across it unknowable.
    unknown_at: dict[SSAValue, int] = {}

    def close(key: tuple[SSAValue, int]) -> None:
        phase = phases.pop(key, None)
        if phase is None:
            return
        unknown = unknown_at.get(key[0])
        known = not phase.arriving and (unknown is None or unknown < phase.start)
        for op in phase.expecting:
            delivered[op] = phase.bytes if known else None

    for position, op in enumerate(block.ops):
        if isinstance(op, BarrierWaitOp):
            barrier, index = op.barrier_operands()
            at = _barrier_index(index)
            if at is None:
                unknown_at[barrier] = position
            else:
                close((barrier, at))
                phases[(barrier, at)] = _Phase(position)
        elif isinstance(op, AsyncCopyOp | Im2colLoadOp | Gather4Op):
            g = op.geometry()
            if g.barrier is None:
                continue
            at = _barrier_index(g.barrier_index)
            if at is None:
                unknown_at[g.barrier] = position
                continue
            phase = phases.setdefault((g.barrier, at), _Phase(-1))
            if arrivals_of(op) is not None:
                phase.arriving = True
            else:
                # A collective load credits each CTA's barrier with the whole box.
                phase.bytes += g.credited_bytes
        elif (peer := op.get_trait(TxDelivery)) is not None:
            # A DSMEM write: what this CTA sends its peer, its own barrier receives.
            group, index, nbytes = peer.delivery(op)
            at = _barrier_index(index)
            if at is None or nbytes is None:
                unknown_at[group] = position
            else:
                phases.setdefault((group, at), _Phase(-1)).bytes += nbytes
        elif isinstance(op, BarrierArriveExpectTxOp):
            at = _barrier_index(op.index)
            delivered[op] = None
            if at is not None:
                phases.setdefault((op.barrier, at), _Phase(-1)).expecting.append(op)
        elif op.name in TX_OPS:
            # Bytes that no copy delivers, or a phase's life cut short: not this check's.
            unknown_at[op.operands[0]] = position
        elif op.regions:
            for inner in op.walk():
                for operand in inner.operands:
                    if isinstance(operand.type, BarrierType):
                        unknown_at[operand] = position
    # A phase that no wait in the block ends stays unknown (None).
    return delivered


TX_OPS = frozenset(
    {
        "copy.barrier_arrive_drop",
        "copy.barrier_expect_tx",
        "copy.barrier_complete_tx",
        "copy.barrier_inval",
        "copy.barrier_reinit",
    }
)
"""The mbarriers.py ops that change a phase's bytes or end the barrier's life: a phase with
one is left to the protocol analysis (P5), which counts their bytes."""


def _barrier_index(index: SSAValue | None) -> int | None:
    """The constant index of a barrier in its group (a missing index means barrier 0)."""
    return 0 if index is None else constant_int(index)
