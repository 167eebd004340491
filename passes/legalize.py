"""`copy-legalize{target=sm_XX}`: rewrites copy-dialect IR written for one target into IR
that verifies and runs on another, wherever the semantics can be kept; what it cannot keep
is a diagnostic at the op (rules LG1-LG7, `copy_dialect.portability`).

On a target without TMA (sm_80, sm_86, sm_89):

- a TMA load (`impl tma` or `bulk`, or left open on a TMA target) becomes an mbarrier-tracked
  cp.async copy on the same barrier (`impl cp_async`, `oob zeros` where the TMA copy
  zero-filled): every thread of the issuing group (the block, or the role of
  `copy.warp_specialize` that holds the load) copies its chunks and arrives once on the
  barrier when they land (`cp.async.mbarrier.arrive.noinc`); `collective` and
  `leader_tracked` are dropped (each CTA loads its own tile), and so are the L2 policies of
  the tensor map;
- an im2col load (`copy.im2col_load`) becomes the same load gathered by cp.async (`impl
  cp_async`, lowered by `convert_copy_to_nvvm.copies.im2col_cp_async`): the issuing
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
  load in its block give, the host-encoded map's elsewhere: `_map_value`, `_map_view`);
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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, gpu, memref, scf, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    MemRefType,
    StridedLayoutAttr,
    VectorType,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from copy_dialect import ops as copy
from copy_dialect import portability
from copy_dialect.memory import static_strides
from copy_dialect.roles import kernel_block_threads
from copy_dialect.verify_common import known_multiple
from facts.target import TARGETS, Target
from passes.legalize_cluster import fold_cluster, needs_folding
from passes.legalize_common import (
    box_coords,
    kernel_argument,
    role_barrier,
    thread_condition,
)
from passes.legalize_common import index_constant as _index

TMA_IMPLEMENTATIONS = (copy.Implementation.TMA, copy.Implementation.BULK)

Load = copy.AsyncCopyOp | copy.Im2colLoadOp
"""A load the pass rewrites into an mbarrier-tracked cp.async copy: a TMA (or bulk) tile
load, or an im2col load (its cp.async gather)."""

NO_FORM = {
    "copy.peer_store": "a store to a peer CTA's SMEM (clusters)",
    "copy.peer_copy": "a copy to a peer CTA's SMEM (clusters)",
    "copy.peer_arrive": "an arrival on a peer CTA's barrier (clusters)",
    "copy.barrier_complete_tx": "a transaction-count completion (sm_90)",
}
"""Ops with no pre-Hopper form that the pass can produce (rule LG3)."""

TRACKING_USERS = (copy.BarrierWaitOp, copy.BarrierTestOp, copy.BarrierExpectTxOp)
"""What may use a barrier group besides the TMA loads it tracks (else LG4): the waits and
tests are kept, expect_tx (bytes only) is removed."""

STORE_ALIGNMENT = 16
"""The bytes a thread store's vector spans, and the alignment the legalized kernel assumes
(`memref.assume_alignment`) of an array it stores vectors to: TMA asked the array for
16-byte alignment already (a tensor map's global address)."""


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
        if name not in TARGETS:
            raise PassFailedException(
                f"copy-legalize: expected a target of {', '.join(TARGETS)}, got {name!r}"
            )
        legalize(op, TARGETS[name])


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
    for plan in plans:
        plan()
    if target.has_tma:
        for kernel in kernels:
            _drop_cluster_features(kernel, target)
    for op in [module, *module.walk()]:
        if op is module or "copy.target" in op.attributes:
            op.attributes["copy.target"] = copy.TargetAttr(target.name)


def _cluster_loads(kernel: func.FuncOp, target: Target) -> list[tuple[copy.AsyncCopyOp, bool]]:
    """The loads of `kernel` whose leader tracking (the bool) or multicast `target` lacks."""
    found = []
    for op in kernel.walk():
        if not isinstance(op, copy.AsyncCopyOp) or not op.is_load:
            continue
        drop_leader = op.leader_tracked is not None and not target.has_tcgen05
        if drop_leader or (op.collective is not None and not target.has_multicast):
            found.append((op, drop_leader))
    return found


def _check_cluster_features(kernel: func.FuncOp, target: Target) -> None:
    """A leader-tracked load that leaves its arrival to an explicit expect_tx (`arrive =
    false`) cannot become a per-CTA load: those bytes counted the leader's share (LG3)."""
    for op, drop_leader in _cluster_loads(kernel, target):
        if drop_leader and not op.arrives:
            portability.check_no_form(
                op,
                "a leader-tracked load whose bytes an explicit expect_tx counts (arrive = false)",
                target,
            )


def _drop_cluster_features(kernel: func.FuncOp, target: Target) -> None:
    """On a TMA target without tcgen05 (or multicast): a leader-tracked (or collective) load
    becomes a per-CTA TMA load of the box on the CTA's own barrier, which it arrives on
    expecting its own bytes."""
    for op, _ in _cluster_loads(kernel, target):
        op.leader_tracked = None
        op.collective = None
    if not target.has_clusters:
        kernel.attributes.pop("copy.cluster", None)


def _is_tma(op: Operation) -> bool:
    if not isinstance(op, Load):
        return False
    return op.resolved_implementation() in TMA_IMPLEMENTATIONS


class _Kernel:
    """One kernel's legalization for a target without TMA."""

    def __init__(self, kernel: func.FuncOp, target: Target):
        self.kernel = kernel
        self.target = target
        self.atomics: dict[copy.AsyncCopyOp, str] = {}
        """The thread atomic of each TMA reduction (`portability.thread_atomic`)."""
        self.views: dict[copy.AsyncCopyOp, _MapValue] = {}
        """The map each TMA load through a tensor map rewritten in the kernel reads through,
        at the load (`_map_value`): its cp.async form reads a view of that map's array."""
        self.assumed: dict[SSAValue, SSAValue] = {}
        """Each array thread stores write vectors to, and its `memref.assume_alignment`."""
        self.splits: dict[tuple[copy.WarpSpecializeOp, int], int] = {}
        """Roles whose copies only their first k warps reach (`_first_warps`): each becomes a
        role of those k warps and an idle role of the others."""

    def plan(self) -> Callable[[], None]:
        """Checks the kernel (what it cannot keep raises) and returns its rewrite. Everything
        is decided from the IR as written (its implementations resolve against its own
        target)."""
        ops = list(self.kernel.walk())
        tma = [op for op in ops if _is_tma(op)]
        loads = [op for op in tma if op.geometry().is_load]
        stores = [op for op in tma if not op.geometry().is_load]
        self.check(ops, loads, stores)
        groups = self.tracking_groups(loads)
        return lambda: self.rewrite(ops, loads, stores, groups)

    def rewrite(
        self,
        ops: list[Operation],
        loads: list[Load],
        stores: list[copy.AsyncCopyOp],
        groups: dict[SSAValue, int],
    ) -> None:
        for ws in {ws: None for ws, _ in self.splits}:
            _split_roles(ws, {r: k for (w, r), k in self.splits.items() if w is ws})
        for group, threads in groups.items():
            self.rewrite_group(group, threads)
        for load in loads:
            self.rewrite_load(load)
        for init in {value.init: None for value in self.views.values()}:
            _erase_map(init)
        for store in stores:
            self.rewrite_store(store)
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
        self, ops: list[Operation], loads: list[Load], stores: list[copy.AsyncCopyOp]
    ) -> None:
        for op in ops:
            if op.name in NO_FORM:
                portability.check_no_form(op, NO_FORM[op.name], self.target)
            elif isinstance(op, copy.TensorMapGlobalOp):
                _check_map_uses(op, self.target)
        for copy_op in [*loads, *stores]:
            g = copy_op.geometry()
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
                self.views[copy_op] = _map_value(copy_op, self.target)
        for load in loads:
            portability.check_oob(load, load.geometry().oob, self.target)
            if isinstance(load, copy.Im2colLoadOp):
                portability.check_im2col_chunks(load, load.geometry(), self.target)
        for store in stores:
            g = store.geometry()
            if g.reduction is not None:
                self.atomics[store] = portability.thread_atomic(
                    store, g.reduction, g.element_type, self.target
                )
        for copy_op in [*loads, *stores]:
            self.issuers(copy_op)

    def issuers(self, op: Load) -> tuple[SSAValue | None, int]:
        """The thread index and the number of threads of the group that issues `op`'s
        thread form (the block: None and its threads; a role: its index argument and its
        threads), checked to reach `op` whole (LG3, LG7)."""
        role = _role_of(op)
        if role is None:
            threads = kernel_block_threads(self.kernel)
            portability.check_threads(op, threads, self.target, op.geometry().is_load)
            assert threads is not None
            index, top = None, self.kernel.body.block
        else:
            ws, r = role
            threads = ws.role_threads(r)
            index, top = ws.regions[r].block.args[0], ws.regions[r].block
        condition = thread_condition(op, top)
        if condition is not None and role is not None:
            warps = _first_warps(role[0], role[1], condition)
            if warps is not None:
                self.splits[role] = warps
                return index, warps * copy.WARP
        if condition is not None:
            who = "the block" if role is None else f"role {role[1]}"
            portability.check_no_form(
                op,
                f"a TMA copy that only some threads of {who} reach (it sits under "
                f"{condition.name}, whose condition or bounds depend on the thread): its "
                f"cp.async or thread-store form is issued by every thread of {who}",
                self.target,
                note="make the conditions around the copy uniform over the "
                + ("block" if role is None else "role")
                + " (a role whose threads do not all issue the copy: give the issuing warps a "
                "role of their own)",
            )
        return index, threads

    def tracking_groups(self, loads: list[Load]) -> dict[SSAValue, int]:
        """The barrier groups of the TMA loads, each with the threads that issue its loads'
        cp.async form, checked to count only the loads' arrivals (LG4)."""
        groups: dict[SSAValue, int] = {}
        for load in loads:
            bar = load.geometry().barrier
            assert bar is not None  # rule A3
            if not isinstance(bar.owner, copy.BarrierInitOp):
                portability.check_no_form(
                    load, "a TMA load on a barrier group passed in", self.target
                )
            if not load.arrives:
                portability.check_barrier_users(
                    bar, load, self.target,
                    "the load leaves its arrival to an explicit arrive_expect_tx (arrive = "
                    "false)",
                )  # fmt: skip
            _, threads = self.issuers(load)
            if groups.setdefault(bar, threads) != threads:
                portability.check_barrier_users(
                    bar, load, self.target,
                    f"the group's loads are issued by groups of {groups[bar]} and {threads} "
                    "threads",
                )  # fmt: skip
        for group in groups:
            for use in group.uses:
                user = use.operation
                if user not in loads and not isinstance(user, TRACKING_USERS):
                    portability.check_barrier_users(group, user, self.target)
        return groups

    # -- loads and their barriers --------------------------------------------------------

    def rewrite_load(self, load: Load) -> None:
        """The mbarrier-tracked cp.async copy of `load`'s box, on its barrier (an im2col
        load: the cp.async gather of its pixels, `_im2col_gather`); through a tensor map
        rewritten in the kernel, from a view of the array the map points at (`_map_view`)."""
        if isinstance(load, copy.Im2colLoadOp):
            Rewriter.replace_op(load, _im2col_gather(load), [])
            return
        g = load.geometry()
        oob = "promise_in_bounds" if g.oob == copy.OOBMode.PROMISE_IN_BOUNDS else "zeros"
        gmem = g.gmem
        if load in self.views:  # through a map rewritten in the kernel: a view of its array
            made = _map_view(self.views[load], g.element_type)
            block = load.parent_block()
            assert block is not None
            block.insert_ops_before(made, load)
            gmem = made[-1].results[0]
        new = copy.AsyncCopyOp(
            gmem,
            g.smem,
            src_indices=g.gmem_indices,
            dst_indices=g.smem_indices,
            barrier=g.barrier,
            barrier_index=g.barrier_index,
            implementation="cp_async",
            oob=oob,
        )
        Rewriter.replace_op(load, new, [])

    def rewrite_group(self, group: SSAValue, threads: int) -> None:
        """Each arrival of the group was a load's: one per issuing thread now. Its expect_tx
        ops (bytes that no cp.async delivers) go."""
        init = group.owner
        assert isinstance(init, copy.BarrierInitOp)
        init.arrivals = IntegerAttr(init.arrivals.value.data * threads, i32)
        for use in list(group.uses):
            if isinstance(use.operation, copy.BarrierExpectTxOp):
                Rewriter.erase_op(use.operation)

    # -- stores ----------------------------------------------------------------------------

    def rewrite_store(self, store: copy.AsyncCopyOp) -> None:
        """Thread stores of `store`'s tile, clipped to the GMEM array (a reduction's: thread
        atomics, `memref.atomic_rmw`). Where the tile's rows and the array allow it
        (`_store_width`), each thread stores 16 bytes at a time (`vector.load` from SMEM,
        `vector.store` to the array through `memref.assume_alignment`: the 16-byte
        alignment TMA asked of the array); a column origin not known to be a multiple of the
        vector is checked at run time, with the element-wise walk in the other branch."""
        g = store.geometry()
        index, threads = self.issuers(store)
        ops: list[Operation] = []

        def emit(op: Operation) -> SSAValue:
            ops.append(op)
            return op.results[0]

        x = gpu.DimensionAttr(gpu.DimensionEnum.X)
        tid = index if index is not None else emit(gpu.ThreadIdOp(x))
        step = emit(_index(threads))
        width = 1 if store in self.atomics else _store_width(g)
        origin = g.gmem_indices[-1]
        if width == 1:
            ops.append(self._store_loop(store, g, tid, step, 1, emit))
        elif known_multiple(origin) % width == 0:  # 0: any multiple
            ops.append(self._store_loop(store, g, tid, step, width, emit, self._aligned(g.gmem)))
        else:
            # Vectors only where the column origin is a multiple of the vector at run time;
            # the vector branch addresses from origin / width * width (the same value there),
            # which the lowering sees is a multiple.
            w = emit(_index(width))
            rem = emit(arith.RemUIOp(origin, w))
            on_vectors = emit(arith.CmpiOp(rem, emit(_index(0)), "eq"))
            whole = emit(arith.MuliOp(emit(arith.DivUIOp(origin, w)), w))
            aligned = self._aligned(g.gmem)
            vectors = self._store_loop(store, g, tid, step, width, emit, aligned, whole)
            scalars = self._store_loop(store, g, tid, step, 1, emit)
            branches = [Region(Block([loop, scf.YieldOp()])) for loop in (vectors, scalars)]
            ops.append(scf.IfOp(on_vectors, [], *branches))
        Rewriter.replace_op(store, ops, [])

    def _aligned(self, ref: SSAValue) -> SSAValue:
        """`memref.assume_alignment %ref, 16` at the kernel's entry, made once per array."""
        if ref not in self.assumed:
            entry = self.kernel.body.block
            op = memref.AssumeAlignmentOp(ref, STORE_ALIGNMENT)
            if ref.name_hint:
                op.result.name_hint = f"{ref.name_hint}_aligned"
            assert entry.first_op is not None
            entry.insert_op_before(op, entry.first_op)
            self.assumed[ref] = op.result
        return self.assumed[ref]

    def _store_loop(
        self,
        store: copy.AsyncCopyOp,
        g: copy.CopyGeometry,
        tid: SSAValue,
        step: SSAValue,
        width: int,
        emit: Callable[[Operation], SSAValue],
        target: SSAValue | None = None,
        origin: SSAValue | None = None,
    ) -> scf.ForOp:
        """The walk of the box in row-major order, `width` elements a thread at a time
        (consecutive threads, consecutive elements of a row: coalesced), each element (or
        vector) stored when it lies inside the GMEM array; into `target` (the array, or its
        aligned form) with the box's last column origin replaced by `origin` if given."""
        box = list(g.box_shape)
        gmem_shape = g.gmem_type.get_shape()
        total = emit(_index(prod(box) // width))
        body = Block(arg_types=[IndexType()])
        inner: list[Operation] = []

        def put(op: Operation) -> SSAValue:
            inner.append(op)
            return op.results[0]

        coords = box_coords(body.args[0], box, width, put, lambda v: emit(_index(v)))
        smem_at = [*g.smem_indices, *coords]
        if width == 1:
            value = put(memref.LoadOp.get(g.smem, smem_at))
        else:
            vtype = VectorType(g.element_type, [width])
            value = put(vector.LoadOp(g.smem, smem_at, vtype))
        lead = len(gmem_shape) - len(box)
        origins = list(g.gmem_indices[lead:])
        if origin is not None:
            origins[-1] = origin
        indices = list(g.gmem_indices[:lead])
        indices += [put(arith.AddiOp(o, c)) for o, c in zip(origins, coords, strict=True)]
        inside: SSAValue | None = None
        for d, (index, size) in enumerate(zip(indices, gmem_shape, strict=True)):
            # A dynamic size is read at run time (the kernel's size parameter). A vector lies
            # inside or outside whole: its first column and the array's columns are
            # multiples of it.
            bound = emit(_index(size) if size >= 0 else memref.DimOp(g.gmem, emit(_index(d))))
            ok = put(arith.CmpiOp(index, bound, "ult"))
            inside = ok if inside is None else put(arith.AndIOp(inside, ok))
        assert inside is not None
        then = Block()
        if store in self.atomics:  # a reduction: red.global of the matching op and type
            write = portability.thread_atomic_op(self.atomics[store], value, g.gmem, indices)
        elif width == 1:
            write = memref.StoreOp.get(value, g.gmem, indices)
        else:
            assert target is not None
            write = vector.StoreOp(value, target, indices)
        then.add_ops([write, scf.YieldOp()])
        inner.append(scf.IfOp(inside, [], Region(then)))
        inner.append(scf.YieldOp())
        body.add_ops(inner)
        return scf.ForOp(tid, total, step, [], Region(body))

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
                Rewriter.replace_op(op, _group_barrier(op))
        elif isinstance(op, copy.FenceAsyncSharedOp):
            Rewriter.replace_op(op, _group_barrier(op))
        elif isinstance(op, copy.PrefetchOp):  # an L2 hint, TMA or bulk: sm_90
            Rewriter.erase_op(op)

    def unswizzle(self, alloc: copy.AllocSmemOp) -> None:
        t = alloc.result.type
        assert isinstance(t, MemRefType)
        if copy.swizzle_of(t) == 16:
            return
        plain = MemRefType(t.element_type, t.get_shape(), t.layout, copy.SmemSpaceAttr())
        align = None if alloc.alignment is None else alloc.alignment.value.data
        Rewriter.replace_op(alloc, copy.AllocSmemOp(plain, align))


def _store_width(g: copy.CopyGeometry) -> int:
    """The elements of a thread store's vector for the tile of `g` (1: element by element):
    16 bytes (the largest st.global) where the array is a kernel argument of static shape
    and row-major strides whose rows, like the box's and the SMEM buffer's, are a multiple
    of the vector; the array is then 16-byte aligned, as the TMA copy required of it."""
    bits = g.element_bits
    width = STORE_ALIGNMENT * 8 // bits if bits and bits % 8 == 0 else 1
    t = g.gmem_type
    if width < 2 or not kernel_argument(g.gmem):
        return 1
    strides = copy.element_strides(t)
    smem_strides = copy.element_strides(g.smem_type)
    if (
        any(d < 0 for d in t.get_shape())
        or strides is None
        or None in strides
        or strides[-1] != 1
        or copy.layout_offset_problem(t) is not None
        or smem_strides is None
        or None in smem_strides
        or smem_strides[-1] != 1
    ):
        return 1
    multiples = [g.box_shape[-1], t.get_shape()[-1], *strides[:-1], *smem_strides[:-1]]
    if any(m % width for m in multiples):  # type: ignore[operator]
        return 1
    return width


def _im2col_gather(load: copy.Im2colLoadOp) -> copy.Im2colLoadOp:
    """`load` gathered by cp.async (`impl cp_async`): the same pixels, offsets, corners and
    strides, on the same barrier, each issuing thread arriving once; the L2 policy and
    promotion (a tensor map's) go."""
    g = load.geometry()
    return copy.Im2colLoadOp(
        g.gmem,
        g.smem,
        coordinates=g.gmem_indices,
        offsets=g.offsets,
        barrier=g.barrier,  # type: ignore[arg-type]
        lower=g.lower,
        upper=g.upper,
        dst_indices=g.smem_indices,
        barrier_index=g.barrier_index,
        strides=None if load.strides is None else g.traversal_strides,
        implementation="cp_async",
    )


def _role_of(op: Operation) -> tuple[copy.WarpSpecializeOp, int] | None:
    """The copy.warp_specialize whose role holds `op`, and the role's index."""
    while (parent := op.parent_op()) is not None:
        if isinstance(parent, copy.WarpSpecializeOp):
            region = op.parent_region()
            return parent, list(parent.regions).index(region)  # type: ignore[arg-type]
        op = parent
    return None


def _first_warps(ws: copy.WarpSpecializeOp, r: int, condition: Operation) -> int | None:
    """k, where role r's copies sit under `condition`, an `scf.if` in the role's body that
    exactly the role's first k warps pass (its condition evaluated for each thread index,
    `%t / 32 == 0`: the first warp of a producer warpgroup), and the role's other warps do
    nothing else (the rest of the body is arith, the `if` has no else): the role then splits
    into a role of k warps and an idle one, the same threads doing the same work. None when
    that cannot be proved."""
    body = ws.regions[r].block
    if not isinstance(condition, scf.IfOp) or condition.parent_block() is not body:
        return None
    if any(op.name != "scf.yield" for op in condition.false_region.walk()):
        return None
    if any(op is not condition and not op.name.startswith("arith.") for op in body.ops):
        return None
    threads = ws.role_threads(r)
    taken = _per_thread(condition.cond, body.args[0], threads, {})
    if taken is None:
        return None
    k = sum(1 for t in taken if t)
    if k == 0 or k % copy.WARP or k == threads or any(taken[t] != (t < k) for t in range(threads)):
        return None
    return k // copy.WARP


_ARITH = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divui": lambda a, b: a // b if b > 0 and a >= 0 else None,
    "arith.remui": lambda a, b: a % b if b > 0 and a >= 0 else None,
    "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b,
}
_CMPI = {0: int.__eq__, 1: int.__ne__, 2: int.__lt__, 3: int.__le__, 4: int.__gt__,
         5: int.__ge__, 6: int.__lt__, 7: int.__le__, 8: int.__gt__, 9: int.__ge__}  # fmt: skip
"""arith.cmpi's predicates (eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge) on the
non-negative values of `_per_thread`."""


def _per_thread(
    value: SSAValue, index: SSAValue, threads: int, memo: dict[SSAValue, tuple[int, ...] | None]
) -> tuple[int, ...] | None:
    """`value` for each thread index 0 .. threads - 1 of a role (`index` its argument), when
    it is computed from the index and constants with arith; else None."""
    if value in memo:
        return memo[value]
    found: tuple[int, ...] | None = None
    owner = value.owner
    if value is index:
        found = tuple(range(threads))
    elif isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        found = (owner.value.value.data,) * threads
    elif isinstance(owner, Operation) and len(owner.operands) == 2:
        a, b = (_per_thread(v, index, threads, memo) for v in owner.operands)
        if a is not None and b is not None:
            if isinstance(owner, arith.CmpiOp):
                compare = _CMPI[owner.predicate.value.data]
                found = tuple(int(compare(x, y)) for x, y in zip(a, b, strict=True))
            elif owner.name in _ARITH:
                got = [_ARITH[owner.name](x, y) for x, y in zip(a, b, strict=True)]
                if all(g is not None and g >= 0 for g in got):
                    found = tuple(got)  # type: ignore[arg-type]
    memo[value] = found
    return found


def _split_roles(ws: copy.WarpSpecializeOp, splits: dict[int, int]) -> None:
    """Each role r of `splits` becomes a role of its first `splits[r]` warps (the same
    region: its thread indices are those threads') and an idle role of the others;
    `maxnreg` goes (sm_90a only, and the roles are no longer whole warpgroups)."""
    counts: list[int] = []
    for r, w in enumerate(ws.role_warps):
        counts += [splits[r], w - splits[r]] if r in splits else [w]
    new = copy.WarpSpecializeOp(counts)
    at = 0
    for r, region in enumerate(list(ws.regions)):
        target = new.regions[at]
        target.detach_block(target.block).erase()
        region.move_blocks(target)
        at += 2 if r in splits else 1
    for name, attr in ws.attributes.items():
        new.attributes[name] = attr
    Rewriter.replace_op(ws, new)


def _group_barrier(op: Operation) -> Operation:
    """The barrier of the group that issues `op`: the block barrier, or in a role the role's
    (`role_barrier`)."""
    if _role_of(op) is None:
        return gpu.BarrierOp()
    return role_barrier()


def _ends_kernel(op: Operation) -> bool:
    """Whether only the kernel's return follows `op`."""
    nxt = op.next_op
    return isinstance(op.parent_op(), func.FuncOp) and isinstance(nxt, func.ReturnOp)


# -- loads through a tensor map rewritten in the kernel ----------------------------------------

MAP_OPS = (copy.TensorMapReplaceOp, copy.TensorMapFenceReleaseOp, copy.TensorMapFenceAcquireOp)
"""What may use a tensor map in global memory besides the TMA loads through it: removed with
the map once the loads read views instead."""


@dataclass(frozen=True)
class _MapValue:
    """The tensor map a load reads through, as the `copy.tensormap_replace`s before it in its
    block leave it: the fields they rewrite; the others are the host-encoded map's, made
    from the `copy.tensormap_global`'s source (its base, sizes and row-major strides)."""

    init: copy.TensorMapGlobalOp
    address: copy.TensorMapReplaceOp | None
    """The last rewrite of the base (`value[indices]`), None for the source's base."""
    dims: dict[int, SSAValue]
    """The i32 element count of each rewritten dim (outermost first)."""
    strides: dict[int, SSAValue]
    """The i64 byte stride of each rewritten dim (outermost first, all but the innermost)."""


def _check_map_uses(init: copy.TensorMapGlobalOp, target: Target) -> None:
    """A tensor map in global memory has a pre-Hopper form where it is only rewritten,
    fenced and loaded through: the loads read views (`_map_value`); a TMA store or
    reduction through it, or any other use, has none (LG3)."""
    for use in init.map.uses:
        user = use.operation
        if isinstance(user, MAP_OPS):
            continue
        if isinstance(user, copy.AsyncCopyOp) and user.is_load:
            continue
        what = (
            "a TMA store through a tensor map in global memory"
            if isinstance(user, copy.AsyncCopyOp)
            else f"a use of a tensor map in global memory by {user.name}"
        )
        portability.check_no_form(user, what, target)


def _map_value(load: copy.AsyncCopyOp, target: Target) -> _MapValue:
    """The value of the map `load` reads through, at the load, derived from the IR: the
    `copy.tensormap_replace`s of the map before it in its block (the last of each field
    wins). Every other rewrite of the map must follow the load in the kernel's body (run
    once, after it), so that no path reaches the load with another value; a base must be
    rewritten to an element of a GMEM array of static strides. Else LG3 at the op."""
    m = load.map
    assert m is not None
    init = m.owner
    if not isinstance(init, copy.TensorMapGlobalOp):
        portability.check_no_form(
            load, "a TMA load through a tensor map that no copy.tensormap_global makes", target
        )
    assert isinstance(init, copy.TensorMapGlobalOp)
    before = _ops_before(load)
    seen = set(before)
    block = load.parent_block()
    once = block is not None and isinstance(block.parent_op(), func.FuncOp)
    for use in m.uses:
        user = use.operation
        if not isinstance(user, copy.TensorMapReplaceOp) or user in seen:
            continue
        if once and user.parent_block() is block:
            continue  # after the load, in the kernel's body: run once, after it
        portability.check_no_form(
            user,
            "a tensor-map rewrite that may run between the rewrites before a load through "
            "the map and the load (the pass reads the map's value at a load from the "
            "rewrites before it in its block)",
            target,
            note="rewrite the map in the block of the loads through it, before them",
        )
    address: copy.TensorMapReplaceOp | None = None
    dims: dict[int, SSAValue] = {}
    strides: dict[int, SSAValue] = {}
    for op in before:
        if not isinstance(op, copy.TensorMapReplaceOp) or op.map is not m:
            continue
        kind, dim = op.field_kind, op.field_dim
        if kind == copy.TensorMapField.GLOBAL_ADDRESS:
            address = op
        elif kind == copy.TensorMapField.GLOBAL_DIM:
            assert dim is not None
            dims[dim] = op.value
        else:
            assert dim is not None
            strides[dim] = op.value
    if address is not None:
        t = address.value.type
        assert isinstance(t, MemRefType)
        if static_strides(t) is None:
            portability.check_no_form(
                address,
                f"a tensor-map base in a GMEM array of dynamic strides ({t})",
                target,
                note="rewrite the base to an element of a row-major array of static shape "
                "(a pool), whose strides the view's offset is computed from",
            )
    return _MapValue(init, address, dims, strides)


def _ops_before(op: Operation) -> list[Operation]:
    """The ops before `op` in its block, in order."""
    found = []
    prev = op.prev_op
    while prev is not None:
        found.append(prev)
        prev = prev.prev_op
    return found[::-1]


def _map_view(value: _MapValue, element: Attribute) -> list[Operation]:
    """The ops that view the array the map points at as the map does, the last making the
    view: `memref.reinterpret_cast` of the rewritten base's array at the base's offset (or
    of the map's source), with the rewritten sizes (i32 element counts) and row pitches
    (i64 bytes, in elements), the source's where a field is not rewritten."""
    ops: list[Operation] = []

    def emit(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    source = value.init.source
    assert isinstance(source_type := source.type, MemRefType)
    rank = source_type.get_num_dims()
    shape = source_type.get_shape()

    made: dict[int, SSAValue] = {}

    def source_size(d: int) -> SSAValue:  # made once, and only where a field is not rewritten
        if d not in made:
            made[d] = emit(
                _index(shape[d]) if shape[d] >= 0 else memref.DimOp(source, emit(_index(d)))
            )
        return made[d]

    if value.address is None:
        base, offset = source, emit(_index(0))
    else:
        base = value.address.value
        assert isinstance(base_type := base.type, MemRefType)
        strides = static_strides(base_type)
        assert strides is not None  # checked: `_map_value`
        terms = [
            index if stride == 1 else emit(arith.MuliOp(index, emit(_index(stride))))
            for index, stride in zip(value.address.indices, strides, strict=True)
        ]
        offset = terms[0] if terms else emit(_index(0))
        for term in terms[1:]:
            offset = emit(arith.AddiOp(offset, term))
    sizes = [
        emit(arith.IndexCastOp(value.dims[d], IndexType())) if d in value.dims else source_size(d)
        for d in range(rank)
    ]
    bits = copy.bitwidth(element) or 8
    pitches: list[SSAValue] = []
    for d in range(rank - 1):
        if d in value.strides:  # bytes -> elements (sub-byte ones too: bytes * 8 / bits)
            stride = emit(arith.IndexCastOp(value.strides[d], IndexType()))
            if bits % 8:
                stride = emit(arith.MuliOp(stride, emit(_index(8))))
            per = bits // 8 if bits % 8 == 0 else bits
            pitches.append(emit(arith.DivUIOp(stride, emit(_index(per)))))
        else:  # the source's row-major stride: the product of its sizes inside dim d
            pitch = source_size(rank - 1)
            for inner in reversed(range(d + 1, rank - 1)):
                pitch = emit(arith.MuliOp(pitch, source_size(inner)))
            pitches.append(pitch)
    view = MemRefType(
        element, [DYNAMIC_INDEX] * rank, StridedLayoutAttr([*([None] * (rank - 1)), 1], None)
    )
    emit(memref.ReinterpretCastOp.from_dynamic(base, [offset], sizes, [*pitches, 1], view))
    return ops


def _erase_map(init: copy.TensorMapGlobalOp) -> None:
    """Removes a map whose loads read views now: its rewrites and fences, then the map."""
    for use in list(init.map.uses):
        Rewriter.erase_op(use.operation)
    Rewriter.erase_op(init)
