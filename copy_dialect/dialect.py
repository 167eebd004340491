"""
The `copy` dialect: asynchronous GMEM/SMEM/TMEM copies on NVIDIA GPUs.

TMA tile copies and reductions, cluster multicast and leader-tracked copies, cp.async,
mbarriers, bulk groups, distributed shared memory (stores, reductions, copies and
arrivals into a peer CTA of the cluster), warp-specialized roles and named barriers, and
tcgen05 TMEM loads, stores and copies. Op names and semantics follow JAX's Mosaic GPU
(`LaunchContext.async_copy`, Pallas `plgpu`) and MLIR's `nvgpu`/`nvvm` dialects; the
verifiers encode the catalogue `rules.toml` (ids such as `C4` refer to it, each written in a
`# rule:` comment at its check) so that what Mosaic GPU only checks while tracing, and what
nobody checks before ptxas or the GPU fails, is rejected here, statically, with a note that
says how to fix it.

Memory: a `memref` with no memory space is GMEM; `#copy.smem` (or the integer space 3)
marks shared memory, `#copy.smem<swizzle = 128>` swizzled shared memory; `#copy.tmem`
marks tensor memory. Target-dependent rules are checked whenever an enclosing op carries
`copy.target = #copy.target<"sm_90a">`; kernel-dependent rules read `copy.cluster` (the
cluster shape, `array<i32: x, y, z>`) on the enclosing function.

Deviations from Mosaic GPU, each settled in docs/design.md:
- the implementation (`tma` | `cp_async`) may be chosen in the IR; the target only decides
  when the IR leaves it open;
- cp.async accepts `oob = zeros` (zero-filled tails, jax#40048) and rejects a user
  predicate instead of dropping it;
- TMA reductions accept exactly the op x element-type pairs an H200 ran;
- a swizzled copy's innermost box may be narrower than the swizzle span (the driver's
  `<=`); the SMEM buffer then pads each row to the span.
"""

from __future__ import annotations

from xdsl.ir import (
    Dialect,
)

from copy_dialect.assume import AssumeOp
from copy_dialect.attributes import (
    BarrierScopeAttr,
    BarrierType,
    CacheModeAttr,
    GroupKindAttr,
    ImplementationAttr,
    IssuerAttr,
    L2PolicyAttr,
    LeaderTrackedAttr,
    MatrixFormatAttr,
    MatrixShapeAttr,
    OOBModeAttr,
    ReductionKindAttr,
    SmemSpaceAttr,
    TargetAttr,
    TensorMapFieldAttr,
    TensorMapType,
    TmemCopyMulticastAttr,
    TmemCopyShapeAttr,
    TmemReduceAttr,
    TmemShapeAttr,
    TmemSpaceAttr,
    TmemWaitKindAttr,
)
from copy_dialect.barriers import (
    BarrierArriveExpectTxOp,
    BarrierArriveOp,
    BarrierInitOp,
    BarrierTestOp,
    BarrierWaitOp,
)
from copy_dialect.cluster_launch_control import QueryCancelOp, TryCancelOp
from copy_dialect.copies import AsyncCopyOp
from copy_dialect.descriptors import MatrixDescriptorOp, MatrixMajorAttr
from copy_dialect.dsmem import ClusterSyncOp, PeerArriveOp, PeerCopyOp, PeerStoreOp
from copy_dialect.effects import EffectAttr
from copy_dialect.gather4 import Gather4Op, Scatter4Op
from copy_dialect.gather4_prefetch import Gather4PrefetchOp
from copy_dialect.grid_dependency import GridDependencyWaitOp, LaunchDependentsOp
from copy_dialect.groups import CommitGroupOp, WaitGroupOp
from copy_dialect.im2col import Im2colLoadOp
from copy_dialect.instruction_descriptor import MmaInstructionDescriptorOp, MmaKindAttr
from copy_dialect.matrix import LdmatrixOp, StmatrixOp
from copy_dialect.mbarriers import (
    BarrierArriveDropOp,
    BarrierCompleteTxOp,
    BarrierExpectTxOp,
    BarrierInvalOp,
    BarrierReinitOp,
)
from copy_dialect.prefetch import PrefetchOp
from copy_dialect.roles import NamedBarrierArriveOp, NamedBarrierSyncOp, WarpSpecializeOp
from copy_dialect.smem import AllocSmemOp, FenceAsyncSharedOp
from copy_dialect.tensormap import (
    TensorMapFenceAcquireOp,
    TensorMapFenceReleaseOp,
    TensorMapGlobalOp,
    TensorMapReplaceOp,
)
from copy_dialect.tmem import (
    TmemAllocOp,
    TmemDeallocOp,
    TmemRelinquishOp,
    TmemWaitOp,
)
from copy_dialect.tmem_access import TmemLoadOp, TmemStoreOp
from copy_dialect.tmem_moves import SmemToTmemOp, TmemShiftOp
from copy_dialect.tmem_slice import TmemSliceOp

Copy = Dialect(
    "copy",
    [
        AsyncCopyOp,
        Im2colLoadOp,
        Gather4Op,
        Scatter4Op,
        Gather4PrefetchOp,
        PrefetchOp,
        CommitGroupOp,
        WaitGroupOp,
        BarrierInitOp,
        BarrierArriveOp,
        BarrierArriveExpectTxOp,
        BarrierWaitOp,
        BarrierTestOp,
        BarrierArriveDropOp,
        BarrierExpectTxOp,
        BarrierCompleteTxOp,
        BarrierInvalOp,
        BarrierReinitOp,
        WarpSpecializeOp,
        NamedBarrierSyncOp,
        NamedBarrierArriveOp,
        FenceAsyncSharedOp,
        AllocSmemOp,
        TmemAllocOp,
        TmemDeallocOp,
        TmemRelinquishOp,
        TmemLoadOp,
        TmemStoreOp,
        TmemWaitOp,
        LdmatrixOp,
        StmatrixOp,
        MatrixDescriptorOp,
        MmaInstructionDescriptorOp,
        SmemToTmemOp,
        TmemShiftOp,
        TmemSliceOp,
        PeerStoreOp,
        PeerCopyOp,
        PeerArriveOp,
        ClusterSyncOp,
        TensorMapGlobalOp,
        TensorMapReplaceOp,
        TensorMapFenceReleaseOp,
        TensorMapFenceAcquireOp,
        AssumeOp,
        GridDependencyWaitOp,
        TryCancelOp,
        QueryCancelOp,
        LaunchDependentsOp,
    ],
    [
        TargetAttr,
        SmemSpaceAttr,
        TmemSpaceAttr,
        LeaderTrackedAttr,
        BarrierType,
        ImplementationAttr,
        ReductionKindAttr,
        OOBModeAttr,
        CacheModeAttr,
        L2PolicyAttr,
        GroupKindAttr,
        BarrierScopeAttr,
        IssuerAttr,
        TmemShapeAttr,
        TmemReduceAttr,
        TmemWaitKindAttr,
        TmemCopyShapeAttr,
        TmemCopyMulticastAttr,
        MatrixShapeAttr,
        MatrixMajorAttr,
        MatrixFormatAttr,
        MmaKindAttr,
        TensorMapType,
        TensorMapFieldAttr,
        EffectAttr,
    ],
)
