"""The TMA gather4 and scatter4 ops (`copy.gather4`, `copy.scatter4`, `copy.gather4_prefetch`),
issued by the elected thread through a tiled tensor map of the 2-D array whose box is one
row, `[1, W]` (a kernel parameter, shared with any copy of the same box):

- a gather4 arrives on its barrier expecting the 4-row tile's bytes (unless `arrive =
  false`) and issues `cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4
  .mbarrier::complete_tx::bytes` with the coordinates `{col, row0, row1, row2, row3}` into
  the CTA's own SMEM (`.shared::cta`: the form every sm_100+ target has); with `multicast
  %mask`, `.shared::cluster ... .multicast::cluster` with the mask as ctaMask (the tile into
  the same offset of every CTA of the mask); with `leader_tracked`, `.cta_group::2`: the
  rows into this CTA's SMEM, the bytes on the barrier of the pair's leader (this barrier's
  address with the peer bit cleared), whose arrival expects both CTAs' tiles;
- a scatter4 issues `cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group`;
- a gather4 prefetch issues `cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4`.

`.L2::cache_hint` with `l2`, as the other TMA ops. Upstream NVVM spells them
`nvvm.cp.async.bulk.tensor.shared.cluster.global ... {mode =
#nvvm.tma_load_mode<tile_gather4>}`, `nvvm.cp.async.bulk.tensor.global.shared.cta ... {mode =
#nvvm.tma_store_mode<tile_scatter4>}` and `nvvm.cp.async.bulk.tensor.prefetch ... {mode =
#nvvm.tma_load_mode<tile_gather4>}`.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i64
from xdsl.ir import Operation, SSAValue

from copy_dialect import ops as copy
from copy_dialect.verify_common import constant_int
from facts.abi import TensorMapParam
from passes import nvvm
from passes.convert_copy_to_nvvm.emit import Emit
from passes.convert_copy_to_nvvm.kernel import Kernel
from passes.convert_copy_to_nvvm.smem import slot_offset
from passes.convert_copy_to_nvvm.tma import (
    l2_cache_hint,
    load_barrier,
    pair_barrier,
    tma_coordinates,
)
from passes.llvm_types import lowered


def row_map(g: copy.BoxGeometry, kernel: Kernel, written: bool, l2_promotion: int) -> SSAValue:
    """The tiled tensor map of the 2-D array whose box is one row of the tile (`gmem_box`:
    `[1, W]`), appended to the kernel on first use."""
    dtype = g.tensor_map_type
    assert dtype is not None  # rule C11
    key = TensorMapParam(
        g.gmem_argument,
        g.gmem_box,
        g.swizzle_bytes,
        g.tensor_map_oob,
        dtype,
        written=False,
        l2_promotion=l2_promotion,
    )
    return kernel.tensor_map(key, written)


def gather4_coordinates(
    e: Emit,
    kernel: Kernel,
    op: Operation,
    rows: tuple[SSAValue, ...],
    column: tuple[SSAValue, ...],
    g: copy.Gather4Geometry | None = None,
) -> list[SSAValue]:
    """`{col, row0, row1, row2, row3}` as i32. Under debug guards each is checked against
    .s32 (K4) and, for a gather4 or scatter4 (`g`), the column on a 16-byte boundary (TR12)
    and a scatter4's coordinates not negative (TR13), where they are dynamic."""
    indices = [*column, *rows]
    values = list(lowered(indices, e.ops))
    if kernel.guards is not None:
        kernel.guards.coordinate_range(e, kernel.fn, op, indices, values)
        if g is not None:
            what = (
                "the innermost TMA coordinate must be a multiple of 16 bytes, got %lld (%lld bytes)"
            )
            kernel.guards.inner_alignment(e, kernel.fn, g, values[:1], "TR12", what)
        if g is not None and not g.is_load:
            for i, (index, value) in enumerate(zip(indices, values, strict=True)):
                if constant_int(index) is None:
                    what = f"TMA store coordinates must be >= 0, got %lld at index {i}"
                    negative = e.icmp("slt", value, 0)
                    kernel.guards.check(e, kernel.fn, op, "TR13", negative, what, [value])
    # tma_coordinates reverses its indices (innermost first): hand them outermost first.
    return tma_coordinates(e, list(reversed(values)))


def gather4(op: copy.Gather4Op, g: copy.Gather4Geometry, kernel: Kernel) -> list[Operation]:
    """A gather4 (`op`, of geometry `g`) by the elected thread: its arrival expecting the
    tile's bytes, then the copy into this CTA's SMEM."""
    descriptor = row_map(g, kernel, False, op.l2_promotion_bytes)
    body = Emit()
    (smem,) = lowered([g.smem], body.ops)
    smem = body.byte_offset(smem, slot_offset(body, g))
    coordinates = gather4_coordinates(body, kernel, op, g.rows, g.column, g)
    pair = op.is_leader_tracked
    bar = load_barrier(body, op, kernel, g.credited_bytes if g.arrives and not pair else None)
    mask = None
    if op.multicast is not None:
        (mask,) = lowered([op.multicast], body.ops)
    if pair:  # the CTA pair's: its bytes on the leader's barrier, which expects both tiles
        index = body.binary(llvm.AndOp, body.resize(body.sreg("cluster.ctarank"), i64), 1)
        bar = pair_barrier(body, bar, index, g.credited_bytes if g.arrives else None)
    body(
        nvvm.CpAsyncBulkTensorSharedClusterGlobalOp(
            dst=smem,
            tma_descriptor=descriptor,
            coordinates=coordinates,
            mbar=bar,
            multicast_mask=mask,
            l2_cache_hint=l2_cache_hint(body, op, kernel),
            group="cta_2" if pair else None,
            cta_destination=mask is None and not pair,
            gather4=True,
        )
    )
    e = Emit()
    kernel.group(op).elected(e, body.ops)
    return e.ops


def scatter4(op: copy.Scatter4Op, g: copy.Gather4Geometry, kernel: Kernel) -> list[Operation]:
    """A scatter4 (`op`, of geometry `g`) by the elected thread, in the bulk group."""
    descriptor = row_map(g, kernel, True, op.l2_promotion_bytes)
    body = Emit()
    (smem,) = lowered([g.smem], body.ops)
    smem = body.byte_offset(smem, slot_offset(body, g))
    coordinates = gather4_coordinates(body, kernel, op, g.rows, g.column, g)
    body(
        nvvm.CpAsyncBulkTensorGlobalSharedCtaOp(
            tma_descriptor=descriptor,
            src=smem,
            coordinates=coordinates,
            l2_cache_hint=l2_cache_hint(body, op, kernel),
            scatter4=True,
        )
    )
    e = Emit()
    kernel.group(op).elected(e, body.ops)
    return e.ops


def gather4_prefetch(op: copy.Gather4PrefetchOp, kernel: Kernel) -> list[Operation]:
    """A gather4 prefetch into L2 by the elected thread."""
    g = op.geometry()
    descriptor = row_map(g, kernel, False, op.l2_promotion_bytes)
    body = Emit()
    coordinates = gather4_coordinates(body, kernel, op, tuple(op.rows), tuple(op.column))
    body(
        nvvm.CpAsyncBulkTensorPrefetchOp(
            tma_descriptor=descriptor,
            coordinates=coordinates,
            l2_cache_hint=l2_cache_hint(body, op, kernel),
            gather4=True,
        )
    )
    e = Emit()
    kernel.group(op).elected(e, body.ops)
    return e.ops
