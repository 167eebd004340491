"""Lowers the copies, `copy.async_copy` and `copy.prefetch`, and owns their tensor maps.

- A TMA copy or prefetch is issued by the elected thread (of the block, or of the role of
  `copy.warp_specialize` that holds it) through a tensor-map parameter of
  the kernel (one per distinct descriptor, appended on first use), or through the map in
  global memory that the copy names (`map(%m : ...)`, `tensormap`):
  - a load arrives on its barrier expecting the box bytes (unless `arrive = false`) and
    issues `cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`; a
    multicast load issues this CTA's share of the box with `.multicast::cluster` and the mask
    of its collective group; a leader-tracked load (`.cta_group::2`) signals the barrier of
    its CTA pair's leader;
  - a store is `cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group`, a reduction
    `cp.reduce.async.bulk.tensor`; a user predicate is and-ed with the elected thread.
- An im2col load (`copy.im2col_load`) is a TMA load through an im2col tensor map (its
  corners, traversal strides, pixels and channels in the map, `Im2colMapParam`): it arrives
  on its barrier expecting the SMEM box's bytes (unless `arrive = false`) and issues
  `cp.async.bulk.tensor.Nd.shared::cluster.global.im2col.mbarrier::complete_tx::bytes` with
  the coordinates and the im2col offsets, innermost first (`.L2::cache_hint` with `l2`).
- An im2col load with `impl cp_async` (copy-legalize's pre-Hopper form) is the same
  traversal gathered by the issuing threads: each takes (pixel row, chunk) items, computes
  the row's pixel as the TMA unit does (`im2col_pixel`) and copies the chunk of its channels
  with cp.async, zero-filled outside the array, then arrives once on the barrier.
- A cp.async copy is issued by every thread of the block (or role) together: 16-byte chunks (8 or 4
  when a row is not a multiple of 16) with `cp.async.{cg,ca}.shared.global`; with `oob zeros`
  each chunk's source size is clipped to the array, and cp.async zero-fills the rest. A
  dynamic-shape ref's sizes are kernel parameters (`dynamic_shapes`), and where its
  row pitch is one, the chunk size is picked at run time from those the copy may move. On a
  barrier, each thread then executes `cp.async.mbarrier.arrive.noinc.shared.b64 [bar]`: one
  arrival per thread once its chunks (and its earlier cp.async copies) have landed.

Under debug guards, the elected thread checks a TMA copy's dynamic coordinates (TR12, TR13)
and barrier index (P9) before it issues the copy: see `guards`.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects import llvm, scf
from xdsl.dialects.builtin import IntegerType, i16, i32, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from copy_dialect import ops as copy
from facts.abi import Im2colMapParam, TensorMapParam
from passes import nvvm
from passes.convert_copy_to_nvvm.barriers import barrier_pointer
from passes.convert_copy_to_nvvm.dynamic_shapes import cp_async_chunks, ref_layout, size_value
from passes.convert_copy_to_nvvm.emit import Arith, Emit
from passes.convert_copy_to_nvvm.kernel import Group, Kernel, KernelPattern
from passes.llvm_types import SHARED, lowered, ptr, static_memref

PEER_BIT_MASK = 0xFFFFFFFFFEFFFFFF
"""Clears the peer bit of a shared::cluster address: the pair's even (leader) CTA."""


class LowerPrefetch(KernelPattern):
    """`copy.prefetch` -> `cp.async.bulk.prefetch.tensor`, or `cp.async.bulk.prefetch.L2`
    for a bulk prefetch (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.PrefetchOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        if op.is_bulk:
            rewriter.replace(op, bulk_prefetch(op, kernel), [])
            return
        descriptor = tma_descriptor(op.geometry(), kernel, False, op.l2_promotion_bytes)
        body = Emit()
        coords = tma_coordinates(body, lowered(op.indices, body.ops))
        hint = l2_cache_hint(body, op, kernel)
        body(
            nvvm.CpAsyncBulkTensorPrefetchOp(
                tma_descriptor=descriptor, coordinates=coords, l2_cache_hint=hint
            )
        )
        e = Emit()
        kernel.group(op).elected(e, body.ops)
        rewriter.replace(op, e.ops, [])


class LowerAsyncCopy(KernelPattern):
    """`copy.async_copy` -> `cp.{async,reduce.async}.bulk.tensor` (TMA) or `cp.async` chunks."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.AsyncCopyOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        implementation = op.resolved_implementation()
        if implementation == copy.Implementation.TMA:
            rewriter.replace(op, tma_copy(op, kernel), [])
        elif implementation == copy.Implementation.BULK:
            rewriter.replace(op, bulk_copy(op, kernel), [])
        elif implementation == copy.Implementation.CP_ASYNC:
            rewriter.replace(op, cp_async_copy(op, kernel), [])


class LowerIm2colLoad(KernelPattern):
    """`copy.im2col_load` -> `cp.async.bulk.tensor...im2col` (elected thread), or with `impl
    cp_async` the issuing threads' cp.async gather of the same pixels (`im2col_cp_async`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.Im2colLoadOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        if op.resolved_implementation() == copy.Implementation.CP_ASYNC:
            rewriter.replace(op, im2col_cp_async(op, kernel), [])
            return
        g = op.geometry()
        dtype = g.tensor_map_type
        assert dtype is not None  # rule C11
        key = Im2colMapParam(
            g.gmem_argument,
            g.box_shape,
            g.swizzle_bytes,
            g.tensor_map_oob,
            dtype,
            False,
            g.lower,
            g.upper,
            g.element_strides,
            l2_promotion=op.l2_promotion_bytes,
        )
        descriptor = kernel.tensor_map(key, written=False)
        body = Emit()
        (smem,) = lowered([g.smem], body.ops)
        smem = body.byte_offset(smem, slot_offset(body, g))
        coordinates = tma_coordinates(body, lowered(g.gmem_indices, body.ops))
        offsets = list(reversed(lowered(g.offsets, body.ops)))
        if kernel.guards is not None:
            kernel.guards.barrier_index(body, kernel.fn, op, op.barrier, op.barrier_index)
        bar = barrier_pointer(body, op.barrier, op.barrier_index)
        if op.arrives:
            body(nvvm.MBarrierArriveExpectTxSharedOp(bar, body.const(g.credited_bytes, i32)))
        body(
            nvvm.CpAsyncBulkTensorSharedClusterGlobalOp(
                dst=smem,
                tma_descriptor=descriptor,
                coordinates=coordinates,
                mbar=bar,
                im2col_offsets=offsets,
                l2_cache_hint=l2_cache_hint(body, op, kernel),
                cta_destination=own_window(kernel, None, None),
            )
        )
        e = Emit()
        kernel.group(op).elected(e, body.ops)
        rewriter.replace(op, e.ops, [])


# ===----------------------------------------------------------------------=== #
# TMA
# ===----------------------------------------------------------------------=== #


def tma_descriptor(
    g: copy.BoxGeometry, kernel: Kernel, written: bool, l2_promotion: int
) -> SSAValue:
    """The tensor-map parameter of a TMA op's box (the box each CTA issues) with the L2
    promotion `l2_promotion` (bytes, 0: none), appended to the kernel on first use;
    `written`: a TMA store or reduction writes through it. Two copies of one array that ask
    for different promotions get two maps: the promotion is a field of the descriptor."""
    # The verifier guarantees a GMEM kernel argument (B11) of a tensor-map type (C11, E1).
    dtype = g.tensor_map_type
    assert dtype is not None
    # The map without `written`: one key per descriptor, whichever copies write through it.
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


def l2_cache_hint(
    e: Emit, op: copy.AsyncCopyOp | copy.PrefetchOp | copy.Im2colLoadOp, kernel: Kernel
) -> SSAValue | None:
    """The i64 cache-policy operand of a TMA op's `.L2::cache_hint` form: a documented
    encoding as a constant, any other policy (a fraction, a secondary priority,
    evict_unchanged) made once per kernel at its entry by createpolicy; None for none."""
    policy = op.l2_policy_value()
    if policy is None:
        return None
    if isinstance(policy, int):
        return e.const(policy, i64)
    return kernel.cache_policy(policy)


def tma_coordinates(e: Emit, indices: Sequence[SSAValue]) -> list[SSAValue]:
    """TMA coordinates of lowered indices: i32, innermost dimension first."""
    return [e.resize(i, i32) for i in reversed(indices)]


def tma_copy(op: copy.AsyncCopyOp, kernel: Kernel) -> list[Operation]:
    """A TMA load, store or reduction, issued by the elected thread."""
    g = op.geometry()
    body = Emit()
    if op.map is None:
        descriptor = tma_descriptor(g, kernel, not g.is_load, op.l2_promotion_bytes)
    else:
        # A map in global memory (copy.tensormap_global): its generic address.
        (descriptor,) = lowered([op.map], body.ops)
        if not g.is_load:
            kernel.written_maps.add(op.map.owner)  # type: ignore[arg-type]
    (smem,) = lowered([g.smem], body.ops)
    smem = body.byte_offset(smem, slot_offset(body, g))
    indices = list(lowered(g.gmem_indices, body.ops))
    if kernel.guards is not None:
        kernel.guards.coordinates(body, kernel.fn, g, indices)
    hint = l2_cache_hint(body, op, kernel)
    if g.is_load:
        tma_load(body, op, kernel, g, descriptor, smem, indices, hint)
    elif op.reduction is None:
        body(
            nvvm.CpAsyncBulkTensorGlobalSharedCtaOp(
                tma_descriptor=descriptor,
                src=smem,
                coordinates=tma_coordinates(body, indices),
                l2_cache_hint=hint,
            )
        )
    else:
        body(
            nvvm.CpAsyncBulkTensorReduceOp(
                tma_descriptor=descriptor,
                src=smem,
                coordinates=tma_coordinates(body, indices),
                red_kind=copy.base_reduction(op.reduction.data),
                l2_cache_hint=hint,
            )
        )
    e = Emit()
    kernel.group(op).elected(e, body.ops, op.predicate)
    return e.ops


def tma_load(
    e: Emit,
    op: copy.AsyncCopyOp,
    kernel: Kernel,
    g: copy.CopyGeometry,
    descriptor: SSAValue,
    smem: SSAValue,
    indices: list[SSAValue],
    hint: SSAValue | None,
) -> None:
    """A TMA load of the box at `indices` into `smem`: this CTA's share of it for a
    multicast load, its part of a leader-tracked one."""
    assert op.barrier is not None
    if kernel.guards is not None:
        kernel.guards.barrier_index(e, kernel.fn, op, op.barrier, op.barrier_index)
    bar = barrier_pointer(e, op.barrier, op.barrier_index)
    if op.arrives and op.leader_tracked is None:
        tx = e.const(g.credited_bytes, i32)
        e(nvvm.MBarrierArriveExpectTxSharedOp(bar, tx))
    mask, group = None, None
    if op.leader_tracked is not None:
        bar, indices = leader_tracked(e, op, kernel, g, bar, indices)
        group = "cta_2"
    elif (split := g.multicast) is not None:
        assert split.divides  # rule D5
        rank, mask = collective_position(e, op, kernel)
        gmem_dim = g.gmem_dim(split.dim)
        indices[gmem_dim] = e.add(indices[gmem_dim], e.mul(rank, split.share_extent))
        # Shares lie back to back in the slot, each with its rows padded to the swizzle span.
        smem = e.byte_offset(smem, e.mul(rank, g.share_bytes))
    e(
        nvvm.CpAsyncBulkTensorSharedClusterGlobalOp(
            dst=smem,
            tma_descriptor=descriptor,
            coordinates=tma_coordinates(e, indices),
            mbar=bar,
            multicast_mask=mask,
            l2_cache_hint=hint,
            group=group,
            cta_destination=own_window(kernel, mask, group),
        )
    )


def own_window(kernel: Kernel, mask: SSAValue | None, group: str | None) -> bool:
    """Whether a load names its destination in this CTA's window (`.shared::cta`, PTX ISA
    8.6), as it may when it writes only its own CTA's SMEM: not multicast (`mask`), not a
    CTA pair's (`group`). Elsewhere, `.shared::cluster`."""
    return kernel.target.has_cta_bulk_destination and mask is None and group is None


def leader_tracked(
    e: Emit,
    op: copy.AsyncCopyOp,
    kernel: Kernel,
    g: copy.CopyGeometry,
    bar: SSAValue,
    indices: list[SSAValue],
) -> tuple[SSAValue, list[SSAValue]]:
    """A leader-tracked load of a CTA pair (`.cta_group::2`, sm_100a): each CTA loads its
    box (a partitioned copy: its part along the axis) into its own SMEM, and both signal
    the barrier of the pair's leader (the CTA with collective index 0), which expects the
    bytes of both. As in CUTLASS's 2-SM TMA loads, the leader's barrier is this CTA's
    barrier address with the peer bit (bit 24 of the shared::cluster window) cleared.
    Only the leader may wait on the barrier."""
    assert op.leader_tracked is not None
    index, _ = collective_position(e, op, kernel)
    axis = op.leader_tracked.partition_axis
    if axis is not None:
        gmem_dim = g.gmem_dim(axis)
        indices = list(indices)
        indices[gmem_dim] = e.add(indices[gmem_dim], e.mul(index, g.box_shape[axis]))
    if op.arrives:
        expect = Emit()
        tx = expect.const(g.credited_bytes, i32)
        expect(nvvm.MBarrierArriveExpectTxSharedOp(bar, tx))
        e.if_(e.icmp("eq", index, 0), expect.ops)
    leader_address = e.binary(llvm.AndOp, e.ptrtoint(bar), PEER_BIT_MASK)
    return e.inttoptr(leader_address, ptr(SHARED)), indices


def collective_position(e: Emit, op: copy.AsyncCopyOp, kernel: Kernel) -> tuple[SSAValue, SSAValue]:
    """This CTA's index in its collective group (i64) and the group's CTA mask (i16)."""
    cluster = kernel.cluster
    stride = (1, cluster[0], cluster[0] * cluster[1])
    dims = op.collective_dims
    coords = {d: e.resize(e.sreg(f"cluster.ctaid.{'xyz'[d]}"), i64) for d in (0, 1, 2)}
    rank = e.resize(e.sreg("cluster.ctarank"), i64)
    # Rank of the group's first CTA: this CTA with its collective coordinates zeroed.
    first = rank
    index: SSAValue | int = 0
    group_stride = 1
    pattern = 1
    for d in dims:
        first = e.binary(llvm.SubOp, first, e.mul(coords[d], stride[d]))
        term = e.mul(coords[d], group_stride)
        index = term if isinstance(index, int) else e.add(index, term)
        group_stride *= cluster[d]
        pattern = _repeat_mask(pattern, cluster[d], stride[d])
    assert not isinstance(index, int)
    mask = e.binary(llvm.ShlOp, e.const(pattern, i64), first)
    return index, e.resize(mask, i16)


def _repeat_mask(pattern: int, count: int, stride: int) -> int:
    """`pattern` OR-ed with itself shifted by stride, 2*stride, ... (count copies)."""
    return sum(pattern << (k * stride) for k in range(count)) if count > 1 else pattern


def slot_offset(e: Emit, g: copy.CopyGeometry) -> SSAValue | int:
    """Byte offset of the slot the SMEM indices pick: the layout's linear offset of the
    slot's first element. A slot starts at a multiple of the swizzle period (TR11),
    where the swizzle leaves offsets in place."""
    strides = copy.smem_strides(g.smem_type.get_shape(), g.element_type, g.swizzle_bytes)
    indices = lowered(g.smem_indices, e.ops)
    offset: Arith | int = 0
    for index, stride in zip(indices, strides[: len(indices)], strict=True):
        offset = Arith(e, index) * stride + offset
    return offset if isinstance(offset, int) else offset.value


# ===----------------------------------------------------------------------=== #
# Bulk (non-tensor) copies
# ===----------------------------------------------------------------------=== #


def bulk_offset(e: Emit, span: copy.BulkSpan, indices: Sequence[SSAValue]) -> Arith | int:
    """The byte offset of a bulk box's origin in its GMEM array."""
    offset: Arith | int = 0
    for index, stride in zip(indices, span.byte_strides, strict=True):
        offset = Arith(e, index) * stride + offset
    return offset


def bulk_prefetch(op: copy.PrefetchOp, kernel: Kernel) -> list[Operation]:
    """A bulk prefetch of the box's contiguous range into L2, by the elected thread."""
    g = op.geometry()
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


def bulk_copy(op: copy.AsyncCopyOp, kernel: Kernel) -> list[Operation]:
    """A bulk load or store of the box's one contiguous GMEM range, issued by the elected
    thread: `cp.async.bulk.shared::cluster.global` completing on the barrier (this CTA's
    share, multicast to its collective group, for a multicast load), or
    `cp.async.bulk.global.shared::cta.bulk_group`."""
    g = op.geometry()
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
        assert op.barrier is not None  # rule A3
        if kernel.guards is not None:
            kernel.guards.barrier_index(body, kernel.fn, op, op.barrier, op.barrier_index)
        bar = barrier_pointer(body, op.barrier, op.barrier_index)
        if op.arrives:
            body(nvvm.MBarrierArriveExpectTxSharedOp(bar, body.const(g.credited_bytes, i32)))
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


# ===----------------------------------------------------------------------=== #
# cp.async
# ===----------------------------------------------------------------------=== #


def elements_to_bytes(e: Emit, count: SSAValue, bits: int) -> SSAValue:
    """`count` elements of `bits` bits in bytes; sub-byte elements come in whole bytes
    (rules B8, C12), so the division is exact."""
    if bits >= 8:
        return e.mul(count, bits // 8)
    return e.binary(llvm.SDivOp, e.mul(count, bits), 8)


def cp_async_copy(op: copy.AsyncCopyOp, kernel: Kernel) -> list[Operation]:
    """A cp.async load: a loop of the block's threads over the box's chunks. Where the GMEM
    row pitch is dynamic (a dynamic-shape ref: its strides come from the kernel's size
    parameters), the largest chunk that divides the array's address and its strides is
    picked at run time, one loop per chunk size the copy may move (`cp_async_chunks`)."""
    g = op.geometry()
    e = Emit()
    sizes, strides = ref_layout(g.gmem, op, e, kernel.sizes)
    # Each chunk divides the box row, every static GMEM stride and a constant innermost
    # coordinate (a 300-element f16 row is 600 bytes: 8-byte chunks); the verifier
    # guarantees there is one (H2) and that `cache cg` gets 16 bytes (H6). A dynamic
    # innermost coordinate not known to be a multiple of the largest chunk (`%bx * 64 + 2`)
    # takes part in the run-time pick (`copy.inner_aligned`).
    chunks = cp_async_chunks(op)
    assert chunks
    (gmem,) = lowered([g.gmem], e.ops)
    (smem,) = lowered([g.smem], e.ops)
    smem = e.byte_offset(smem, slot_offset(e, g))
    origin = list(lowered(g.gmem_indices, e.ops))
    group = kernel.group(op)
    loops = [
        cp_async_loop(op, g, chunk, gmem, smem, origin, sizes, strides, group)
        for chunk in chunks
    ]
    inner = copy.inner_aligned(g, chunks)
    if unaligned_view(g, chunks) or (not inner and g.element_bits < 8 * chunks[-1]):
        # Nothing proves that even the smallest chunk divides the view's address and pitch,
        # or the innermost coordinate's bytes: where none does, the threads copy the box
        # unit by unit.
        tried, chosen = chunks, unit_loop(op, g, gmem, smem, origin, sizes, strides, group)
    else:
        # The runtime checked that the smallest chunk divides them (`PointerParam.align`),
        # or the element type does.
        tried, chosen = chunks[:-1], loops[-1]
    if tried:
        # The address, the dynamic strides and a coordinate not known to be aligned, in
        # bytes, or-ed: a chunk size divides them all where it divides this.
        alignment = e.ptrtoint(gmem)
        for stride in strides[:-1]:
            if not isinstance(stride, int):
                stride_bytes = elements_to_bytes(e, stride, g.element_bits)
                alignment = e(llvm.OrOp(alignment, stride_bytes)).results[0]
        if not inner:
            column = elements_to_bytes(e, origin[-1], g.element_bits)
            alignment = e(llvm.OrOp(alignment, column)).results[0]
        for chunk, loop in reversed(list(zip(tried, loops, strict=False))):
            pick = Emit()
            fits = pick.icmp("eq", pick.binary(llvm.AndOp, alignment, chunk - 1), 0)
            pick(scf.IfOp(fits, [], [*loop, scf.YieldOp()], [*chosen, scf.YieldOp()]))
            chosen = pick.ops
    e.ops += chosen
    if g.barrier is not None:
        # Each thread arrives once when its chunks have landed (noinc: the barrier's
        # arrivals count one per issuing thread).
        e(nvvm.CpAsyncMBarrierArriveSharedOp(barrier_pointer(e, g.barrier, g.barrier_index), True))
    return e.ops


def unaligned_view(g: copy.CopyGeometry, chunks: Sequence[int]) -> bool:
    """Whether the copy reads a view made in the kernel (`copy.gmem_view`) whose address or
    row pitch the smallest chunk may not divide: the view starts `offset` elements into its
    array, and its pitch is a value, so only an element as wide as the chunk proves it (an
    array's address is a multiple of its element's bytes)."""
    return copy.gmem_view(g.gmem) is not None and g.element_bits % (8 * chunks[-1]) != 0


def box_item(
    b: Emit,
    item: SSAValue,
    per_row: int,
    elems: int,
    g: copy.CopyGeometry,
    gmem: SSAValue,
    origin: list[SSAValue],
    strides: list[int | SSAValue],
) -> tuple[list[SSAValue], SSAValue]:
    """Item `item` of the copy's box, walked row-major in `per_row` items of `elems` elements
    a row (a cp.async chunk, or a unit): its GMEM position (`origin` plus its place in the
    box, the outer coordinates from the quotient) and the address of its first element."""
    in_row = b.binary(llvm.URemOp, item, per_row)
    rest = b.binary(llvm.UDivOp, item, per_row)
    coords: list[SSAValue] = []
    for size in reversed(g.gmem_box[:-1]):
        coords.insert(0, b.binary(llvm.URemOp, rest, size) if size > 1 else b.const(0))
        rest = b.binary(llvm.UDivOp, rest, size) if size > 1 else rest
    coords.append(b.mul(in_row, elems))
    position = [b.add(o, x) for o, x in zip(origin, coords, strict=True)]
    offset: SSAValue | None = None
    for p, stride in zip(position, strides, strict=True):
        term = b.mul(p, stride)
        offset = term if offset is None else b.add(offset, term)
    assert offset is not None
    return position, b.byte_offset(gmem, elements_to_bytes(b, offset, g.element_bits))


def unit_loop(
    op: copy.AsyncCopyOp,
    g: copy.CopyGeometry,
    gmem: SSAValue,
    smem: SSAValue,
    origin: list[SSAValue],
    sizes: list[int | SSAValue],
    strides: list[int | SSAValue],
    group: Group,
) -> list[Operation]:
    """The copy of a view no cp.async chunk can read (`unaligned_view`): the group's threads
    load the box's units (an element, or a byte of sub-byte elements) and store them to
    SMEM, unit u by thread u mod the group's threads; with `oob zeros` a unit outside the
    view's sizes is zero, and read from nowhere. On a barrier, a fence orders each thread's
    stores before its arrival (`cp.async.mbarrier.arrive`, which follows)."""
    bits = g.element_bits
    unit = max(1, bits // 8)
    unit_type = IntegerType(8 * unit)
    units_per_row = g.row_bytes // unit
    elems_per_unit = unit * 8 // bits
    box = g.gmem_box

    body = Block(arg_types=[i64])
    b = Emit()
    u = body.args[0]
    position, src = box_item(b, u, units_per_row, elems_per_unit, g, gmem, origin, strides)
    dst = b.byte_offset(smem, b.mul(u, unit))
    read = Emit()
    value = read(llvm.LoadOp(src, unit_type)).results[0]
    if op.oob_mode == copy.OOBMode.ZEROS:
        # Inside where every outer coordinate is below its size (unsigned: negative is
        # outside too) and the unit's elements are all before the row's end.
        left = b.binary(llvm.SubOp, size_value(sizes, -1, b), position[-1])
        inside = b.icmp("sge", left, elems_per_unit)
        for p, size in zip(position[:-1], sizes[:-1], strict=True):
            inside = b(llvm.AndOp(inside, b.icmp("ult", p, size))).results[0]
        zero = Emit()
        zero_value = zero.const(0, unit_type)
        loaded = b(
            scf.IfOp(
                inside,
                [unit_type],
                [*read.ops, scf.YieldOp(value)],
                [*zero.ops, scf.YieldOp(zero_value)],
            )
        )
        value = loaded.results[0]
    else:
        b.ops += read.ops
    b(llvm.StoreOp(value, dst))
    b(scf.YieldOp())
    body.add_ops(b.ops)
    e = Emit()
    total = e.const(prod(box[:-1]) * units_per_row)
    e(scf.ForOp(group.tid, total, group.nthreads, [], Region(body)))
    if g.barrier is not None:
        e(llvm.InlineAsmOp("fence.acq_rel.cta;", "~{memory}", [], has_side_effects=True))
    return e.ops


def cp_async_loop(
    op: copy.AsyncCopyOp,
    g: copy.CopyGeometry,
    chunk: int,
    gmem: SSAValue,
    smem: SSAValue,
    origin: list[SSAValue],
    sizes: list[int | SSAValue],
    strides: list[int | SSAValue],
    group: Group,
) -> list[Operation]:
    """The loop of the group's threads over the box's chunks of `chunk` bytes: chunk c is
    copied by thread c mod the group's threads; with `oob zeros` each chunk's source size
    is clipped to the array's sizes (cp.async zero-fills the rest). In a role (a static,
    often small group: a producer warp issues a whole tile), each iteration issues
    `unroll_factor` chunks, whose address arithmetic is independent."""
    bits, box = g.element_bits, g.gmem_box
    if op.cache is not None and op.cache.data == copy.CacheMode.CG:
        modifier = "cg"
    else:
        modifier = "cg" if chunk == 16 else "ca"
    chunks_per_row = g.row_bytes // chunk
    elems_per_chunk = chunk * 8 // bits
    total = prod(box[:-1]) * chunks_per_row
    zero_fill = op.oob_mode == copy.OOBMode.ZEROS

    def copy_chunk(b: Emit, c: SSAValue) -> None:
        position, src = box_item(b, c, chunks_per_row, elems_per_chunk, g, gmem, origin, strides)
        dst = b.byte_offset(smem, b.mul(c, chunk))
        src_size = None
        if zero_fill:
            valid: SSAValue | None = None
            for p, size in zip(position[:-1], sizes[:-1], strict=True):
                inside = b.icmp("ult", p, size)  # unsigned: negative is outside too
                valid = inside if valid is None else b(llvm.AndOp(valid, inside)).results[0]
            left = b.binary(llvm.SubOp, size_value(sizes, -1, b), position[-1])
            clipped = b(
                llvm.SelectOp(b.icmp("slt", left, elems_per_chunk), left, b.const(elems_per_chunk))
            ).results[0]
            clipped = b(llvm.SelectOp(b.icmp("slt", clipped, 0), b.const(0), clipped)).results[0]
            if valid is not None:
                clipped = b(llvm.SelectOp(valid, clipped, b.const(0))).results[0]
            src_size = b.resize(elements_to_bytes(b, clipped, bits), i32)
            # A fully out-of-bounds chunk reads nothing; point it at the array's start.
            src = b(llvm.SelectOp(b.icmp("eq", src_size, 0), gmem, src)).results[0]
        b(nvvm.CpAsyncSharedGlobalOp(dst, src, size=chunk, modifier=modifier, cp_size=src_size))

    unroll = unroll_factor(total, group.threads)
    body = Block(arg_types=[i64])
    b = Emit()
    for u in range(unroll):
        copy_chunk(b, body.args[0] if u == 0 else b.add(body.args[0], u * (group.threads or 1)))
    b(scf.YieldOp())
    body.add_ops(b.ops)
    e = Emit()
    step = group.nthreads if unroll == 1 else e.const(unroll * (group.threads or 1))
    e(scf.ForOp(group.tid, e.const(total), step, [], Region(body)))
    return e.ops


UNROLL = (8, 4, 2)
"""The chunks one iteration of a role's cp.async loop may issue."""


def unroll_factor(total: int, threads: int | None) -> int:
    """The chunks per iteration of a cp.async loop of `total` chunks over a group of
    `threads` (static: a role): the largest of `UNROLL` that divides each thread's share,
    1 for the block or a share that none divides."""
    if not threads or total % threads:
        return 1
    share = total // threads
    return next((u for u in UNROLL if share % u == 0), 1)


# ===----------------------------------------------------------------------=== #
# im2col by cp.async
# ===----------------------------------------------------------------------=== #


def ceil_div_at_least_one(e: Emit, a: SSAValue, s: int) -> SSAValue:
    """max(1, ceil(a / s)) for any i64 `a` and a positive constant `s`."""
    up = e.binary(llvm.SDivOp, e.add(a, s - 1), s)
    return e(llvm.SelectOp(e.icmp("sgt", a, 0), up, e.const(1))).results[0]


def im2col_pixel(
    e: Emit, g: copy.Im2colGeometry, origin: Sequence[SSAValue], row: SSAValue
) -> list[SSAValue]:
    """The filter base (n, spatial...) of pixel `row` of an im2col load from `origin`, as the
    TMA unit walks the bounding box: the innermost spatial dim first, each step its traversal
    stride; a dim whose next step reaches `extent + upper` restarts at its lower corner and
    carries one step into the next dim out (the outermost into n). Closed form per dim, from
    `steps` taken in it (`row` for the innermost): the first `first = max(1, ceil((end -
    start) / stride))` steps stay on the start's lap (start + steps * stride); the others wrap
    to `lower + ((steps - first) % lap) * stride` with `lap = ceil((end - lower) / stride)`
    bases a lap, carrying `1 + (steps - first) // lap` steps out."""
    extents = g.gmem_type.get_shape()[1:-1]
    steps = row
    base: list[SSAValue] = []
    for d in reversed(range(len(extents))):
        start, stride, lower = origin[1 + d], g.traversal_strides[d], g.lower[d]
        end = extents[d] + g.upper[d]
        lap = -(-(end - lower) // stride)  # >= 1: the box is not empty (IC6)
        first = ceil_div_at_least_one(e, e.binary(llvm.SubOp, e.const(end), start), stride)
        stays = e.icmp("ult", steps, first)
        past = e.binary(llvm.SubOp, steps, first)
        wrapped = e.add(e.mul(e.binary(llvm.URemOp, past, lap), stride), e.const(lower))
        on_lap = e.add(start, e.mul(steps, stride))
        base.insert(0, e(llvm.SelectOp(stays, on_lap, wrapped)).results[0])
        carried = e.add(e.binary(llvm.UDivOp, past, lap), 1)
        steps = e(llvm.SelectOp(stays, e.const(0), carried)).results[0]
    return [e.add(origin[0], steps), *base]


def im2col_cp_async(op: copy.Im2colLoadOp, kernel: Kernel) -> list[Operation]:
    """An im2col load gathered with cp.async by the issuing group's threads: item c of the
    box's `pixels x chunks per row` is pixel row c / chunks, chunk c % chunks of its
    channels; the pixel is read at its filter base plus the offsets (unsigned), zero-filled
    where the pixel or the channels lie outside the array (src-size 0, or the channels left
    in the row), as the TMA unit zero-fills them. Each thread then arrives once on the
    barrier (`cp.async.mbarrier.arrive.noinc`) when its chunks have landed."""
    g = op.geometry()
    shape, strides = static_memref(g.gmem_type, op)
    bits = g.element_bits
    # The chunk divides the pixel's channels, every GMEM stride and a constant channel
    # coordinate (H2); a dynamic channel coordinate is assumed a multiple of it, as for
    # tiled cp.async copies.
    chunk = copy.cp_async_chunk_bytes(g)
    assert chunk is not None
    per_row = g.channels * bits // 8 // chunk
    elems = chunk * 8 // bits

    e = Emit()
    (gmem,) = lowered([g.gmem], e.ops)
    (smem,) = lowered([g.smem], e.ops)
    smem = e.byte_offset(smem, slot_offset(e, g))
    origin = list(lowered(g.gmem_indices, e.ops))
    offsets = [e.resize(o, i64) for o in lowered(g.offsets, e.ops)]  # unsigned (IC11)

    body = Block(arg_types=[i64])
    b = Emit()
    c = body.args[0]
    n, *base = im2col_pixel(b, g, origin, b.binary(llvm.UDivOp, c, per_row))
    spatial = [b.add(p, o) for p, o in zip(base, offsets, strict=True)]
    channel = b.add(origin[-1], b.mul(b.binary(llvm.URemOp, c, per_row), elems))
    position = [n, *spatial, channel]
    valid: SSAValue | None = None
    for p, size in zip(position, shape, strict=True):
        inside = b.icmp("ult", p, size)  # unsigned: negative is outside too
        valid = inside if valid is None else b(llvm.AndOp(valid, inside)).results[0]
    assert valid is not None
    left = b.binary(llvm.SubOp, b.const(shape[-1]), channel)
    clipped = b(llvm.SelectOp(b.icmp("slt", left, elems), left, b.const(elems))).results[0]
    clipped = b(llvm.SelectOp(valid, clipped, b.const(0))).results[0]
    src_size = b.resize(elements_to_bytes(b, clipped, bits), i32)
    offset: SSAValue | None = None
    for p, stride in zip(position, strides, strict=True):
        term = b.mul(p, stride)
        offset = term if offset is None else b.add(offset, term)
    assert offset is not None
    src = b.byte_offset(gmem, elements_to_bytes(b, offset, bits))
    # A fully out-of-bounds chunk reads nothing; point it at the array's start.
    src = b(llvm.SelectOp(b.icmp("eq", src_size, 0), gmem, src)).results[0]
    dst = b.byte_offset(smem, b.mul(c, chunk))
    modifier = "cg" if chunk == 16 else "ca"
    b(nvvm.CpAsyncSharedGlobalOp(dst, src, size=chunk, modifier=modifier, cp_size=src_size))
    b(scf.YieldOp())
    body.add_ops(b.ops)
    group = kernel.group(op)
    e(scf.ForOp(group.tid, e.const(g.pixels * per_row), group.nthreads, [], Region(body)))
    bar = barrier_pointer(e, g.barrier, g.barrier_index)
    e(nvvm.CpAsyncMBarrierArriveSharedOp(bar, True))
    return e.ops
