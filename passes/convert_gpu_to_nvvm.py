"""Lowers the `gpu` dialect's ids and barrier to NVVM special registers and `bar.sync`."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import builtin, gpu, llvm
from xdsl.dialects.builtin import i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from passes import nvvm
from passes.llvm_types import replace_with_casts
from passes.rewrite import apply_patterns

SREG_OF = {
    gpu.ThreadIdOp: "tid",
    gpu.BlockIdOp: "ctaid",
    gpu.BlockDimOp: "ntid",
    gpu.GridDimOp: "nctaid",
}


class ConvertId(RewritePattern):
    """`gpu.thread_id x` (and block_id, block_dim, grid_dim) -> `nvvm.read.ptx.sreg.tid.x`,
    zero-extended to the i64 an index lowers to."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        register = SREG_OF.get(type(op))
        if register is None:
            return
        dim = op.properties["dimension"]
        assert isinstance(dim, gpu.DimensionAttr)
        read = nvvm.read_sreg(f"{register}.{dim.data.value}")
        ext = llvm.ZExtOp(read.results[0], i64)
        replace_with_casts(rewriter, op, [read, ext], ext.results)


class ConvertLaneId(RewritePattern):
    """`gpu.lane_id` -> `nvvm.read.ptx.sreg.laneid`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: gpu.LaneIdOp, rewriter: PatternRewriter, /):
        read = nvvm.read_sreg("laneid")
        ext = llvm.ZExtOp(read.results[0], i64)
        replace_with_casts(rewriter, op, [read, ext], ext.results)


class ConvertBarrier(RewritePattern):
    """`gpu.barrier` -> `nvvm.barrier0` (`bar.sync 0`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: gpu.BarrierOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, [nvvm.Barrier0Op()], [])


class ConvertGpuToNVVMPass(ModulePass):
    """Lowers `gpu` ids and barriers to `nvvm`."""

    name = "convert-gpu-to-nvvm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        apply_patterns(
            op,
            [
                ConvertId(),  # gpu.thread_id, block_id, block_dim, grid_dim
                ConvertLaneId(),  # gpu.lane_id
                ConvertBarrier(),  # gpu.barrier
            ],
        )
