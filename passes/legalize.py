"""`copy-legalize{target=sm_XX}`: rewrites copy-dialect IR written for one target into IR
that verifies and runs on another, wherever the semantics can be kept; what it cannot keep
is a diagnostic at the op (rules LG1-LG8, `copy_dialect.portability`).

On a target without TMA (sm_80, sm_86, sm_89):

- a TMA load (`impl tma` or `bulk`, or left open on a TMA target) becomes an mbarrier-tracked
  cp.async copy on the same barrier (`impl cp_async`, `oob zeros` where the TMA copy
  zero-filled): every thread of the issuing group (the block, or the role of
  `copy.warp_specialize` that holds the load) copies its chunks and arrives once on the
  barrier when they land (`cp.async.mbarrier.arrive.noinc`); `collective` and
  `leader_tracked` are dropped (each CTA loads its own tile), and so are the L2 policies of
  the tensor map;
- an im2col load (`copy.im2col_load`) becomes the same load gathered by cp.async (`impl
  cp_async`, lowered by `convert_copy_to_nvvm.im2col.im2col_cp_async`): the issuing
  group's threads take (pixel row, 16-, 8- or 4-byte chunk) items, compute each row's
  filter base as the TMA unit walks the bounding box (corners, traversal strides, carries
  into the next dim and the batch), read it at base plus the offsets and zero-fill where
  the pixel or the channels lie outside the array; its barrier is handled as a tiled
  load's, and its L2 policy and the swizzle go. A constant channel coordinate off a 4-byte
  boundary is reported (LG3; a dynamic one is assumed a multiple of the chunk, as for
  tiled loads);
- a TMA load through a tensor map rewritten in the kernel (`copy.tensormap_global`,
  `copy.tensormap_replace`) becomes the cp.async copy of a view of the array the map points
  at there (`memref.reinterpret_cast`: the base, sizes and row pitch the rewrites before the
  load in its block give, the host-encoded map's elsewhere: `legalize_maps`);
  the map, its rewrites and fences go. A rewrite that may run between those and the load,
  or a TMA store through such a map, is reported (LG3);
- the `copy.barrier_wait`s (and tests) on those barriers are kept, so a ring keeps its
  overlap and a consumer role still waits for the producer's loads; each such barrier
  group's `arrivals` is multiplied by the threads T of the loads' issuing group (every
  arrival of the group was a load's: one per load per phase becomes T), and its `expect_tx`
  ops (bytes only) are removed; a group with other arrivals, or loads that do not arrive
  themselves, is reported (LG4); a load that only part of its issuing group reaches is
  reported (LG3), except in a role whose first k warps exactly reach it and whose other
  warps do nothing: the role splits into a role of those warps and an idle one;
- a TMA store becomes thread stores of the tile: the issuing group's threads (the block's,
  or in a role the role's) walk the box in row-major order (consecutive threads,
  consecutive elements of a row: coalesced), each element stored when it lies inside the
  GMEM array (the TMA store's clipping); the bulk `commit_group` is removed and a bulk
  `wait_group` becomes the group's barrier (`gpu.barrier`; in a role `copy.wait_group
  cp_async 0`, whose lowering ends with the role's named barrier): the SMEM the store read
  may be reused after it; a TMA reduction does the same walk with `memref.atomic_rmw` of the
  matching kind (`portability.thread_atomic`: red.global), or for inc/dec (u32, wrapping:
  no atomic_rmw kind) a `memref.generic_atomic_rmw` whose body is PTX's wrapping increment
  (`upstream_memref.wrapping_body`: red.global.{inc,dec}.u32);
- a dynamic-shape GMEM ref (`memref<?x?xf32>`) is kept: its cp.async form reads the sizes
  from the kernel's size parameters (`convert_copy_to_nvvm.dynamic_shapes`), the thread
  stores' clipping with `memref.dim`; a dynamic stride of a strided layout is reported (LG3);
- `copy.fence_async_shared` becomes the group's barrier likewise (the proxy fence has no
  meaning without TMA), a TMA `copy.prefetch` (a hint) is removed;
- `copy.grid_dependency_wait` and `copy.launch_dependents` (griddepcontrol, sm_90) are
  removed: without programmatic dependent launch a kernel starts only once the one ahead
  of it on the stream has completed, which is what the wait waited for (GD1);
- `maxnreg` of `copy.warp_specialize` (setmaxnreg, a register hint of sm_90a) is dropped;
- a swizzled SMEM buffer becomes the plain layout (cp.async writes no swizzle); thread
  accesses through memref indices follow the type;
- a kernel whose CTAs write each other's SMEM (DSMEM) runs each cluster as one block, a
  role per CTA (`legalize_cluster.fold_cluster`), before the rewrites above, which then
  treat its roles as any others; `copy.cluster` is dropped from the other kernels (no
  clusters before sm_90).

On a target with TMA but without tcgen05 (or multicast), a leader-tracked (or collective)
load becomes a per-CTA TMA load on its own barrier.

The module's `copy.target` (and every op's that names one) becomes the new target. On a
target with TMA the rest of the IR is kept, so legalizing to the IR's own target changes
nothing, and legalized IR (cp.async, thread stores) is a fixed point.

This module holds the pass and each kernel's plan (what it checks, then rewrites in which
order); the rewrites are `legalize_loads` (TMA loads and their barrier groups),
`legalize_stores` (TMA stores and reductions), `legalize_maps` (loads through a tensor map
rewritten in the kernel), `legalize_roles` (the group that issues a copy's thread form, the
split of a role) and `legalize_cluster` (a DSMEM kernel's cluster folded into one block);
`legalize_common` holds what they share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from copy_dialect import ops as copy
from copy_dialect import portability
from facts.target import TCGEN05, Target, UnknownTarget, target_named
from passes.legalize_cluster import fold_cluster, needs_folding
from passes.legalize_loads import Load, rewrite_group, rewrite_load, tracking_groups
from passes.legalize_maps import MapValue, check_map_uses, erase_map, map_value
from passes.legalize_roles import Issuers, group_barrier
from passes.legalize_stores import ThreadStores

TMA_IMPLEMENTATIONS = (copy.Implementation.TMA, copy.Implementation.BULK)

NO_FORM = {
    "copy.peer_store": "a store to a peer CTA's SMEM (clusters)",
    "copy.peer_copy": "a copy to a peer CTA's SMEM (clusters)",
    "copy.peer_arrive": "an arrival on a peer CTA's barrier (clusters)",
    "copy.barrier_complete_tx": "a transaction-count completion (sm_90)",
    "nvvm.wgmma.fence.aligned": "a warpgroup MMA's fence (wgmma, sm_90a)",
    "nvvm.wgmma.mma_async": "a warpgroup MMA (wgmma.mma_async, sm_90a)",
    "nvvm.wgmma.commit.group.sync.aligned": "a warpgroup MMA group's commit (wgmma, sm_90a)",
    "nvvm.wgmma.wait.group.sync.aligned": "a wait for warpgroup MMA groups (wgmma, sm_90a)",
    "nvvm.tcgen05.mma": f"a tensor-memory MMA (tcgen05.mma: {TCGEN05.listed})",
    "nvvm.tcgen05.mma.sp": f"a sparse tensor-memory MMA (tcgen05.mma.sp: {TCGEN05.listed})",
    "nvvm.tcgen05.commit": f"a tcgen05 commit ({TCGEN05.listed})",
    "nvvm.tcgen05.fence": f"a tcgen05 thread-sync fence ({TCGEN05.listed})",
}
"""Ops with no pre-Hopper form that the pass can produce (rule LG3)."""


@dataclass(frozen=True)
class CopyLegalizePass(ModulePass):
    """Rewrites the module for `target` (default: the module's own), keeping the semantics,
    or fails at the first op it cannot keep."""

    name = "copy-legalize"

    target: str = ""
    """The target to legalize for (`sm_80`, `sm_86`, `sm_90a`, ...)."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        name = copy.module_target(op, self.target)
        if name is None:
            raise PassFailedException(
                "copy-legalize needs a target: copy-legalize{target=sm_80}, or a module with "
                'copy.target = #copy.target<"sm_90a">'
            )
        try:
            target = target_named(name)
        except UnknownTarget as exc:
            raise PassFailedException(f"copy-legalize: {exc}") from None
        legalize(op, target)


def legalize(module: builtin.ModuleOp, target: Target) -> None:
    """Legalizes every kernel of `module` for `target`, then retargets the module. Every
    kernel is checked before the first is rewritten: a module that fails is left as it was."""
    kernels = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    plans = []
    # Each kernel with DSMEM and its clone folded to one block per cluster: the clone's plan
    # rewrites it in place of the kernel; the clones go if any kernel fails.
    folded: list[tuple[func.FuncOp, func.FuncOp]] = []
    try:
        for kernel in kernels:
            for op in kernel.walk():
                if not target.has_tcgen05:
                    portability.check_tmem(op, target)
            if not target.has_clusters and needs_folding(kernel):
                twin = kernel.clone()
                Rewriter.insert_op(twin, InsertPoint.after(kernel))
                folded.append((kernel, twin))
                if not target.has_tcgen05:
                    mirror_leader_waits(twin)
                fold_cluster(twin, target)
                kernel = twin
            if not target.has_tma:
                plans.append(_Kernel(kernel, target).plan())
            else:
                _check_cluster_features(kernel, target)
    except Exception:
        for _, twin in folded:
            twin.detach()
            twin.erase(safe_erase=False)
        raise
    for kernel, _ in folded:
        kernel.detach()
        kernel.erase(safe_erase=False)
    kernels = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    if not target.has_tcgen05:
        for kernel in kernels:
            mirror_leader_waits(kernel)
    for plan in plans:
        plan()
    if target.has_tma:
        for kernel in kernels:
            _drop_cluster_features(kernel, target)
    for op in [module, *module.walk()]:
        if op is module or "copy.target" in op.attributes:
            op.attributes["copy.target"] = copy.TargetAttr(target.name)


def _cluster_loads(
    kernel: func.FuncOp, target: Target
) -> list[tuple[copy.AsyncCopyOp, copy.CopyGeometry, bool]]:
    """The loads of `kernel` whose leader tracking (the bool) or multicast `target` lacks,
    each with its geometry (decoded for those alone)."""
    found = []
    for op in kernel.walk():
        if not isinstance(op, copy.AsyncCopyOp):
            continue
        drop_leader = op.leader_tracked is not None and not target.has_tcgen05
        if drop_leader or (op.collective is not None and not target.has_multicast):
            g = op.geometry()
            if g.is_load:
                found.append((op, g, drop_leader))
    return found


def _check_cluster_features(kernel: func.FuncOp, target: Target) -> None:
    """A leader-tracked load that leaves its arrival to an explicit expect_tx (`arrive =
    false`) cannot become a per-CTA load: those bytes counted the leader's share (LG3)."""
    for op, g, drop_leader in _cluster_loads(kernel, target):
        if drop_leader and not g.arrives:
            portability.check_no_form(
                op,
                "a leader-tracked load whose bytes an explicit expect_tx counts (arrive = false)",
                target,
            )


def mirror_leader_waits(kernel: func.FuncOp) -> None:
    """A leader-tracked load completes both CTAs' boxes on the leader's barrier, so a kernel
    written for it waits on that barrier in the leader alone (a branch of an `scf.if` on the
    rank) and tells the peer by a handshake (a `copy.peer_arrive`, or the cluster barrier);
    the peer never waits on its own barrier, which no byte reaches. Its per-CTA form (each
    CTA loads its box on its own barrier, arriving expecting its own bytes, so every CTA's
    barrier goes through the same phases) lands the peer's box on the peer's barrier: each
    wait on such a barrier that is a branch's op gets a copy at the start of the other
    branch (unless it waits there already), so the CTAs that take it wait for their own box.
    Waits elsewhere are left: the protocol analysis of the result reports what stays open."""
    barriers = {
        op.barrier
        for op in kernel.walk()
        if isinstance(op, copy.AsyncCopyOp) and op.leader_tracked is not None and op.barrier
    }
    for wait in [op for op in kernel.walk() if isinstance(op, copy.BarrierWaitOp)]:
        block = wait.parent_block()
        branch = None if block is None else block.parent_op()
        if wait.barrier not in barriers or not isinstance(branch, scf.IfOp) or branch.results:
            continue
        owners = [v.owner for v in wait.operands if isinstance(v.owner, Operation)]
        if any(branch.is_ancestor(o) for o in owners):
            continue
        other = branch.false_region if block.parent is branch.true_region else branch.true_region
        if not other.blocks:
            other.add_block(Block([scf.YieldOp()]))
        first = other.blocks[0]
        same = [
            o for o in first.ops
            if isinstance(o, copy.BarrierWaitOp) and o.operands == wait.operands
        ]  # fmt: skip
        if not same and first.first_op is not None:
            Rewriter.insert_op(wait.clone(), InsertPoint.before(first.first_op))


def _drop_cluster_features(kernel: func.FuncOp, target: Target) -> None:
    """On a TMA target without tcgen05 (or multicast): a leader-tracked (or collective) load
    becomes a per-CTA TMA load of the box on the CTA's own barrier, which it arrives on
    expecting its own bytes."""
    for op, _, _ in _cluster_loads(kernel, target):
        op.leader_tracked = None
        op.collective = None
    if not target.has_clusters:
        kernel.attributes.pop("copy.cluster", None)


def _tma_copies(ops: list[Operation]) -> list[tuple[Load, copy.CopyGeometry]]:
    """The TMA (and bulk) copies among `ops`, each with its geometry (a cp.async copy is not
    decoded)."""
    found: list[tuple[Load, copy.CopyGeometry]] = []
    for op in ops:
        if isinstance(op, copy.AsyncCopyOp) and not op.is_cp_async():
            g = op.geometry()
            if op.resolved_implementation(g) in TMA_IMPLEMENTATIONS:
                found.append((op, g))
        elif isinstance(op, copy.Im2colLoadOp):
            if op.resolved_implementation() in TMA_IMPLEMENTATIONS:
                found.append((op, op.geometry()))
    return found


class _Kernel:
    """One kernel's legalization for a target without TMA."""

    def __init__(self, kernel: func.FuncOp, target: Target):
        self.kernel = kernel
        self.target = target
        self.issuers = Issuers(kernel, target)
        """The group that issues each copy's thread form, and the roles to split."""
        self.stores = ThreadStores(kernel)
        """The TMA stores' and reductions' thread form."""
        self.views: dict[Load, MapValue] = {}
        """The map each TMA load through a tensor map rewritten in the kernel reads through,
        at the load (`map_value`): its cp.async form reads a view of that map's array."""

    def plan(self) -> Callable[[], None]:
        """Checks the kernel (what it cannot keep raises) and returns its rewrite. Everything
        is decided from the IR as written (its implementations resolve against its own
        target). Each TMA copy's geometry is decoded once for the checks, which change no
        IR; the rewrite decodes a copy's geometry again where it rewrites it, as the
        rewrites before it (a role split, the barrier groups, the loads) replace values a
        geometry holds."""
        ops = list(self.kernel.walk())
        tma = _tma_copies(ops)
        loads = {op: g for op, g in tma if g.is_load}
        stores = {op: g for op, g in tma if isinstance(op, copy.AsyncCopyOp) and not g.is_load}
        self.check(ops, loads, stores)
        groups = tracking_groups(list(loads), self.issuers, self.target)
        return lambda: self.rewrite(ops, list(loads), list(stores), groups)

    def rewrite(
        self,
        ops: list[Operation],
        loads: list[Load],
        stores: list[copy.AsyncCopyOp],
        groups: dict[SSAValue, int],
    ) -> None:
        self.issuers.split()
        for group, threads in groups.items():
            rewrite_group(group, threads)
        for load in loads:
            rewrite_load(load, self.views.get(load))
        for init in {value.init: None for value in self.views.values()}:
            erase_map(init)
        for store in stores:
            index, threads = self.issuers(store, load=False)
            self.stores.rewrite(store, index, threads)
        for op in ops:
            self.rewrite_other(op)
        for op in ops:
            if isinstance(op, copy.AllocSmemOp):
                self.unswizzle(op)
            elif isinstance(op, copy.WarpSpecializeOp) and not self.target.has_setmaxnreg:
                op.maxnreg = None
        if not self.target.has_clusters:
            self.kernel.attributes.pop("copy.cluster", None)

    # -- what cannot be kept -------------------------------------------------------------

    def check(
        self,
        ops: list[Operation],
        loads: dict[Load, copy.CopyGeometry],
        stores: dict[copy.AsyncCopyOp, copy.CopyGeometry],
    ) -> None:
        """What the kernel cannot keep (raises), with the TMA loads and stores each with its
        geometry."""
        for op in ops:
            if op.name in NO_FORM:
                portability.check_no_form(op, NO_FORM[op.name], self.target)
            elif isinstance(op, copy.TensorMapGlobalOp):
                check_map_uses(op, self.target)
        for copy_op, g in [*loads.items(), *stores.items()]:
            if g.predicate is not None:
                portability.check_predicate(copy_op, self.target)
            if copy.has_dynamic_layout_stride(g.gmem_type):
                portability.check_no_form(
                    copy_op,
                    f"a TMA copy of a GMEM ref with a dynamic stride ({g.gmem_type})",
                    self.target,
                    note="drop the strided layout (a row-major ref, whose strides follow from "
                    "its sizes: cp.async computes its chunks' addresses from the strides)",
                )
            if isinstance(copy_op, copy.AsyncCopyOp) and copy_op.map is not None:
                self.views[copy_op] = map_value(copy_op, self.target)
        for load, g in loads.items():
            portability.check_oob(load, g.oob, self.target)
            portability.check_tf32_load(load, g, self.target)
            if isinstance(load, copy.Im2colLoadOp):
                portability.check_im2col_chunks(load, g, self.target)
        for store, g in stores.items():
            if g.reduction is not None:
                self.stores.atomics[store] = portability.thread_atomic(
                    store, g.reduction, g.element_type, self.target
                )
        for copy_op, g in [*loads.items(), *stores.items()]:
            self.issuers(copy_op, load=g.is_load)

    # -- the rest ----------------------------------------------------------------------------

    def rewrite_other(self, op: Operation) -> None:
        if op.parent is None:
            return  # rewritten already
        if isinstance(op, copy.CommitGroupOp) and op.group.data is copy.GroupKind.BULK:
            Rewriter.erase_op(op)
        elif isinstance(op, copy.WaitGroupOp) and op.group.data is copy.GroupKind.BULK:
            if _ends_kernel(op):
                Rewriter.erase_op(op)  # the stores are done when the threads are
            else:
                Rewriter.replace_op(op, group_barrier(op))
        elif isinstance(op, copy.FenceAsyncSharedOp):
            Rewriter.replace_op(op, group_barrier(op))
        elif isinstance(op, copy.PrefetchOp):  # an L2 hint, TMA or bulk: sm_90
            Rewriter.erase_op(op)
        elif isinstance(op, copy.GridDependencyWaitOp | copy.LaunchDependentsOp):
            Rewriter.erase_op(op)  # no PDL: the kernel starts once its predecessor completed

    def unswizzle(self, alloc: copy.AllocSmemOp) -> None:
        t = alloc.result.type
        assert isinstance(t, MemRefType)
        if copy.swizzle_of(t) == 16:
            return
        plain = MemRefType(t.element_type, t.get_shape(), t.layout, copy.SmemSpaceAttr())
        align = None if alloc.alignment is None else alloc.alignment.value.data
        Rewriter.replace_op(alloc, copy.AllocSmemOp(plain, align))


def _ends_kernel(op: Operation) -> bool:
    """Whether only the kernel's return follows `op`."""
    nxt = op.next_op
    return isinstance(op.parent_op(), func.FuncOp) and isinstance(nxt, func.ReturnOp)
