"""The kernel rules: what holds of several ops of one kernel, checked once every op of the
kernel verified.

An op's verifier looks at its op, its operands (their types and the constants it can fold)
and what its ancestors say of it (the target, the kernel's block and cluster shape, the role
it is in). A rule about more than one op of a kernel is checked here, in one walk per fact:
the SMEM arena's budget (TR6, `smem`); on a barrier group, the bytes a phase expects against
those its copies deliver, nocomplete arrivals against the group's arrival counts, and
cp.async arrivals against transaction bytes (TR16, MB2, MB12, `barriers`); the fence between
the threads' SMEM writes and a TMA store (J16, `fences`); cp.async groups waited for in a
TMA kernel (A8, `groups`); the named barriers of roles and the block barriers inside roles
(W11, W8, `roles`); the TMEM columns live at once, one CTA group and no allocation after
the permit is relinquished (J19, J28, J29, `tmem`); function names that are
PTX identifiers (AT2, `names`); the SMEM effects ops declare (`copy.effects`), on SMEM
operands of ops the protocol analysis does not own (FX1, `effects`); the wide thread
accesses of swizzled SMEM inside one 16-byte unit (SV1, `vectors`); under programmatic
dependent launch, the GMEM accesses after `copy.grid_dependency_wait` and the arguments'
`copy.predecessor_access` marks (GD2-GD4, `grid_dependency`); an upstream
`nvvm.tcgen05.mma`'s scale-input-d against the target (MI8, `mma`); a tcgen05 MMA's
instruction descriptor sparse exactly when the MMA is `nvvm.tcgen05.mma.sp` (MI9, `mma`).

`kernel_errors(module)` gives each failing op with its error, as the op verifiers' errors
are given (`copy_dialect.verification.op_errors`): `analysis.verify` reports both, in op
order."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from xdsl.dialects import func, gpu
from xdsl.ir import Operation

from analysis.kernel import (
    barriers,
    effects,
    fences,
    grid_dependency,
    groups,
    mma,
    names,
    roles,
    smem,
    tmem,
    vectors,
)
from analysis.kernel.kernel import Kernel
from copy_dialect.verification import ops_of

KernelError = tuple[Operation, Exception]
"""An op and the error of a kernel rule it breaks."""

CHECKS: tuple[Callable[[Kernel], Iterable[KernelError]], ...] = (
    smem.check_arena,
    barriers.check_expected_bytes,
    barriers.check_nocomplete_arrivals,
    barriers.check_tracked_cp_async,
    fences.check_fenced_stores,
    groups.check_cp_async_waits,
    roles.check_role_barriers,
    roles.check_named_barrier_ids,
    tmem.check_live_columns,
    tmem.check_one_cta_group,
    tmem.check_alloc_after_relinquish,
    names.check_function_name,
    effects.check_effect_declarations,
    vectors.check_swizzled_vectors,
    grid_dependency.check_grid_dependency,
    mma.check_scale_input_d,
    mma.check_sparse_descriptor,
)
"""Each kernel rule, as a function of the kernel that yields the failing ops."""


def kernels(module: Operation) -> Iterator[Operation]:
    """The functions of `module` (a kernel's rules hold within the function around its ops,
    as the op verifiers' `enclosing_kernel` finds it)."""
    for op in ops_of(module):
        # (a function has its body region, or failed its own verifier and holds no ops:
        # testing `regions` first spares the costlier isinstance on every other op)
        if op.regions and isinstance(op, func.FuncOp | gpu.FuncOp):
            yield op


def kernel_errors(module: Operation, skip: Iterable[Operation] = ()) -> list[KernelError]:
    """The errors of the kernel rules in `module`'s kernels, but those of `skip` (kernels
    holding an op whose own verifier failed: their rules read well-formed ops only)."""
    skipped = {id(k) for k in skip}
    errors: list[KernelError] = []
    for op in kernels(module):
        if id(op) not in skipped:
            kernel = Kernel.of(op)
            errors += [error for check in CHECKS for error in check(kernel)]
    return errors
