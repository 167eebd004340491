"""Lowers the `copy` dialect to the `nvvm` dialect (plus `llvm`, `scf` and casts).

The pass works kernel by kernel. For each function that holds copy ops it first lays out the
kernel's shared memory (every `copy.alloc_smem` buffer, every barrier group and the TMEM
address slots, in one dynamic-shared-memory arena, each at its alignment), emits a prologue
(the arena's base, the elected thread, the thread count), appends an i64 parameter per
size of a dynamic array that its cp.async copies and thread accesses read
(`dynamic_shapes`), and one tensor-map parameter per distinct TMA descriptor the
kernel's copies need (each L2 cache policy
without a documented encoding is made once, after the prologue, by `createpolicy`); once the
copies are lowered, the elected thread prefetches each tensor map at the kernel's entry
(`prefetch_tensormaps`, unless the kernel has `copy.prefetch_tensormaps = false`). The
kernel ABI (its parameters, block, cluster and shared-memory size) is recorded on the
function as `copy.abi` for the runtime. Then one pattern per op rewrites the copies, each
elected op into an `scf.if` on its group's elected thread; consecutive ones on the same
thread become one (`merge_adjacent_elected`).

With `debug_guards`, the ops also check at run time what the verifier cannot prove for
values known only then (TMA coordinates, barrier indices) and bound every `barrier_wait`,
printing the rule id and trapping where a check fails (`guards`). Without it the emitted code
has no guard.

The modules, one per op family: `emit` (the llvm builders), `kernel` (the kernel's facts,
arena, prologue and ABI), `dynamic_shapes` (the sizes of dynamic arrays the kernel reads:
its size parameters, which the memref and vector lowerings read too), `copies` (the
patterns of the copies and prefetches) and a module per implementation of them: `tma` (TMA
copies and prefetches, their tensor maps), `bulk` (bulk non-tensor copies), `cp_async` and
`im2col` (both forms of an im2col load); `groups` (bulk and cp.async groups, fences),
`barriers` (mbarriers and named barriers), `roles` (`copy.warp_specialize`), `smem`, `tmem`,
`dsmem` (a peer CTA's SMEM), `tensormap` (maps in global memory), `assume` (facts: dropped,
or checked), and `guards` (the debug guards); this one holds the pass.

Who issues what (the semantics the verifier's rules assume): the issuing group of an op is
the block, or inside `copy.warp_specialize` the role that holds it (`roles`: each role's body
is lowered in place, then the block is split by warp index);
- TMA copies, prefetches, `barrier_arrive_expect_tx` and bulk-group commit/wait are issued by
  the group's elected thread (thread 0 of the block; one lane of a role's first warp, by
  `elect.sync`); a bulk `wait_group` ends with the group's barrier (`bar.sync 0`, or the
  role's named barrier) so that every thread of the group may then reuse the SMEM;
- cp.async copies are issued by all threads of the group together, 4-, 8- or 16-byte chunks
  each; a cp.async `wait_group` ends with the group's barrier;
- `barrier_init` is done by the elected thread, then fenced and synchronized (cluster-wide when
  the kernel has a cluster); `barrier_arrive` and `barrier_wait` are executed by every thread
  that reaches them;
- `fence_async_shared` is `fence.proxy.async.shared::cta` followed by a block barrier;
- `peer_store` is executed by every thread that reaches it, `peer_copy` and `peer_arrive`
  by the group's elected thread;
- `tensormap_replace` and the tensor-map fences are issued by the group's elected thread;
- `grid_dependency_wait` and `launch_dependents` are `griddepcontrol.wait` and
  `griddepcontrol.launch_dependents`, executed by every thread that reaches them; a kernel
  that waits is `grid_dependent` in its ABI;
- `try_cancel` is `clusterlaunchcontrol.try_cancel`, issued by the group's elected thread;
  `query_cancel` loads the 16-byte response and decodes it, by every thread that reaches it.
- the tensor-map prefetches are issued by the block's elected thread, the createpolicy of a
  cache policy by every thread, both at the kernel's entry.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func, llvm, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from copy_dialect import ops as copy
from copy_dialect.grid_dependency import is_wait as is_grid_wait
from facts.abi import KernelAbi
from facts.target import Target, UnknownTarget, target_named
from passes.abi import abi_attr
from passes.convert_copy_to_nvvm.assume import LowerAssume
from passes.convert_copy_to_nvvm.barriers import (
    LowerBarrierArrive,
    LowerBarrierArriveDrop,
    LowerBarrierArriveExpectTx,
    LowerBarrierCompleteTx,
    LowerBarrierExpectTx,
    LowerBarrierInit,
    LowerBarrierInval,
    LowerBarrierReinit,
    LowerBarrierTest,
    LowerBarrierWait,
    LowerNamedBarrier,
)
from passes.convert_copy_to_nvvm.cluster_launch_control import LowerQueryCancel, LowerTryCancel
from passes.convert_copy_to_nvvm.copies import (
    LowerAsyncCopy,
    LowerGather4,
    LowerGather4Prefetch,
    LowerIm2colLoad,
    LowerPrefetch,
    LowerScatter4,
)
from passes.convert_copy_to_nvvm.descriptors import (
    LowerMatrixDescriptor,
    LowerMmaInstructionDescriptor,
)
from passes.convert_copy_to_nvvm.dsmem import (
    LowerClusterSync,
    LowerPeerArrive,
    LowerPeerCopy,
    LowerPeerStore,
)
from passes.convert_copy_to_nvvm.emit import Arith, Emit, fail
from passes.convert_copy_to_nvvm.grid_dependency import (
    LowerGridDependencyWait,
    LowerLaunchDependents,
)
from passes.convert_copy_to_nvvm.groups import (
    LowerCommitGroup,
    LowerFence,
    LowerWaitGroup,
)
from passes.convert_copy_to_nvvm.guards import Guards
from passes.convert_copy_to_nvvm.kernel import (
    ARENA_ALIGNMENT,
    ARENA_SYMBOL,
    Kernel,
    enclosing_function,
    kernel_abi,
    open_kernel,
)
from passes.convert_copy_to_nvvm.matrix import LowerLdmatrix, LowerStmatrix
from passes.convert_copy_to_nvvm.roles import LowerWarpSpecialize
from passes.convert_copy_to_nvvm.smem import LowerAllocSmem
from passes.convert_copy_to_nvvm.tensormap import (
    LowerTensorMapFenceAcquire,
    LowerTensorMapFenceRelease,
    LowerTensorMapGlobal,
    LowerTensorMapReplace,
)
from passes.convert_copy_to_nvvm.tmem import (
    LowerSmemToTmem,
    LowerTmemAlloc,
    LowerTmemDealloc,
    LowerTmemLoad,
    LowerTmemRelinquish,
    LowerTmemShift,
    LowerTmemSlice,
    LowerTmemStore,
    LowerTmemWait,
)
from passes.llvm_types import SHARED
from passes.rewrite import apply_patterns

__all__ = ["Arith", "ConvertCopyToNVVMPass", "Emit", "fail"]

TMEM_OPS = (
    copy.TmemAllocOp,
    copy.TmemDeallocOp,
    copy.TmemRelinquishOp,
    copy.TmemLoadOp,
    copy.TmemStoreOp,
    copy.TmemWaitOp,
    copy.SmemToTmemOp,
    copy.TmemShiftOp,
    copy.TmemSliceOp,
)


ROLE_TMEM_OPS = (
    copy.TmemLoadOp,
    copy.TmemStoreOp,
    copy.TmemWaitOp,
    copy.SmemToTmemOp,
    copy.TmemShiftOp,
    copy.TmemSliceOp,
)
"""The TMEM ops lowered inside a role: loads and stores by each warp at its lane quarter,
their waits, tcgen05.cp and tcgen05.shift by the role's elected thread, slices (an
address). (Alloc and dealloc are the block's: W8 keeps them out of roles.)"""


def check_roles(fn: func.FuncOp) -> None:
    """What the lowering of roles does not do yet: the other TMEM ops inside a role."""
    for ws in fn.walk():
        if isinstance(ws, copy.WarpSpecializeOp):
            for inner in ws.walk():
                if isinstance(inner, TMEM_OPS) and not isinstance(inner, ROLE_TMEM_OPS):
                    raise fail(
                        inner,
                        "inside a role of copy.warp_specialize is not lowered yet: TMEM ops "
                        "(sm_100a) are issued by the block; move it out of the roles",
                    )


PREFETCH_TENSORMAPS = "copy.prefetch_tensormaps"
"""The kernel attribute (a bool) that turns the tensor-map prefetch off for one kernel."""


def prefetches_tensormaps(fn: func.FuncOp) -> bool:
    """Whether kernel `fn` prefetches its tensor maps: unless it says `false`."""
    attr = fn.attributes.get(PREFETCH_TENSORMAPS)
    return not (isinstance(attr, IntegerAttr) and attr.value.data == 0)


def kernel_op(op: Operation) -> bool:
    """Whether `op` makes its function a kernel: a copy op other than `copy.assume` (a fact
    about a value, which a device function may state too)."""
    return op.dialect_name() == "copy" and not isinstance(op, copy.AssumeOp)


@dataclass(frozen=True)
class ConvertCopyToNVVMPass(ModulePass):
    """Lowers the `copy` dialect to `nvvm` for the module's target (or `target`)."""

    name = "convert-copy-to-nvvm"

    target: str = ""
    """Overrides the module's `copy.target` (sm_80, sm_90a, sm_100a, ...)."""

    debug_guards: bool = False
    """Emits the device-side checks of `guards` (TR12, TR13, P9, AS3, and P6's bounded
    waits)."""

    prefetch_tensormaps: bool = True
    """The elected thread prefetches each tensor map at the kernel's entry; a kernel with
    `copy.prefetch_tensormaps = false` opts out."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        self.lower(op, self.resolve_target(op))

    def lower(self, op: builtin.ModuleOp, target: Target) -> dict[str, KernelAbi]:
        """The pass for `target` (`apply` resolves it from the option or the module; the
        in-process compile, `passes.pipeline.compile_module`, once per compile and passes it
        on): the ABI of each kernel it lowers, by name, which it also records on the kernel
        as `copy.abi` for a later copy-opt run (`passes.abi.kernel_abis` reads it there)."""
        for inner in op.walk():
            if inner.dialect_name() == "copy" and enclosing_function(inner) is None:
                raise fail(inner, "must be inside a func.func kernel to be lowered")
        guards = Guards() if self.debug_guards else None
        kernels: dict[func.FuncOp, Kernel] = {}
        for fn in op.walk():
            # A `gpu.kernel` function with no copy op is a kernel too (its ABI record is
            # what the runtime launches by), and so is one that waits for its predecessor
            # with upstream NVVM's griddepcontrol (it is launched with PDL).
            if isinstance(fn, func.FuncOp) and (
                "gpu.kernel" in fn.attributes
                or any(kernel_op(o) or is_grid_wait(o) for o in fn.walk())
            ):
                check_roles(fn)
                kernels[fn] = open_kernel(target, fn, guards)
        apply_patterns(
            op,
            [
                LowerAllocSmem(kernels),
                LowerBarrierInit(kernels),
                LowerBarrierArrive(kernels),
                LowerBarrierArriveDrop(kernels),
                LowerBarrierExpectTx(kernels),
                LowerBarrierCompleteTx(kernels),
                LowerBarrierInval(kernels),
                LowerBarrierReinit(kernels),
                LowerBarrierArriveExpectTx(kernels),
                LowerBarrierWait(kernels),
                LowerBarrierTest(kernels),
                LowerNamedBarrier(kernels),
                LowerFence(kernels),
                LowerCommitGroup(kernels),
                LowerWaitGroup(kernels),
                LowerPrefetch(kernels),
                LowerAsyncCopy(kernels),
                LowerIm2colLoad(kernels),
                LowerGather4(kernels),
                LowerScatter4(kernels),
                LowerGather4Prefetch(kernels),
                LowerTensorMapGlobal(kernels),
                LowerTensorMapReplace(kernels),
                LowerTensorMapFenceRelease(kernels),
                LowerTensorMapFenceAcquire(kernels),
                LowerTmemAlloc(kernels),
                LowerTmemDealloc(kernels),
                LowerTmemRelinquish(kernels),
                LowerTmemShift(kernels),
                LowerTmemSlice(kernels),
                LowerTmemLoad(kernels),
                LowerTmemStore(kernels),
                LowerTmemWait(kernels),
                LowerSmemToTmem(kernels),
                LowerPeerStore(kernels),
                LowerPeerCopy(kernels),
                LowerPeerArrive(kernels),
                LowerClusterSync(),
                LowerGridDependencyWait(),
                LowerLaunchDependents(),
                LowerTryCancel(kernels),
                LowerQueryCancel(kernels),
                LowerLdmatrix(),
                LowerStmatrix(),
                LowerMatrixDescriptor(),
                LowerMmaInstructionDescriptor(),
                LowerAssume(guards),
            ],
            # The prologue's values get their uses only as the copies are rewritten.
            dce=False,
        )
        # Every map is known once the copies are lowered; the prefetches go to the kernel's
        # entry before the roles split the block.
        for fn, kernel in kernels.items():
            if self.prefetch_tensormaps and prefetches_tensormaps(fn):
                kernel.prefetch_tensor_maps()
        for fn, kernel in kernels.items():
            merge_adjacent_elected(fn, {kernel.leader, *(g.leader for g in kernel.roles.values())})
        # The roles split the block once the ops inside them are lowered for their role.
        apply_patterns(op, [LowerWarpSpecialize(kernels)], dce=False)
        abis: dict[str, KernelAbi] = {}
        for fn, kernel in kernels.items():
            abi = abis[fn.sym_name.data] = kernel_abi(kernel)
            fn.attributes["copy.abi"] = abi_attr(abi)
            # Copies need the kernel's tensor-map parameters and SMEM arena: a function
            # that holds them is a kernel entry.
            fn.attributes["gpu.kernel"] = UnitAttr()
        if any(kernel.arena_bytes for kernel in kernels.values()):
            global_op = llvm.GlobalOp(
                llvm.LLVMArrayType(0, IntegerType(8)),
                ARENA_SYMBOL,
                "external",
                addr_space=SHARED,
                alignment=ARENA_ALIGNMENT,
            )
            op.body.block.insert_op_before(global_op, op.body.block.first_op)  # type: ignore[arg-type]
        if guards is not None and (guard_ops := guards.module_ops()):
            op.body.block.insert_ops_before(guard_ops, op.body.block.first_op)  # type: ignore[arg-type]
        return abis

    def resolve_target(self, module: builtin.ModuleOp) -> Target:
        name = copy.module_target(module, self.target or None)
        if name is None:
            raise PassFailedException(
                "convert-copy-to-nvvm needs a target: give the module "
                'copy.target = #copy.target<"sm_90a">, or pass --target sm_90a to '
                'copy-opt (target=sm_90a to the pass: "convert-copy-to-nvvm{target=sm_90a}")'
            )
        try:
            return target_named(name)
        except UnknownTarget as exc:
            raise PassFailedException(str(exc)) from None


def merge_adjacent_elected(fn: func.FuncOp, leaders: set[SSAValue]) -> None:
    """One elected region for consecutive ones: an `scf.if` on a group's elected thread
    (`leaders`; no results, no else) right after one on the same condition takes the
    second's ops, as MLIR's scf.if canonicalization combines ifs on one condition. Nothing
    runs between the two, so the thread that passes one passes the other: the TMA store,
    its commit and its wait become one branch of the elected thread, not three. The
    kernel's own ifs and the predicated copies' (elected and predicate) stay as they are."""
    elected = [op for op in fn.walk() if isinstance(op, scf.IfOp) and op.cond in leaders]
    for block in dict.fromkeys(op.parent_block() for op in elected):
        previous: scf.IfOp | None = None
        for current in list(block.ops):
            if (
                isinstance(current, scf.IfOp)
                and current.cond in leaders
                and not current.results
                and not current.false_region.blocks
            ):
                if previous is not None and previous.cond is current.cond:
                    into = previous.true_region.block
                    moved = list(current.true_region.block.ops)[:-1]  # not its yield
                    for moving in moved:
                        moving.detach()
                    into.insert_ops_before(moved, into.last_op)
                    current.detach()
                    current.erase()
                    continue
                previous = current
            else:
                previous = None
