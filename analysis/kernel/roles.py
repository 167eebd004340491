"""Roles and barriers across a kernel: the named barriers that `copy.warp_specialize`
gives its roles (rule W11), and the block barriers (`gpu.barrier`, bar.sync 0) that only
one role's warps would reach (W8)."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.ir import Operation

from analysis.kernel.kernel import Kernel
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.roles import (
    NamedBarrierArriveOp,
    NamedBarrierSyncOp,
    WarpSpecializeOp,
    check_block_wide,
)


def check_role_barriers(kernel: Kernel) -> Iterator[tuple[Operation, Exception]]:
    """No role of a `copy.warp_specialize` of `kernel` holds a `gpu.barrier`: reported at
    the `copy.warp_specialize`, for its first such barrier."""
    for ws in kernel.instances(WarpSpecializeOp):
        barrier = next(
            (op for region in ws.roles for op in region.walk() if op.name == "gpu.barrier"), None
        )
        if barrier is None:
            continue
        try:
            check_block_wide(barrier, "gpu.barrier (bar.sync 0)")
        except Error as error:
            yield ws, error


def check_named_barrier_ids(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """No named barrier of `kernel` takes an id that `copy.warp_specialize` gives a role
    (1..the most roles of one in the kernel)."""
    named = kernel.instances(NamedBarrierSyncOp, NamedBarrierArriveOp)
    if not named:
        return
    roles = max((len(op.roles) for op in kernel.instances(WarpSpecializeOp)), default=0)
    for op in named:
        barrier = op.id.value.data
        # rule: W11
        if 0 < barrier <= roles:
            yield (
                op,
                Error(
                    f"named barrier {barrier} is the barrier of role {barrier - 1} of the "
                    f"kernel's copy.warp_specialize (ids 1..{roles} are the roles')",
                    note=f"use an id in {roles + 1}..15",
                ),
            )
