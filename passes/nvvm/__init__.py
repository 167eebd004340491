"""The `nvvm` dialect: the subset of MLIR's NVVM dialect that the copy lowering emits.

Mirrors MLIR's [NVVM dialect](https://mlir.llvm.org/docs/Dialects/NVVMDialect/): op names,
property names and custom assembly are upstream's, so what `copy-opt` prints after the
lowering reads as upstream NVVM. For the ops that LLVM 19 has, the syntax is release/19.x's
(it parses in Debian's `mlir-opt-19`); the ops that came later (`nvvm.mapa`, the TMA reduce
and prefetch, tcgen05) use the current upstream syntax. Python field names are snake_case;
property names keep upstream's spelling (`redKind`, `srcFormat`, `operandSegmentSizes`).

Each op prints its own LLVM IR (`to_llvm_ir`, see `llvm_ir.IREmitter`), like an upstream
op's `llvmBuilder`: a call of the LLVM 22 NVPTX intrinsic where LLVM 22 has one, inline PTX
(`call void asm sideeffect`) otherwise and wherever an op carries a predicate (`emit`).

One module per family of upstream's NVVMOps.td: `sreg` (special registers, made from a
table), `barrier` (barriers and fences), `mbarrier`, `cp_async`, `bulk` (the bulk group and
the non-tensor bulk copies and prefetch), `bulk_tensor` (the TMA tensor load and store),
`bulk_reduce` (the TMA reduction), `prefetch` (the tensor-map prefetch and the TMA tensor
prefetch), `mapa`, `shfl` (warp shuffles), `tcgen05`; `attributes` holds what they share.
This module assembles them into the `NVVM` dialect.

Deviations from upstream:
- `nvvm.mbarrier.test_wait.parity.shared` is ours (sm_80 has no `try_wait`);
- the mbarrier arrivals of ours beyond LLVM 19's (`arrive.nocomplete`, `arrive_drop` and its
  `.nocomplete`/`.expect_tx` forms) have no state result, and they, `expect_tx`,
  `complete_tx` and `inval` print inline PTX (`.shared::cta`, no scope or semantics
  properties: CTA scope, PTX's default semantics);
- the special registers have no `range` attribute;
- `nvvm.cp.async.bulk.tensor.shared.cluster.global` has no `mode`/`isCTAOnly`: as in
  LLVM 19 im2col is implied by im2col offsets; `group` is current upstream's; the
  destination may be `!llvm.ptr<3>` (LLVM 19; the op casts it to addrspace 7) or `<7>`;
- `nvvm.cp.async.bulk.tensor.global.shared.cta` prints LLVM 19's `type(operands)` but
  has current upstream's `l2CacheHint` operand (its generic form has 4 segments where
  LLVM 19's has 3);
- the TMA store, reduce and prefetch have no `mode` property (tile mode; prefetch takes
  im2col offsets like the load).
"""

from xdsl.ir import Dialect

from passes.nvvm.attributes import (
    ANY_PTR,
    GENERIC_PTR,
    GLOBAL_PTR,
    SHARED_PTR,
    TENSOR_PTR,
    CTAGroupKind,
    CTAGroupKindAttr,
    addr_space,
    ptr,
)
from passes.nvvm.barrier import (
    Barrier0Op,
    ClusterArriveOp,
    ClusterArriveRelaxedOp,
    ClusterWaitOp,
    FenceMbarrierInitOp,
    FenceProxyOp,
    ProxyKind,
    ProxyKindAttr,
    SharedSpace,
    SharedSpaceAttr,
)
from passes.nvvm.bulk import (
    CpAsyncBulkCommitGroupOp,
    CpAsyncBulkGlobalSharedCtaOp,
    CpAsyncBulkPrefetchOp,
    CpAsyncBulkSharedClusterGlobalOp,
    CpAsyncBulkWaitGroupOp,
)
from passes.nvvm.bulk_reduce import CpAsyncBulkTensorReduceOp, TMAReduxKind, TMAReduxKindAttr
from passes.nvvm.bulk_tensor import (
    CpAsyncBulkTensorGlobalSharedCtaOp,
    CpAsyncBulkTensorSharedClusterGlobalOp,
)
from passes.nvvm.cp_async import (
    CpAsyncCommitGroupOp,
    CpAsyncMBarrierArriveSharedOp,
    CpAsyncSharedGlobalOp,
    CpAsyncWaitGroupOp,
    LoadCacheModifier,
    LoadCacheModifierAttr,
)
from passes.nvvm.mapa import MapaSharedClusterOp
from passes.nvvm.mbarrier import (
    MBarrierArriveDropExpectTxOp,
    MBarrierArriveDropNocompleteOp,
    MBarrierArriveDropOp,
    MBarrierArriveExpectTxSharedOp,
    MBarrierArriveNocompleteSharedOp,
    MBarrierArriveSharedOp,
    MBarrierCompleteTxOp,
    MBarrierExpectTxOp,
    MBarrierInitSharedOp,
    MBarrierInvalSharedOp,
    MBarrierTestWaitParitySharedOp,
    MBarrierTryWaitParitySharedOp,
)
from passes.nvvm.prefetch import CpAsyncBulkTensorPrefetchOp, PrefetchTensorMapOp
from passes.nvvm.red import RedGlobalOp, RedSharedOp
from passes.nvvm.shfl import ShflKind, ShflKindAttr, ShflOp
from passes.nvvm.sreg import (
    SREGS,
    BlockDimXOp,
    BlockDimYOp,
    BlockDimZOp,
    BlockIdXOp,
    BlockIdYOp,
    BlockIdZOp,
    BlockInClusterIdXOp,
    BlockInClusterIdYOp,
    BlockInClusterIdZOp,
    ClusterCtaRankOp,
    ClusterDimBlocksXOp,
    ClusterDimBlocksYOp,
    ClusterDimBlocksZOp,
    ClusterDimXOp,
    ClusterDimYOp,
    ClusterDimZOp,
    ClusterIdXOp,
    ClusterIdYOp,
    ClusterIdZOp,
    ClusterNCtaRankOp,
    GridDimXOp,
    GridDimYOp,
    GridDimZOp,
    LaneIdOp,
    SpecialRegisterOp,
    ThreadIdXOp,
    ThreadIdYOp,
    ThreadIdZOp,
    WarpDimOp,
    WarpIdOp,
    WarpSizeOp,
    read_sreg,
)
from passes.nvvm.tcgen05 import (
    TMEM_REGS,
    V4I32,
    Tcgen05AllocOp,
    Tcgen05CpMulticast,
    Tcgen05CpMulticastAttr,
    Tcgen05CpOp,
    Tcgen05CpShapeAttr,
    Tcgen05CpSrcFormat,
    Tcgen05CpSrcFormatAttr,
    Tcgen05DeallocOp,
    Tcgen05LdOp,
    Tcgen05LdStShapeAttr,
    Tcgen05RelinquishAllocPermitOp,
    Tcgen05StOp,
    Tcgen05WaitKindAttr,
    Tcgen05WaitOp,
)

NVVM = Dialect(
    "nvvm",
    [
        *SREGS.values(),
        Barrier0Op,
        ClusterArriveOp,
        ClusterArriveRelaxedOp,
        ClusterWaitOp,
        FenceMbarrierInitOp,
        FenceProxyOp,
        MBarrierInitSharedOp,
        MBarrierArriveSharedOp,
        MBarrierArriveExpectTxSharedOp,
        MBarrierTryWaitParitySharedOp,
        MBarrierTestWaitParitySharedOp,
        MBarrierArriveDropExpectTxOp,
        MBarrierArriveDropNocompleteOp,
        MBarrierArriveDropOp,
        MBarrierArriveNocompleteSharedOp,
        MBarrierCompleteTxOp,
        MBarrierExpectTxOp,
        MBarrierInvalSharedOp,
        CpAsyncSharedGlobalOp,
        CpAsyncCommitGroupOp,
        CpAsyncWaitGroupOp,
        CpAsyncMBarrierArriveSharedOp,
        CpAsyncBulkCommitGroupOp,
        CpAsyncBulkWaitGroupOp,
        CpAsyncBulkSharedClusterGlobalOp,
        CpAsyncBulkGlobalSharedCtaOp,
        CpAsyncBulkPrefetchOp,
        CpAsyncBulkTensorSharedClusterGlobalOp,
        CpAsyncBulkTensorGlobalSharedCtaOp,
        CpAsyncBulkTensorReduceOp,
        CpAsyncBulkTensorPrefetchOp,
        RedGlobalOp,
        RedSharedOp,
        PrefetchTensorMapOp,
        MapaSharedClusterOp,
        ShflOp,
        Tcgen05AllocOp,
        Tcgen05DeallocOp,
        Tcgen05RelinquishAllocPermitOp,
        Tcgen05WaitOp,
        Tcgen05CpOp,
        Tcgen05LdOp,
        Tcgen05StOp,
    ],
    [
        ProxyKindAttr,
        SharedSpaceAttr,
        LoadCacheModifierAttr,
        CTAGroupKindAttr,
        TMAReduxKindAttr,
        ShflKindAttr,
        Tcgen05WaitKindAttr,
        Tcgen05CpShapeAttr,
        Tcgen05CpMulticastAttr,
        Tcgen05CpSrcFormatAttr,
        Tcgen05LdStShapeAttr,
    ],
)

__all__ = [
    "RedGlobalOp",
    "RedSharedOp",
    "ANY_PTR",
    "Barrier0Op",
    "BlockDimXOp",
    "BlockDimYOp",
    "BlockDimZOp",
    "BlockIdXOp",
    "BlockIdYOp",
    "BlockIdZOp",
    "BlockInClusterIdXOp",
    "BlockInClusterIdYOp",
    "BlockInClusterIdZOp",
    "CTAGroupKind",
    "CTAGroupKindAttr",
    "ClusterArriveOp",
    "ClusterArriveRelaxedOp",
    "ClusterCtaRankOp",
    "ClusterDimBlocksXOp",
    "ClusterDimBlocksYOp",
    "ClusterDimBlocksZOp",
    "ClusterDimXOp",
    "ClusterDimYOp",
    "ClusterDimZOp",
    "ClusterIdXOp",
    "ClusterIdYOp",
    "ClusterIdZOp",
    "ClusterNCtaRankOp",
    "ClusterWaitOp",
    "CpAsyncBulkCommitGroupOp",
    "CpAsyncBulkGlobalSharedCtaOp",
    "CpAsyncBulkPrefetchOp",
    "CpAsyncBulkSharedClusterGlobalOp",
    "CpAsyncBulkTensorGlobalSharedCtaOp",
    "CpAsyncBulkTensorPrefetchOp",
    "CpAsyncBulkTensorReduceOp",
    "CpAsyncBulkTensorSharedClusterGlobalOp",
    "CpAsyncBulkWaitGroupOp",
    "CpAsyncCommitGroupOp",
    "CpAsyncMBarrierArriveSharedOp",
    "CpAsyncSharedGlobalOp",
    "CpAsyncWaitGroupOp",
    "FenceMbarrierInitOp",
    "FenceProxyOp",
    "GENERIC_PTR",
    "GLOBAL_PTR",
    "GridDimXOp",
    "GridDimYOp",
    "GridDimZOp",
    "LaneIdOp",
    "LoadCacheModifier",
    "LoadCacheModifierAttr",
    "MBarrierArriveDropExpectTxOp",
    "MBarrierArriveDropNocompleteOp",
    "MBarrierArriveDropOp",
    "MBarrierArriveNocompleteSharedOp",
    "MBarrierCompleteTxOp",
    "MBarrierExpectTxOp",
    "MBarrierInvalSharedOp",
    "MBarrierArriveExpectTxSharedOp",
    "MBarrierArriveSharedOp",
    "MBarrierInitSharedOp",
    "MBarrierTestWaitParitySharedOp",
    "MBarrierTryWaitParitySharedOp",
    "NVVM",
    "PrefetchTensorMapOp",
    "ProxyKind",
    "ProxyKindAttr",
    "SHARED_PTR",
    "SREGS",
    "SharedSpace",
    "SharedSpaceAttr",
    "ShflKind",
    "ShflKindAttr",
    "ShflOp",
    "SpecialRegisterOp",
    "TENSOR_PTR",
    "TMAReduxKind",
    "TMAReduxKindAttr",
    "TMEM_REGS",
    "Tcgen05AllocOp",
    "Tcgen05CpMulticast",
    "Tcgen05CpMulticastAttr",
    "Tcgen05CpOp",
    "Tcgen05CpShapeAttr",
    "Tcgen05CpSrcFormat",
    "Tcgen05CpSrcFormatAttr",
    "Tcgen05DeallocOp",
    "Tcgen05LdOp",
    "Tcgen05LdStShapeAttr",
    "Tcgen05RelinquishAllocPermitOp",
    "Tcgen05StOp",
    "Tcgen05WaitKindAttr",
    "Tcgen05WaitOp",
    "ThreadIdXOp",
    "ThreadIdYOp",
    "ThreadIdZOp",
    "V4I32",
    "WarpDimOp",
    "WarpIdOp",
    "WarpSizeOp",
    "addr_space",
    "ptr",
    "read_sreg",
]
