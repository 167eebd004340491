"""Lowers the `gpu` dialect's ids, barrier and shuffles to NVVM special registers,
`bar.sync` and `shfl.sync`."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import builtin, gpu, llvm
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i1, i32, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from copy_dialect.upstream_gpu import ShuffleMode, ShuffleOp
from passes import llvm_build, nvvm
from passes.llvm_types import lowered, replace_with_casts
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

    OP_TYPES = tuple(SREG_OF)
    """The ops it acts on (`passes.rewrite` tries it on no other)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        register = SREG_OF.get(type(op))
        if register is None:
            return
        dim = op.properties["dimension"]
        assert isinstance(dim, gpu.DimensionAttr)
        read = nvvm.read_sreg(f"{register}.{dim.data.value}")
        ext = llvm_build.resize(llvm.ZExtOp, read.results[0], i64)
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


SHFL_KIND = {
    ShuffleMode.XOR: nvvm.ShflKind.BFLY,
    ShuffleMode.UP: nvvm.ShflKind.UP,
    ShuffleMode.DOWN: nvvm.ShflKind.DOWN,
    ShuffleMode.IDX: nvvm.ShflKind.IDX,
}


class ConvertShuffle(RewritePattern):
    """`gpu.shuffle` -> `nvvm.shfl.sync` (MLIR's lowering): the first `width` lanes take
    part (thread mask `-1 >> (32 - width)`), clamped at lane `width - 1` (`32 - width` for
    `up`); the value and the valid bit come out of the `{T, i1}` result."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ShuffleOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        value, offset, width = lowered(op.operands, ops)
        one, minus_one, thirty_two = (
            llvm.ConstantOp(IntegerAttr(v, i32), i32) for v in (1, -1, 32)
        )
        lead = llvm.SubOp(thirty_two.result, width)
        mask = llvm.LShrOp(minus_one.result, lead.res)
        ops += [one, minus_one, thirty_two, lead, mask]
        if op.mode.data == ShuffleMode.UP:
            clamp = lead.res
        else:
            ops.append(sub := llvm.SubOp(width, one.result))
            clamp = sub.res
        shfl = nvvm.ShflOp(
            SHFL_KIND[op.mode.data], mask.res, value, offset, clamp, return_value_and_is_valid=True
        )
        result = llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [0]), shfl.res, value.type)
        valid = llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [1]), shfl.res, i1)
        ops += [shfl, result, valid]
        replace_with_casts(rewriter, op, ops, [result.res, valid.res])


class ConvertGpuToNVVMPass(ModulePass):
    """Lowers `gpu` ids, barriers and shuffles to `nvvm`."""

    name = "convert-gpu-to-nvvm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        apply_patterns(
            op,
            [
                ConvertId(),  # gpu.thread_id, block_id, block_dim, grid_dim
                ConvertLaneId(),  # gpu.lane_id
                ConvertBarrier(),  # gpu.barrier
                ConvertShuffle(),  # gpu.shuffle
            ],
        )
