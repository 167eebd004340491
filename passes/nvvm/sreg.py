"""The special registers: one op per PTX special register, `nvvm.read.ptx.sreg.<register>`,
made from the table below the way upstream's `NVVM_SpecialRegisterOp<"tid.x">` lines make
them. Each reads its register through `llvm.nvvm.read.ptx.sreg.<register>`.

```mlir
%0 = nvvm.read.ptx.sreg.tid.x : i32
```

Unlike upstream, the results are `i32` only and have no `range` attribute.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I32, i32
from xdsl.ir import Attribute, Operation
from xdsl.irdl import IRDLOperation, irdl_op_definition, result_def, traits_def
from xdsl.traits import Pure

from passes.llvm_ir import IREmitter
from passes.nvvm.emit import call_bound


class SpecialRegisterOp(IRDLOperation):
    """Reads the PTX special register its name ends with (`llvm.nvvm.read.ptx.sreg.*`)."""

    res = result_def(I32)

    traits = traits_def(Pure())

    assembly_format = "attr-dict `:` type($res)"

    def __init__(self, result_type: Attribute = i32):
        super().__init__(result_types=[result_type])

    def to_llvm_ir(self, e: IREmitter) -> None:
        call_bound(e, self.res, f"llvm.{self.name}", [])


SREGS: dict[str, type[SpecialRegisterOp]] = {}
"""Special-register ops by register name as in their mnemonic: `"tid.x"`, `"cluster.ctarank"`."""


def _register(class_name: str, register: str, doc: str) -> type[SpecialRegisterOp]:
    """The op class reading `register`, entered in `SREGS`."""
    op = irdl_op_definition(
        type(
            class_name,
            (SpecialRegisterOp,),
            {"name": f"nvvm.read.ptx.sreg.{register}", "__doc__": doc, "__module__": __name__},
        )
    )
    SREGS[register] = op
    return op


def _xyz(stem: str, register: str, doc: str) -> tuple[type[SpecialRegisterOp], ...]:
    """The ops `<stem>{X,Y,Z}Op` reading `<register>.{x,y,z}`."""
    ptx = "%" + register.replace(".", "_")
    return tuple(
        _register(f"{stem}{d.upper()}Op", f"{register}.{d}", f"`{ptx}.{d}`: {doc} along {d}.")
        for d in "xyz"
    )


# Upstream's order and class names (NVVM_ThreadIdXOp ...); the cluster registers need sm_90.
ThreadIdXOp, ThreadIdYOp, ThreadIdZOp = _xyz("ThreadId", "tid", "the thread's index in its CTA")
BlockDimXOp, BlockDimYOp, BlockDimZOp = _xyz("BlockDim", "ntid", "threads per CTA")
BlockIdXOp, BlockIdYOp, BlockIdZOp = _xyz("BlockId", "ctaid", "the CTA's index in the grid")
GridDimXOp, GridDimYOp, GridDimZOp = _xyz("GridDim", "nctaid", "CTAs per grid")
ClusterIdXOp, ClusterIdYOp, ClusterIdZOp = _xyz(
    "ClusterId", "clusterid", "the cluster's index in the grid"
)
ClusterDimXOp, ClusterDimYOp, ClusterDimZOp = _xyz("ClusterDim", "nclusterid", "clusters per grid")
BlockInClusterIdXOp, BlockInClusterIdYOp, BlockInClusterIdZOp = _xyz(
    "BlockInClusterId", "cluster.ctaid", "the CTA's index in its cluster"
)
ClusterDimBlocksXOp, ClusterDimBlocksYOp, ClusterDimBlocksZOp = _xyz(
    "ClusterDimBlocks", "cluster.nctaid", "CTAs per cluster"
)
ClusterCtaRankOp = _register(
    "ClusterCtaRankOp",
    "cluster.ctarank",
    "`%cluster_ctarank`: the CTA's linear rank in its cluster (upstream's `NVVM_ClusterId`).",
)
ClusterNCtaRankOp = _register(
    "ClusterNCtaRankOp",
    "cluster.nctarank",
    "`%cluster_nctarank`: CTAs per cluster (upstream's `NVVM_ClusterDim`).",
)
LaneIdOp = _register("LaneIdOp", "laneid", "`%laneid`.")
WarpIdOp = _register(
    "WarpIdOp", "warpid", "`%warpid` (the warp's current slot on its SM, not `tid / 32`)."
)
WarpDimOp = _register("WarpDimOp", "nwarpid", "`%nwarpid`.")
WarpSizeOp = _register("WarpSizeOp", "warpsize", "`WARP_SZ` (32).")


def read_sreg(name: str) -> Operation:
    """A new op reading the special register `name` (a key of `SREGS`), e.g. `"ctaid.x"`."""
    return SREGS[name]()
