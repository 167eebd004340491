"""cp.async groups in a kernel for a TMA target (rule A8): a `copy.wait_group cp_async` on
sm_90+ waits for the kernel's cp.async copies, so the kernel must have one."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.ir import Operation

from analysis.kernel.kernel import Kernel
from copy_dialect.attributes import GroupKind, Implementation
from copy_dialect.copies import AsyncCopyOp
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.groups import WaitGroupOp
from copy_dialect.verify_common import enclosing_target


def check_cp_async_waits(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """Each cp.async wait of `kernel`, on a target with TMA, waits for cp.async copies of
    the kernel."""
    waits = [op for op in kernel.instances(WaitGroupOp) if op.group.data == GroupKind.CP_ASYNC]
    if not waits:
        return
    uses_cp_async = any(
        op.resolved_implementation() == Implementation.CP_ASYNC
        for op in kernel.instances(AsyncCopyOp)
    )
    for op in waits:
        target = enclosing_target(op)
        # rule: A8
        if target is not None and target.has_tma and not uses_cp_async:
            yield (
                op,
                Error(
                    "wait_gmem_to_smem is only supported on pre-Hopper GPUs, which use "
                    "cp.async for GMEM->SMEM copies.",
                    note=f"on {target.name} the kernel's loads use TMA and complete on their "
                    "barrier: wait with copy.barrier_wait, or give the loads impl cp_async",
                ),
            )
