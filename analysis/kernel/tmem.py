"""TMEM columns live at once in a kernel (rule J19): each `copy.tmem_alloc` with the
allocations before it (in walk order) that no `copy.tmem_dealloc` has freed yet fits in
the target's TMEM columns (`copy_dialect.tmem.tmem_capacity`: 512 on sm_100a/f, sm_103a)."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from analysis.kernel.kernel import Kernel
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.tmem import TmemAllocOp, TmemDeallocOp, tmem_capacity, tmem_columns


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
