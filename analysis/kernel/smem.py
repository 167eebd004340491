"""The kernel's SMEM arena against the target's budget (rule TR6)."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.ir import Operation

from analysis.kernel.kernel import Kernel
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.smem import (
    SMEM_ARENA_ALIGNMENT,
    SmemAllocation,
    arena_layout,
    block_smem_bytes,
)
from copy_dialect.verify_common import enclosing_target


def check_arena(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """The buffers, barriers and TMEM address slots of `kernel`, laid out as the lowering
    places them, fit the target's SMEM; reported at the kernel's first allocation."""
    target = enclosing_target(kernel.op)
    if target is None:
        return
    allocations = kernel.with_trait(SmemAllocation)
    if not allocations:
        return
    first = allocations[0]
    _, total = arena_layout(kernel.op, allocations)
    launch = block_smem_bytes(total)
    # rule: TR6
    if launch > target.max_smem_bytes:
        yield (
            first,
            Error(
                f"the kernel's SMEM buffers and barriers take {total} bytes ({launch} with the "
                f"{SMEM_ARENA_ALIGNMENT}-byte alignment pad of the arena), more than the "
                f"{target.max_smem_bytes} bytes a block can use on {target.name}",
                note="use fewer pipeline stages or smaller boxes",
            ),
        )
