"""The TMA copies: a `copy.async_copy` (`impl tma`) and a `copy.prefetch` of a box, issued
by the elected thread (of the block, or of the role of `copy.warp_specialize` that holds
it) through a tensor-map parameter of the kernel (one per distinct descriptor, appended on
first use) or through the map in global memory that the copy names (`map(%m : ...)`):

- a load arrives on its barrier expecting the box bytes (unless `arrive = false`) and
  issues `cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`; a
  multicast load issues this CTA's share of the box with `.multicast::cluster` and the mask
  of its collective group; a leader-tracked load (`.cta_group::2`) signals the barrier of
  its CTA pair's leader;
- a store is `cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group`, a reduction
  `cp.reduce.async.bulk.tensor`; a user predicate is and-ed with the elected thread;
- a prefetch is `cp.async.bulk.prefetch.tensor`.

Also what the bulk and im2col lowerings share with them: the L2 cache-hint operand, the TMA
coordinates, the barrier a load completes on (`load_barrier`), the window a load writes
(`own_window`) and a CTA's place in its collective group (`collective_position`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i16, i32, i64
from xdsl.ir import Operation, SSAValue

from copy_dialect import layout
from copy_dialect import ops as copy
from facts.abi import TensorMapParam
from passes import nvvm
from passes.convert_copy_to_nvvm.barriers import barrier_pointer
from passes.convert_copy_to_nvvm.emit import Emit
from passes.convert_copy_to_nvvm.kernel import Kernel
from passes.convert_copy_to_nvvm.smem import slot_offset
from passes.llvm_types import SHARED, lowered, ptr

PEER_BIT_MASK = 0xFFFFFFFFFEFFFFFF
"""Clears the peer bit of a shared::cluster address: the pair's even (leader) CTA."""


def tma_prefetch(op: copy.PrefetchOp, g: copy.BoxGeometry, kernel: Kernel) -> list[Operation]:
    """A TMA prefetch of `op`'s box (its geometry `g`) into L2
    (`cp.async.bulk.prefetch.tensor`), by the elected thread."""
    descriptor = tma_descriptor(g, kernel, False, op.l2_promotion_bytes)
    body = Emit()
    indices = lowered(op.indices, body.ops)
    if kernel.guards is not None:
        kernel.guards.coordinate_range(body, kernel.fn, op, op.indices, indices)
    coords = tma_coordinates(body, indices)
    hint = l2_cache_hint(body, op, kernel)
    body(
        nvvm.CpAsyncBulkTensorPrefetchOp(
            tma_descriptor=descriptor, coordinates=coords, l2_cache_hint=hint
        )
    )
    e = Emit()
    kernel.group(op).elected(e, body.ops)
    return e.ops


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
        int(g.swizzle_bytes),
        g.tensor_map_oob,
        dtype,
        written=False,
        l2_promotion=l2_promotion,
        swizzle_atom=layout.atom_of(g.swizzle_bytes),
        swizzle_flip=layout.flip_of(g.swizzle_bytes),
    )
    return kernel.tensor_map(key, written)


def l2_cache_hint(
    e: Emit,
    op: copy.AsyncCopyOp
    | copy.PrefetchOp
    | copy.Im2colLoadOp
    | copy.Gather4Op
    | copy.Scatter4Op
    | copy.Gather4PrefetchOp,
    kernel: Kernel,
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


def tma_copy(op: copy.AsyncCopyOp, g: copy.CopyGeometry, kernel: Kernel) -> list[Operation]:
    """A TMA load, store or reduction (`op`, of geometry `g`), issued by the elected
    thread."""
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
    expect = g.credited_bytes if g.arrives and op.leader_tracked is None else None
    bar = load_barrier(e, op, kernel, expect)
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


def load_barrier(
    e: Emit,
    op: copy.AsyncCopyOp | copy.Im2colLoadOp | copy.Gather4Op,
    kernel: Kernel,
    expect: int | None,
) -> SSAValue:
    """The barrier a TMA or bulk load completes on, its index checked first under debug
    guards (P9); with `expect`, the issuing thread's arrival on it expecting that many
    bytes."""
    assert op.barrier is not None  # rule A3
    if kernel.guards is not None:
        kernel.guards.barrier_index(e, kernel.fn, op, op.barrier, op.barrier_index)
    bar = barrier_pointer(e, op.barrier, op.barrier_index)
    if expect is not None:
        e(nvvm.MBarrierArriveExpectTxSharedOp(bar, e.const(expect, i32)))
    return bar


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
    return pair_barrier(e, bar, index, g.credited_bytes if g.arrives else None), indices


def pair_barrier(e: Emit, bar: SSAValue, index: SSAValue, expect: int | None) -> SSAValue:
    """The barrier of the CTA pair's leader: this CTA's barrier address `bar` with the peer
    bit cleared; with `expect`, the leader (pair `index` 0) first arrives on its own barrier
    expecting that many bytes (both CTAs')."""
    if expect is not None:
        arrive = Emit()
        arrive(nvvm.MBarrierArriveExpectTxSharedOp(bar, arrive.const(expect, i32)))
        e.if_(e.icmp("eq", index, 0), arrive.ops)
    leader_address = e.binary(llvm.AndOp, e.ptrtoint(bar), PEER_BIT_MASK)
    return e.inttoptr(leader_address, ptr(SHARED))


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
