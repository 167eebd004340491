"""`copy-legalize{target=sm_XX}`: rewrites copy-dialect IR written for one target into IR
that verifies and runs on another, wherever the semantics can be kept; what it cannot keep
is a diagnostic at the op (rules LG1-LG7, `copy_dialect.portability`).

On a target without TMA (sm_80, sm_86, sm_89):

- a TMA load (`impl tma` or `bulk`, or left open on a TMA target) becomes a cp.async copy
  (`impl cp_async`, `oob zeros` where the TMA copy zero-filled), followed by its own
  `copy.commit_group cp_async`; `collective` and `leader_tracked` are dropped (each CTA
  loads its own tile), and so are the L2 policies of the tensor map;
- each `copy.barrier_wait` on a barrier group that tracked those loads becomes
  `copy.wait_group cp_async N` (which ends with the block barrier, so every thread's chunks
  are visible), N the number of groups committed after the load's in the same block when
  that is static, else 0; the group's `barrier_init`, `arrive_expect_tx` and `expect_tx` are
  removed;
- a TMA store becomes thread stores of the tile: the block's threads walk the box in
  row-major order (consecutive threads, consecutive elements of a row: coalesced), each
  element stored when it lies inside the GMEM array (the TMA store's clipping); the bulk
  `commit_group` is removed and a bulk `wait_group` becomes a block barrier (`gpu.barrier`:
  the SMEM the store read may be reused after it); a TMA reduction does the same walk with
  `memref.atomic_rmw` of the matching kind (`portability.thread_atomic`: red.global);
- `copy.fence_async_shared` becomes `gpu.barrier` (the block barrier it includes; the proxy
  fence has no meaning without TMA), a TMA `copy.prefetch` (a hint) is removed;
- a swizzled SMEM buffer becomes the plain layout (cp.async writes no swizzle); thread
  accesses through memref indices follow the type;
- `copy.cluster` is dropped from the kernels (no clusters before sm_90).

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
from xdsl.dialects import arith, builtin, func, gpu, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from copy_dialect import ops as copy
from copy_dialect import portability
from copy_dialect.roles import kernel_block_threads
from copy_dialect.target import TARGETS, Target
from copy_dialect.verify_common import constant_int

TMA_IMPLEMENTATIONS = (copy.Implementation.TMA, copy.Implementation.BULK)

NO_FORM = {
    "copy.im2col_load": "an im2col TMA load",
    "copy.tensormap_global": "a tensor map in global memory",
    "copy.tensormap_replace": "a tensor-map rewrite",
    "copy.tensormap_fence_release": "a tensor-map fence",
    "copy.tensormap_fence_acquire": "a tensor-map fence",
    "copy.peer_store": "a store to a peer CTA's SMEM (clusters)",
    "copy.peer_copy": "a copy to a peer CTA's SMEM (clusters)",
    "copy.peer_arrive": "an arrival on a peer CTA's barrier (clusters)",
    "copy.barrier_complete_tx": "a transaction-count completion (sm_90)",
}
"""Ops with no pre-Hopper form that the pass can produce (rule LG3)."""

TRACKING_USERS = (copy.BarrierWaitOp, copy.BarrierArriveExpectTxOp, copy.BarrierExpectTxOp)
"""What may use a barrier group besides the TMA loads it tracks (else LG4)."""


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
    for kernel in kernels:
        for op in kernel.walk():
            if not target.has_tcgen05:
                portability.check_tmem(op, target)
        if not target.has_tma:
            plans.append(_Kernel(kernel, target).plan())
        else:
            _check_cluster_features(kernel, target)
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
    if not isinstance(op, copy.AsyncCopyOp):
        return False
    return op.resolved_implementation() in TMA_IMPLEMENTATIONS


def _index(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


class _Kernel:
    """One kernel's legalization for a target without TMA."""

    def __init__(self, kernel: func.FuncOp, target: Target):
        self.kernel = kernel
        self.target = target
        self.atomics: dict[copy.AsyncCopyOp, int] = {}
        """The memref.atomic_rmw kind of each TMA reduction (`portability.thread_atomic`)."""

    def plan(self) -> Callable[[], None]:
        """Checks the kernel (what it cannot keep raises) and returns its rewrite. Everything
        is decided from the IR as written (its implementations resolve against its own
        target)."""
        ops = list(self.kernel.walk())
        loads = [op for op in ops if _is_tma(op) and op.is_load]
        stores = [op for op in ops if _is_tma(op) and not op.is_load]
        self.check(ops, loads, stores)
        groups = self.tracking_groups(loads)
        return lambda: self.rewrite(ops, loads, stores, groups)

    def rewrite(
        self,
        ops: list[Operation],
        loads: list[copy.AsyncCopyOp],
        stores: list[copy.AsyncCopyOp],
        groups: list[SSAValue],
    ) -> None:
        commits = {load: self.rewrite_load(load) for load in loads}
        for group in groups:
            self.rewrite_waits(group, commits)
        for store in stores:
            self.rewrite_store(store)
        for op in ops:
            self.rewrite_other(op)
        for op in ops:
            if isinstance(op, copy.AllocSmemOp):
                self.unswizzle(op)
        if not self.target.has_clusters:
            self.kernel.attributes.pop("copy.cluster", None)

    # -- what cannot be kept -------------------------------------------------------------

    def check(
        self, ops: list[Operation], loads: list[copy.AsyncCopyOp], stores: list[copy.AsyncCopyOp]
    ) -> None:
        for op in ops:
            if op.name in NO_FORM:
                portability.check_no_form(op, NO_FORM[op.name], self.target)
            if isinstance(op, copy.WarpSpecializeOp) and any(_is_tma(inner) for inner in op.walk()):
                portability.check_no_form(
                    op,
                    "a TMA copy in a warp-specialized role (cp.async groups complete for the "
                    "thread that issued them, not for a consumer role)",
                    self.target,
                )
        for copy_op in [*loads, *stores]:
            g = copy_op.geometry()
            if g.predicate is not None:
                portability.check_predicate(copy_op, self.target)
            if any(d < 0 for d in g.gmem_type.get_shape()):
                portability.check_no_form(
                    copy_op,
                    f"a TMA copy of a dynamic GMEM ref ({g.gmem_type})",
                    self.target,
                    note=f"give every dimension of the {g.element_type} GMEM ref a size "
                    "(cp.async computes its chunks from the shape)",
                )
            if copy_op.map is not None:
                portability.check_no_form(
                    copy_op, "a TMA copy through a tensor map in global memory", self.target
                )
        for load in loads:
            portability.check_oob(load, load.geometry().oob, self.target)
        for store in stores:
            g = store.geometry()
            if g.reduction is not None:
                self.atomics[store] = portability.thread_atomic(
                    store, g.reduction, g.element_type, self.target
                )
            portability.check_threads(store, kernel_block_threads(self.kernel), self.target)

    def tracking_groups(self, loads: list[copy.AsyncCopyOp]) -> list[SSAValue]:
        """The barrier groups of the TMA loads, each checked to serve only them (LG4)."""
        groups: list[SSAValue] = []
        for load in loads:
            bar = load.geometry().barrier
            if bar is not None and bar not in groups:
                groups.append(bar)
        for group in groups:
            if not isinstance(group.owner, copy.BarrierInitOp):
                portability.check_no_form(
                    load, "a TMA load on a barrier group passed in", self.target
                )
            for use in group.uses:
                user = use.operation
                if user not in loads and not isinstance(user, TRACKING_USERS):
                    portability.check_barrier_users(group, user, self.target)
        return groups

    # -- loads and their barriers --------------------------------------------------------

    def rewrite_load(self, load: copy.AsyncCopyOp) -> copy.CommitGroupOp:
        """The cp.async copy of `load`'s box, and the commit of its group after it."""
        g = load.geometry()
        oob = "promise_in_bounds" if g.oob == copy.OOBMode.PROMISE_IN_BOUNDS else "zeros"
        new = copy.AsyncCopyOp(
            g.gmem,
            g.smem,
            src_indices=g.gmem_indices,
            dst_indices=g.smem_indices,
            implementation="cp_async",
            oob=oob,
        )
        commit = copy.CommitGroupOp("cp_async")
        Rewriter.replace_op(load, [new, commit], [])
        return commit

    def rewrite_waits(
        self, group: SSAValue, commits: dict[copy.AsyncCopyOp, copy.CommitGroupOp]
    ) -> None:
        init = group.owner
        for use in list(group.uses):
            user = use.operation
            if isinstance(user, copy.BarrierWaitOp):
                guarded = [
                    c for load, c in commits.items() if load.geometry().barrier is group
                    and _same_slot(load.geometry().barrier_index, user.index)
                ]  # fmt: skip
                pending = _newer_groups(guarded, user)
                Rewriter.replace_op(user, copy.WaitGroupOp("cp_async", pending))
            else:
                Rewriter.erase_op(user)
        assert isinstance(init, Operation)
        Rewriter.erase_op(init)

    # -- stores ----------------------------------------------------------------------------

    def rewrite_store(self, store: copy.AsyncCopyOp) -> None:
        """Thread stores of `store`'s tile, clipped to the GMEM array (a reduction's: thread
        atomics, `memref.atomic_rmw`)."""
        g = store.geometry()
        threads = kernel_block_threads(self.kernel)
        assert threads is not None
        box = list(g.box_shape)
        gmem_shape = g.gmem_type.get_shape()
        ops: list[Operation] = []

        def emit(op: Operation) -> SSAValue:
            ops.append(op)
            return op.results[0]

        tid = emit(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X)))
        total = emit(_index(prod(box)))
        step = emit(_index(threads))
        body = Block(arg_types=[IndexType()])
        inner: list[Operation] = []

        def put(op: Operation) -> SSAValue:
            inner.append(op)
            return op.results[0]

        # Row-major coordinates of element i of the box, innermost fastest.
        rest = body.args[0]
        coords: list[SSAValue] = []
        for n, size in enumerate(reversed(box)):
            if n == len(box) - 1:
                coords.append(rest)
                break
            c = emit(_index(size))
            coords.append(put(arith.RemUIOp(rest, c)))
            rest = put(arith.DivUIOp(rest, c))
        coords.reverse()
        value = put(memref.LoadOp.get(g.smem, [*g.smem_indices, *coords]))
        lead = len(gmem_shape) - len(box)
        indices = list(g.gmem_indices[:lead])
        indices += [
            put(arith.AddiOp(o, c)) for o, c in zip(g.gmem_indices[lead:], coords, strict=True)
        ]
        inside: SSAValue | None = None
        for index, size in zip(indices, gmem_shape, strict=True):
            ok = put(arith.CmpiOp(index, emit(_index(size)), "ult"))
            inside = ok if inside is None else put(arith.AndIOp(inside, ok))
        assert inside is not None
        then = Block()
        if store in self.atomics:  # a reduction: red.global of the matching op and type
            write: Operation = memref.AtomicRMWOp.create(
                operands=[value, g.gmem, *indices],
                result_types=[g.element_type],
                properties={"kind": IntegerAttr(self.atomics[store], i64)},
            )
        else:
            write = memref.StoreOp.get(value, g.gmem, indices)
        then.add_ops([write, scf.YieldOp()])
        inner.append(scf.IfOp(inside, [], Region(then)))
        inner.append(scf.YieldOp())
        body.add_ops(inner)
        ops.append(scf.ForOp(tid, total, step, [], Region(body)))
        Rewriter.replace_op(store, ops, [])

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
                Rewriter.replace_op(op, gpu.BarrierOp())
        elif isinstance(op, copy.FenceAsyncSharedOp):
            Rewriter.replace_op(op, gpu.BarrierOp())
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


def _same_slot(load_index: SSAValue | None, wait_index: SSAValue | None) -> bool:
    """Whether a wait on `wait_index` may be waiting for a load signalling `load_index`."""
    if load_index is None or wait_index is None:
        return True
    a, b = constant_int(load_index), constant_int(wait_index)
    return a is None or b is None or a == b


def _newer_groups(commits: list[copy.CommitGroupOp], wait: Operation) -> int:
    """The cp.async groups a wait may leave pending: those committed after the latest of the
    guarded loads' commits, when every guarded load is committed earlier in the wait's own
    block and nothing in between commits inside a region; else 0."""
    block = wait.parent
    if not commits or any(c.parent is not block for c in commits):
        return 0
    assert block is not None
    order = {op: n for n, op in enumerate(block.ops)}
    latest = max(order[c] for c in commits)
    if latest > order[wait]:
        return 0
    newer = 0
    for op in list(block.ops)[latest + 1 : order[wait]]:
        if isinstance(op, copy.CommitGroupOp) and op.group.data is copy.GroupKind.CP_ASYNC:
            newer += 1
        elif op.regions and any(isinstance(o, copy.CommitGroupOp) for o in op.walk()):
            return 0
    return newer


def _ends_kernel(op: Operation) -> bool:
    """Whether only the kernel's return follows `op`."""
    nxt = op.next_op
    return isinstance(op.parent_op(), func.FuncOp) and isinstance(nxt, func.ReturnOp)
