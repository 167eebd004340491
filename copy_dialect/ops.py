"""The `copy` dialect's public API: `from copy_dialect import ops as copy`.

Every op, attribute, type and enum of the dialect, its registration (`Copy`), the geometry
that the verifiers and the lowering read (`AsyncCopyOp.geometry()`), and the size facts the
passes and the runtime share. Each is defined in the module of its family:

- `attributes`: enums, attributes and types; `memory`: memory spaces and sizes;
- `geometry`: what a copy moves and its tensor map; `verify_common`: shared verifier helpers;
- `copies` (`tma`, `bulk`, `cp_async`), `im2col`, `gather4`, `prefetch`, `groups`, `barriers`
  (`mbarriers`), `roles` (who issues: warp-specialized roles, named barriers), `smem`,
  `grid_dependency` (programmatic dependent launch), `cluster_launch_control` (CLC),
  `tmem` (`tmem_access`), `dsmem` (a peer CTA's SMEM), `matrix` (ldmatrix, stmatrix): the
  ops;
- `arrivals`: how many mbarrier arrivals an op makes (the analysis and the passes read it);
- `dialect`: the `Copy` dialect (its docstring describes the dialect as a whole).
"""

from copy_dialect.arrivals import (
    ISSUER_ARRIVAL,
    PER_THREAD_ARRIVAL,
    Arrivals,
    arrivals_of,
    executions,
)
from copy_dialect.assume import AssumeOp
from copy_dialect.attributes import (
    MAX_BARRIERS,
    SWIZZLES,
    BarrierScope,
    BarrierScopeAttr,
    BarrierType,
    CacheMode,
    CacheModeAttr,
    CachePolicy,
    GroupKind,
    GroupKindAttr,
    Implementation,
    ImplementationAttr,
    Issuer,
    IssuerAttr,
    L2Policy,
    L2PolicyAttr,
    LeaderTrackedAttr,
    MatrixFormat,
    MatrixFormatAttr,
    MatrixShape,
    MatrixShapeAttr,
    OOBMode,
    OOBModeAttr,
    ReductionKind,
    ReductionKindAttr,
    SmemSpaceAttr,
    TargetAttr,
    TensorMapField,
    TensorMapFieldAttr,
    TensorMapType,
    TmemCopyMulticast,
    TmemCopyMulticastAttr,
    TmemCopyShape,
    TmemCopyShapeAttr,
    TmemReduce,
    TmemReduceAttr,
    TmemShape,
    TmemShapeAttr,
    TmemSpaceAttr,
    TmemWaitKind,
    TmemWaitKindAttr,
    swizzle_period,
)
from copy_dialect.barriers import (
    BARRIER_BYTES,
    BarrierArriveExpectTxOp,
    BarrierArriveOp,
    BarrierInitOp,
    BarrierTestOp,
    BarrierWaitOp,
)
from copy_dialect.bulk import BULK_ALIGN, BulkSpan, bulk_span
from copy_dialect.cluster_launch_control import (
    CLC_MULTICAST,
    CLUSTER_LAUNCH_CONTROL,
    RESPONSE_BYTES,
    QueryCancelOp,
    TryCancelOp,
)
from copy_dialect.copies import AsyncCopyOp
from copy_dialect.descriptors import MatrixDescriptorOp, MatrixMajor, MatrixMajorAttr
from copy_dialect.dialect import Copy
from copy_dialect.dsmem import (
    RED_ASYNC_TABLE,
    ClusterSyncOp,
    PeerArriveOp,
    PeerCopyOp,
    PeerStoreOp,
    red_async_type,
    st_async_type,
)
from copy_dialect.gather4 import Gather4Geometry, Gather4Op, Scatter4Op
from copy_dialect.gather4_prefetch import Gather4PrefetchOp
from copy_dialect.geometry import (
    REDUCTIONS_BY_MAP,
    BoxGeometry,
    CopyGeometry,
    MulticastSplit,
    base_reduction,
    cp_async_chunk_bytes,
    cp_async_chunks,
    inner_aligned,
    multicast_split_dim,
    reduction_map_type,
    tensor_map_type,
)
from copy_dialect.grid_dependency import (
    PREDECESSOR_ACCESS,
    PREDECESSOR_ACCESSES,
    GridDependencyWaitOp,
    LaunchDependentsOp,
    argument_accesses,
    argument_of,
    gmem_accesses,
    predecessor_marks,
    waits_for_predecessor,
)
from copy_dialect.groups import CommitGroupOp, WaitGroupOp
from copy_dialect.im2col import Im2colGeometry, Im2colLoadOp
from copy_dialect.instruction_descriptor import MmaInstructionDescriptorOp, MmaKind, MmaKindAttr
from copy_dialect.matrix import LdmatrixOp, StmatrixOp
from copy_dialect.mbarriers import (
    BarrierArriveDropOp,
    BarrierCompleteTxOp,
    BarrierExpectTxOp,
    BarrierInvalOp,
    BarrierReinitOp,
)
from copy_dialect.memory import (
    GMEM,
    LAYOUT_OFFSET_FIX,
    SMEM,
    TMEM,
    bitwidth,
    element_strides,
    gmem_view,
    has_dynamic_layout_stride,
    layout_offset_problem,
    memory_space,
    recorded_strides,
    smem_alignment,
    smem_bytes,
    smem_strides,
    swizzle_of,
)
from copy_dialect.prefetch import PrefetchOp
from copy_dialect.roles import (
    REGISTER_FILE,
    WARP,
    WARPGROUP_WARPS,
    NamedBarrierArriveOp,
    NamedBarrierSyncOp,
    WarpSpecializeOp,
    enclosing_role,
)
from copy_dialect.smem import (
    SMEM_ARENA_ALIGNMENT,
    AllocSmemOp,
    FenceAsyncSharedOp,
    arena_layout,
    block_smem_bytes,
    smem_footprint,
)
from copy_dialect.tensormap import (
    TENSOR_MAP_BYTES,
    TensorMapFenceAcquireOp,
    TensorMapFenceReleaseOp,
    TensorMapGlobalOp,
    TensorMapReplaceOp,
)
from copy_dialect.tmem import (
    TMEM_COLUMNS,
    TMEM_COPY_BYTES,
    TMEM_REGS_PER_NUM,
    TmemAllocOp,
    TmemDeallocOp,
    TmemRelinquishOp,
    TmemWaitOp,
    cta_group_of,
    tmem_columns,
)
from copy_dialect.tmem_access import TmemLoadOp, TmemStoreOp
from copy_dialect.tmem_moves import SmemToTmemOp, TmemShiftOp
from copy_dialect.tmem_slice import TmemSliceOp
from copy_dialect.verify_common import kernel_cluster_shape, module_target

__all__ = [
    # ops
    "AsyncCopyOp", "Im2colLoadOp", "Gather4Op", "Scatter4Op", "Gather4PrefetchOp",
    "Gather4Geometry", "PrefetchOp", "CommitGroupOp", "WaitGroupOp",
    "BarrierInitOp",
    "BarrierArriveOp", "BarrierArriveExpectTxOp", "BarrierWaitOp", "BarrierTestOp",
    "BarrierArriveDropOp", "BarrierExpectTxOp", "BarrierCompleteTxOp", "BarrierInvalOp",
    "BarrierReinitOp",
    "WarpSpecializeOp", "NamedBarrierSyncOp", "NamedBarrierArriveOp", "FenceAsyncSharedOp",
    "AllocSmemOp", "TmemAllocOp", "TmemDeallocOp", "TmemLoadOp", "TmemStoreOp", "TmemWaitOp",
    "TmemRelinquishOp", "TmemShiftOp", "TmemSliceOp",
    "SmemToTmemOp", "PeerStoreOp", "PeerCopyOp", "PeerArriveOp", "ClusterSyncOp",
    "TensorMapGlobalOp",
    "TensorMapReplaceOp", "TensorMapFenceReleaseOp", "TensorMapFenceAcquireOp", "AssumeOp",
    "LdmatrixOp", "StmatrixOp", "MatrixDescriptorOp", "MmaInstructionDescriptorOp",
    "GridDependencyWaitOp", "LaunchDependentsOp", "TryCancelOp", "QueryCancelOp",
    "Copy",
    # attributes, types and enums
    "TargetAttr", "SmemSpaceAttr", "TmemSpaceAttr", "LeaderTrackedAttr", "BarrierType",
    "Implementation", "ImplementationAttr", "ReductionKind", "ReductionKindAttr", "OOBMode",
    "OOBModeAttr", "CacheMode", "CacheModeAttr", "CachePolicy", "L2Policy", "L2PolicyAttr",
    "GroupKind", "GroupKindAttr", "BarrierScope",
    "BarrierScopeAttr", "Issuer", "IssuerAttr", "TmemShape", "TmemShapeAttr", "TmemReduce",
    "TmemReduceAttr",
    "TmemWaitKind", "TmemWaitKindAttr", "TmemCopyShape", "TmemCopyShapeAttr",
    "TmemCopyMulticast", "TmemCopyMulticastAttr", "SWIZZLES", "swizzle_period",
    "MatrixShape", "MatrixShapeAttr", "MatrixMajor", "MatrixMajorAttr", "MatrixFormat",
    "MatrixFormatAttr", "MmaKind", "MmaKindAttr",
    "TensorMapType", "TensorMapField", "TensorMapFieldAttr", "TENSOR_MAP_BYTES",
    # geometry and tensor maps
    "BoxGeometry", "CopyGeometry", "Im2colGeometry", "MulticastSplit", "multicast_split_dim",
    "tensor_map_type",
    "reduction_map_type", "base_reduction", "REDUCTIONS_BY_MAP", "cp_async_chunk_bytes",
    "cp_async_chunks", "inner_aligned",
    "BulkSpan", "bulk_span", "BULK_ALIGN",
    # memory spaces, sizes and the kernel's SMEM and TMEM
    "GMEM", "SMEM", "TMEM", "memory_space", "swizzle_of", "bitwidth", "smem_bytes",
    "element_strides", "gmem_view", "has_dynamic_layout_stride", "recorded_strides",
    "layout_offset_problem", "LAYOUT_OFFSET_FIX",
    "smem_strides", "smem_alignment", "smem_footprint", "SMEM_ARENA_ALIGNMENT", "arena_layout",
    "block_smem_bytes", "kernel_cluster_shape", "module_target", "MAX_BARRIERS", "BARRIER_BYTES",
    "TMEM_COLUMNS", "TMEM_REGS_PER_NUM", "TMEM_COPY_BYTES", "tmem_columns", "cta_group_of",
    # distributed shared memory
    "red_async_type", "st_async_type", "RED_ASYNC_TABLE",
    # programmatic dependent launch
    "PREDECESSOR_ACCESS", "PREDECESSOR_ACCESSES", "waits_for_predecessor",
    # cluster launch control
    "CLUSTER_LAUNCH_CONTROL", "CLC_MULTICAST", "RESPONSE_BYTES",
    "gmem_accesses", "argument_of", "argument_accesses", "predecessor_marks",
    # who issues, and the arrivals an op makes
    "enclosing_role", "WARP", "WARPGROUP_WARPS", "REGISTER_FILE",
    "Arrivals", "arrivals_of", "executions", "ISSUER_ARRIVAL", "PER_THREAD_ARRIVAL",
]  # fmt: skip
