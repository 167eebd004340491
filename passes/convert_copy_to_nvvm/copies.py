"""Lowers the copies, `copy.async_copy`, `copy.im2col_load`, `copy.prefetch` and the TMA
gather4 and scatter4 ops (`copy.gather4`, `copy.scatter4`, `copy.gather4_prefetch`): one pattern
per op, which picks the lowering of the op's implementation:

- `tma`: a TMA copy or prefetch, issued by the elected thread (of the block, or of the role
  of `copy.warp_specialize` that holds it) through a tensor-map parameter of the kernel (one
  per distinct descriptor, appended on first use), or through the map in global memory that
  the copy names (`map(%m : ...)`, `tensormap`);
- `bulk`: a bulk (non-tensor) copy or prefetch of one contiguous GMEM range, issued by the
  elected thread;
- `cp_async`: a cp.async copy, issued by every thread of the block (or role) together in
  16-, 8- or 4-byte chunks, each thread arriving once on the barrier when its chunks have
  landed;
- `im2col`: an im2col load, by TMA through an im2col tensor map, or (`impl cp_async`,
  copy-legalize's pre-Hopper form) gathered by the issuing threads with cp.async;
- `gather4`: a gather4, scatter4 or gather4 prefetch, by TMA through a tiled map whose box
  is one row.

Each pattern decodes its op's geometry (`op.geometry()`) once, where its rewrite starts, and
hands it to the lowering it picks, which reads every fact of the box from it and decodes
nothing again. Not earlier: the geometry holds SSA values (the SMEM ref, the barrier group,
the indices) that the patterns lowering other ops replace, so a geometry decoded before the
rewrite (a phase over the kernel, `dynamic_shapes.kernel_shapes`) would name stale values.

Under debug guards, the elected thread checks a TMA copy's dynamic coordinates (TR12, TR13)
and barrier index (P9) before it issues the copy: see `guards`.
"""

from __future__ import annotations

from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from copy_dialect import ops as copy
from passes.convert_copy_to_nvvm.bulk import bulk_copy, bulk_prefetch
from passes.convert_copy_to_nvvm.cp_async import cp_async_copy
from passes.convert_copy_to_nvvm.gather4 import gather4, gather4_prefetch, scatter4
from passes.convert_copy_to_nvvm.im2col import im2col_cp_async, im2col_tma
from passes.convert_copy_to_nvvm.kernel import KernelPattern
from passes.convert_copy_to_nvvm.tma import tma_copy, tma_prefetch


class LowerPrefetch(KernelPattern):
    """`copy.prefetch` -> `cp.async.bulk.prefetch.tensor`, or `cp.async.bulk.prefetch.L2`
    for a bulk prefetch (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.PrefetchOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        g = op.geometry()
        if op.is_bulk:
            rewriter.replace(op, bulk_prefetch(op, g, kernel), [])
        else:
            rewriter.replace(op, tma_prefetch(op, g, kernel), [])


class LowerAsyncCopy(KernelPattern):
    """`copy.async_copy` -> `cp.{async,reduce.async}.bulk.tensor` (TMA) or `cp.async` chunks."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.AsyncCopyOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        g = op.geometry()
        implementation = op.resolved_implementation(g)
        if implementation == copy.Implementation.TMA:
            rewriter.replace(op, tma_copy(op, g, kernel), [])
        elif implementation == copy.Implementation.BULK:
            rewriter.replace(op, bulk_copy(op, g, kernel), [])
        elif implementation == copy.Implementation.CP_ASYNC:
            rewriter.replace(op, cp_async_copy(op, g, kernel), [])


class LowerIm2colLoad(KernelPattern):
    """`copy.im2col_load` -> `cp.async.bulk.tensor...im2col` (elected thread), or with `impl
    cp_async` the issuing threads' cp.async gather of the same pixels (`im2col_cp_async`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.Im2colLoadOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        g = op.geometry()
        if op.resolved_implementation() == copy.Implementation.CP_ASYNC:
            rewriter.replace(op, im2col_cp_async(op, g, kernel), [])
        else:
            rewriter.replace(op, im2col_tma(op, g, kernel), [])


class LowerGather4(KernelPattern):
    """`copy.gather4` -> `cp.async.bulk.tensor.2d...tile::gather4` (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.Gather4Op, rewriter: PatternRewriter, /):
        rewriter.replace(op, gather4(op, op.geometry(), self.kernel(op)), [])


class LowerScatter4(KernelPattern):
    """`copy.scatter4` -> `cp.async.bulk.tensor.2d...tile::scatter4.bulk_group` (elected
    thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.Scatter4Op, rewriter: PatternRewriter, /):
        rewriter.replace(op, scatter4(op, op.geometry(), self.kernel(op)), [])


class LowerGather4Prefetch(KernelPattern):
    """`copy.gather4_prefetch` -> `cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4`
    (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.Gather4PrefetchOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, gather4_prefetch(op, self.kernel(op)), [])
