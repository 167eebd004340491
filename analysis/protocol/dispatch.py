"""How an agent follows each op that is more to the protocol than the values it gives: the
op -> handler table the run hands its agents (`walk.Agent.op`). A handler takes the agent,
the op and the mask of the threads that reach it, and returns the steps of its walk (a
generator, for an op that may block or holds a region), or None when it is done at once
(the agent then computes the op's results, if any, as a generic op's).

The ops not here: the other copy ops (`alloc_smem`) only give values; `func.return`, the
threads' loads and stores, `gpu.barrier` and the `gpu` ids the agent follows itself; every
other op is generic (`values`), but an op that takes SMEM and whose effects the analysis
does not own (`facts.Kernel.foreign`): the agent follows it with `FOREIGN`."""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects import func, scf
from xdsl.ir import Operation

from analysis.protocol import (
    foreign,
    ops_barriers,
    ops_clc,
    ops_cluster,
    ops_copies,
    ops_dsmem,
    ops_mma,
    ops_roles,
    ops_scf,
    ops_tensormaps,
    ops_tmem,
)
from analysis.protocol.steps import Step
from copy_dialect import ops as copy


class OpTable(dict[type[Operation], Step]):
    """Handlers by op class, and by op name for the ops of the NVVM dialect, which lives with
    the lowering (`passes.nvvm`) that the analysis does not import: a class not in the table
    is looked up once by its name, and remembered either way."""

    def __init__(self, by_class: Mapping[type[Operation], Step], by_name: Mapping[str, Step]):
        super().__init__(by_class)
        self.by_name = dict(by_name)
        self.others: set[type[Operation]] = set()

    def __contains__(self, kind: object) -> bool:
        if dict.__contains__(self, kind):
            return True
        if kind in self.others or not isinstance(kind, type):
            return False
        step = self.by_name.get(getattr(kind, "name", ""))
        if step is None:
            self.others.add(kind)
            return False
        self[kind] = step
        return True


BY_CLASS: Mapping[type[Operation], Step] = {
    # structured control flow (an scf.while only when it holds copy ops)
    scf.IfOp: ops_scf.if_op,
    scf.ForOp: ops_scf.for_op,
    scf.WhileOp: ops_scf.while_op,
    # mbarriers
    copy.BarrierInitOp: ops_barriers.barrier_init,
    copy.BarrierArriveOp: ops_barriers.arrive,
    copy.BarrierArriveExpectTxOp: ops_barriers.expect_tx,
    copy.BarrierWaitOp: ops_barriers.wait,
    copy.BarrierTestOp: ops_barriers.test,
    copy.BarrierArriveDropOp: ops_barriers.arrive_drop,
    copy.BarrierExpectTxOp: ops_barriers.expect_tx_only,
    copy.BarrierCompleteTxOp: ops_barriers.complete_tx,
    copy.BarrierInvalOp: ops_barriers.barrier_inval,
    copy.BarrierReinitOp: ops_barriers.barrier_reinit,
    # async copies and their groups
    copy.AsyncCopyOp: ops_copies.async_copy,
    copy.Im2colLoadOp: ops_copies.async_copy,  # a TMA load, as the protocol sees it
    copy.Gather4Op: ops_copies.async_copy,  # a TMA load of its 4-row tile
    copy.Scatter4Op: ops_copies.async_copy,  # a TMA store of its 4-row tile
    copy.Gather4PrefetchOp: ops_copies.prefetch,
    copy.CommitGroupOp: ops_copies.commit,
    copy.WaitGroupOp: ops_copies.wait_group,
    copy.FenceAsyncSharedOp: ops_copies.fence,
    copy.PrefetchOp: ops_copies.prefetch,
    # distributed shared memory
    copy.PeerStoreOp: ops_dsmem.peer_store,
    copy.PeerCopyOp: ops_dsmem.peer_copy,
    copy.PeerArriveOp: ops_dsmem.peer_arrive,
    copy.ClusterSyncOp: ops_cluster.cluster_sync,
    # cluster launch control: the response slot's async write and its reads
    copy.TryCancelOp: ops_clc.try_cancel,
    copy.QueryCancelOp: ops_clc.query_cancel,
    # tensor maps in global memory
    copy.TensorMapReplaceOp: ops_tensormaps.tensormap_replace,
    copy.TensorMapFenceReleaseOp: ops_tensormaps.tensormap_release,
    copy.TensorMapFenceAcquireOp: ops_tensormaps.tensormap_acquire,
    # TMEM
    copy.TmemAllocOp: ops_tmem.tmem_alloc,
    copy.TmemDeallocOp: ops_tmem.tmem_dealloc,
    copy.TmemLoadOp: ops_tmem.tmem_load,
    copy.TmemStoreOp: ops_tmem.tmem_store,
    copy.TmemWaitOp: ops_tmem.tmem_wait,
    copy.SmemToTmemOp: ops_tmem.smem_to_tmem,
    copy.TmemShiftOp: ops_tmem.tmem_shift,
    # roles and named barriers
    copy.WarpSpecializeOp: ops_roles.warp_specialize,
    copy.NamedBarrierSyncOp: ops_roles.named_sync,
    copy.NamedBarrierArriveOp: ops_roles.named_arrive,
}

BY_NAME: Mapping[str, Step] = {
    # tensor cores: their reads through SMEM descriptors
    **ops_mma.STEPS,
    # tcgen05's thread-sync fences (P14)
    **ops_tmem.STEPS,
}

STEPS: Mapping[type[Operation], Step] = OpTable(BY_CLASS, BY_NAME)

CLUSTER_STEPS: Mapping[type[Operation], Step] = OpTable(
    {
        **BY_CLASS,
        copy.BarrierInitOp: ops_cluster.clustered_init,
        copy.BarrierInvalOp: ops_cluster.clustered_inval,
        copy.BarrierReinitOp: ops_cluster.clustered_reinit,
        copy.AsyncCopyOp: ops_cluster.cluster_copy,
        copy.Gather4Op: ops_cluster.cluster_gather4,
        func.ReturnOp: ops_cluster.kernel_return,
    },
    BY_NAME,
)
"""The table of a run that models the cluster rank by rank (`cluster`): the barrier ops
that end with the cluster barrier, the loads whose bytes cross CTAs, and the return (no
peer's write or arrival may reach a CTA after it)."""

FOREIGN: Step = foreign.foreign_op
"""How an agent follows an op that takes SMEM and that no entry of `STEPS`, nor the agent
itself, owns: by the effects it declares or its traits name (`foreign`)."""
