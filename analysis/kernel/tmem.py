"""TMEM in a kernel: the columns live at once (rule J19): each `copy.tmem_alloc` with the
allocations before it (in walk order) that no `copy.tmem_dealloc` has freed yet fits in
the target's TMEM columns of a CTA (`copy_dialect.tmem.tmem_capacity`: 512 on sm_100a/f,
sm_103a; a `cta_group 2` allocation takes its columns in each CTA of the pair, so the
budget is the same); one CTA group for every tcgen05 op of the kernel (J28, the PTX ISA:
"All tcgen05 instructions within a kernel must specify the same value for the .cta_group
qualifier"); and no allocation after the CTA relinquished its permit (J29)."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from analysis.kernel.kernel import Kernel
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.ops import (
    SmemToTmemOp,
    TmemAllocOp,
    TmemDeallocOp,
    TmemRelinquishOp,
    TmemShiftOp,
    cta_group_of,
)
from copy_dialect.tmem import tmem_capacity, tmem_columns

GROUPED_OPS = (TmemAllocOp, TmemDeallocOp, TmemRelinquishOp, SmemToTmemOp, TmemShiftOp)
"""The copy ops that name a CTA group (`cta_group`; 1 when they name none)."""


def check_live_columns(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """Each allocation of `kernel` fits beside the columns still allocated before it."""
    live: dict[SSAValue, int] = {}
    for op in kernel.instances(TmemAllocOp, TmemDeallocOp):
        if isinstance(op, TmemDeallocOp):
            live.pop(op.tmem, None)
        if not isinstance(op, TmemAllocOp):
            continue
        assert isinstance(t := op.result.type, MemRefType)
        ncols = tmem_columns(t)
        total = sum(live.values()) + ncols
        capacity = tmem_capacity(op)
        # rule: J19
        if total > capacity:
            yield (
                op,
                Error(
                    "The number of allocated columns must be less than or equal to "
                    f"{capacity} but got: {total}",
                    note=f"{total - ncols} columns are still allocated here and this allocation "
                    f"adds {ncols}: free earlier TMEM with copy.tmem_dealloc first, or allocate "
                    "fewer columns",
                ),
            )
        live[op.result] = ncols


def check_one_cta_group(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """Every tcgen05 op of `kernel` names the CTA group of its first one."""
    ops = kernel.instances(*GROUPED_OPS)
    if not ops:
        return
    first, group = ops[0], cta_group_of(ops[0])
    for op in ops[1:]:
        mine = cta_group_of(op)
        # rule: J28
        if mine != group:
            yield (
                op,
                Error(
                    f"{op.name} has cta_group {mine}, but the kernel's first tcgen05 op "
                    f"({first.name}) has cta_group {group}: every tcgen05 instruction of a "
                    "kernel names the same .cta_group",
                    note=(f"give it cta_group {group}" if group != 1 else "drop cta_group")
                    + f", or change the kernel's other tcgen05 ops to cta_group {mine}",
                ),
            )


def check_alloc_after_relinquish(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """No `copy.tmem_alloc` follows a `copy.tmem_relinquish` in walk order or in a loop
    around both (its next iteration)."""
    relinquished: list[Operation] = []
    for op in kernel.instances(TmemAllocOp, TmemRelinquishOp):
        if isinstance(op, TmemRelinquishOp):
            relinquished.append(op)
            continue
        later = next(iter(relinquished), None)
        looped = next((r for r in kernel.instances(TmemRelinquishOp) if shares_loop(op, r)), None)
        culprit = later or looped
        # rule: J29
        if culprit is not None:
            where = "before it" if later is not None else "in a loop around it"
            yield (
                op,
                Error(
                    f"copy.tmem_alloc after copy.tmem_relinquish ({where}): the CTA gave up "
                    "its permit to allocate TMEM, and tcgen05.alloc after "
                    "tcgen05.relinquish_alloc_permit is undefined",
                    note="move copy.tmem_relinquish after the kernel's last copy.tmem_alloc "
                    "(out of the loop), or drop it: the lowering relinquishes after the last "
                    "allocation",
                ),
            )


def shares_loop(a: Operation, b: Operation) -> bool:
    """Whether an `scf.for` or `scf.while` holds both ops."""
    loops = set()
    node = a.parent_op()
    while node is not None:
        if isinstance(node, scf.ForOp | scf.WhileOp):
            loops.add(node)
        node = node.parent_op()
    node = b.parent_op()
    while node is not None:
        if node in loops:
            return True
        node = node.parent_op()
    return False
