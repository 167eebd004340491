"""The bulk (non-tensor) copies: a `copy.async_copy` (`impl bulk`) or a bulk `copy.prefetch`
of a box that is one contiguous GMEM range, issued by the elected thread: a load is
`cp.async.bulk.shared::cluster.global` completing on its barrier (this CTA's share,
multicast to its collective group, for a multicast load), a store
`cp.async.bulk.global.shared::cta.bulk_group`, a prefetch `cp.async.bulk.prefetch.L2`.
Under debug guards the elected thread first checks the range against the array.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import i32
from xdsl.ir import Operation, SSAValue

from copy_dialect import ops as copy
from passes import nvvm
from passes.convert_copy_to_nvvm.emit import Arith, Emit
from passes.convert_copy_to_nvvm.kernel import Kernel
from passes.convert_copy_to_nvvm.smem import slot_offset
from passes.convert_copy_to_nvvm.tma import (
    collective_position,
    l2_cache_hint,
    load_barrier,
    own_window,
)
from passes.llvm_types import lowered


def bulk_offset(e: Emit, span: copy.BulkSpan, indices: Sequence[SSAValue]) -> Arith | int:
    """The byte offset of a bulk box's origin in its GMEM array."""
    offset: Arith | int = 0
    for index, stride in zip(indices, span.byte_strides, strict=True):
        offset = Arith(e, index) * stride + offset
    return offset


def bulk_prefetch(op: copy.PrefetchOp, g: copy.BoxGeometry, kernel: Kernel) -> list[Operation]:
    """A bulk prefetch of the contiguous range of `op`'s box (its geometry `g`) into L2, by
    the elected thread."""
    span = copy.bulk_span(g)
    body = Emit()
    (gmem,) = lowered([g.gmem], body.ops)
    indices = list(lowered(g.gmem_indices, body.ops))
    if kernel.guards is not None:
        kernel.guards.bulk_bounds(body, kernel.fn, op, g, indices)
    offset = bulk_offset(body, span, indices)
    src = body.byte_offset(gmem, offset if isinstance(offset, int) else offset.value)
    size = body.const(span.issued_bytes, i32)
    body(nvvm.CpAsyncBulkPrefetchOp(src, size, l2_cache_hint=l2_cache_hint(body, op, kernel)))
    e = Emit()
    kernel.group(op).elected(e, body.ops)
    return e.ops


def bulk_copy(op: copy.AsyncCopyOp, g: copy.CopyGeometry, kernel: Kernel) -> list[Operation]:
    """A bulk load or store of the one contiguous GMEM range of `op`'s box (its geometry
    `g`), issued by the elected thread: `cp.async.bulk.shared::cluster.global` completing on
    the barrier (this CTA's share, multicast to its collective group, for a multicast load),
    or `cp.async.bulk.global.shared::cta.bulk_group`."""
    span = copy.bulk_span(g)
    body = Emit()
    (gmem, smem) = lowered([g.gmem, g.smem], body.ops)
    smem = body.byte_offset(smem, slot_offset(body, g))
    indices = list(lowered(g.gmem_indices, body.ops))
    if kernel.guards is not None:
        kernel.guards.bulk_bounds(body, kernel.fn, op, g, indices)
    offset = bulk_offset(body, span, indices)
    size = body.const(span.issued_bytes, i32)
    hint = l2_cache_hint(body, op, kernel)
    if g.is_load:
        bar = load_barrier(body, op, kernel, g.credited_bytes if g.arrives else None)
        mask = None
        if g.multicast is not None:
            # This CTA's share: the box's range from `rank` shares on, in GMEM and SMEM alike
            # (a bulk box is dense in both: rules BK1, BK3).
            rank, mask = collective_position(body, op, kernel)
            share = Arith(body, rank) * span.issued_bytes
            offset = share + offset
            smem = body.byte_offset(smem, share.value)
        src = body.byte_offset(gmem, offset if isinstance(offset, int) else offset.value)
        body(
            nvvm.CpAsyncBulkSharedClusterGlobalOp(
                smem,
                src,
                bar,
                size,
                multicast_mask=mask,
                l2_cache_hint=hint,
                cta_destination=own_window(kernel, mask, None),
            )
        )
    else:
        dst = body.byte_offset(gmem, offset if isinstance(offset, int) else offset.value)
        body(nvvm.CpAsyncBulkGlobalSharedCtaOp(dst, smem, size, l2_cache_hint=hint))
    e = Emit()
    kernel.group(op).elected(e, body.ops, op.predicate)
    return e.ops
