"""The rules of `copy.async_copy` that every implementation shares: memory spaces, element
types, indices, the barrier operands, the implementation against the target, the direction,
the L2 policy and constant coordinates. The op is `copy_dialect.copies`; the rules of one
implementation are in `copy_dialect.tma`, `copy_dialect.cp_async` and `copy_dialect.bulk`."""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import (
    MemRefType,
)

from copy_dialect.attributes import (
    Implementation,
    OOBMode,
)
from copy_dialect.cp_async import verify_tracked
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import CopyGeometry
from copy_dialect.gmem import check_gmem_layout
from copy_dialect.l2_policy import (
    verify_cache_hint,
    verify_cache_policy,
    verify_l2_promotion,
)
from copy_dialect.memory import (
    GMEM,
    SMEM,
    TMEM,
    bitwidth,
    memory_space,
    padded_stride,
)
from copy_dialect.portability import legalize_hint
from copy_dialect.tma import check_coordinate_range, check_tma_dtype
from copy_dialect.verify_common import (
    check_barrier_index,
    constant_int,
    enclosing_target,
    feature_error,
)
from facts import hardware
from facts.target import BULK_COPIES, CTA_PAIR, MULTICAST, TMA

if TYPE_CHECKING:
    from copy_dialect.copies import AsyncCopyOp


def check_l2(op: AsyncCopyOp, impl: Implementation | None) -> None:
    """The L2 cache policy: one spelling, a valid policy, on a copy that takes one."""
    verify_cache_hint(op.l2, op.cache_hint)
    verify_cache_policy(op.l2, op.l2_fraction, op.l2_secondary)
    # rule: L3
    if impl == Implementation.CP_ASYNC and (op.l2 is not None or op.cache_hint is not None):
        raise Error(
            "Expected no L2 cache policy on a cp.async copy: the cp.async lowering has no "
            "cache-hint operand",
            note="drop the L2 policy (l2 / cache_hint), or use impl tma on sm_90 or newer",
        )
    verify_l2_promotion(op.l2_promotion, impl)


def check_applicable(op: AsyncCopyOp, g: CopyGeometry, impl: Implementation | None) -> None:
    """The options that only one form of copy has are not given to another, where they
    would be dropped (AT3): `cache` is cp.async's cache operator, `swizzle` a TMA copy's
    tensor-map swizzle, `arrive` whether a copy arrives on its barrier."""
    if impl is not None and impl != Implementation.CP_ASYNC and op.cache is not None:
        # rule: AT3
        raise Error(
            f"Expected no cache mode on a {impl} copy, got cache {op.cache.data}: the cache "
            "mode is cp.async's cache operator (.ca, .cg), which the copy would drop",
            note=f"drop cache {op.cache.data}, or use impl cp_async",
        )
    if impl is not None and impl != Implementation.TMA and op.swizzle is not None:
        # rule: AT3
        raise Error(
            f"Expected no swizzle attribute on a {impl} copy, got swizzle = "
            f"{op.swizzle.value.data}: it states a TMA copy's tensor-map swizzle, and a {impl} "
            "copy has no tensor map",
            note=f"drop swizzle = {op.swizzle.value.data} (the SMEM buffer's type, "
            "#copy.smem<swizzle = N>, is its layout)",
        )
    if g.barrier is None and op.arrive is not None:
        arrive = "true" if op.arrive.value.data else "false"
        # rule: AT3
        raise Error(
            f"Expected no arrive attribute on a copy without a barrier, got arrive = {arrive}: "
            "it says whether the copy arrives on its barrier",
            note=f"drop arrive = {arrive}",
        )


def check_spaces(op: AsyncCopyOp, g: CopyGeometry) -> None:
    src_type, dst_type = (g.gmem_type, g.smem_type) if g.is_load else (g.smem_type, g.gmem_type)
    src_space, dst_space = memory_space(src_type), memory_space(dst_type)
    # rule: B2
    if {src_space, dst_space} != {GMEM, SMEM}:
        raise Error(
            "Only SMEM <-> GMEM copies supported",
            note=f"got a copy from {src_space} to {dst_space}; a GMEM ref has no memory "
            "space and an SMEM ref has #copy.smem"
            + (
                "; TMEM is reached with copy.tmem_load, copy.tmem_store and copy.smem_to_tmem"
                if TMEM in (src_space, dst_space)
                else ""
            ),
        )
    # rule: B1
    if src_type.element_type != dst_type.element_type:
        raise Error(
            f"Expected same element type, got {src_type.element_type} and {dst_type.element_type}",
            note="copies do not convert: give both refs the same element type, "
            f"{src_type.element_type} or {dst_type.element_type}",
        )


def check_types(op: AsyncCopyOp, g: CopyGeometry, impl: Implementation | None) -> None:
    """The rules on the box, element type, GMEM layout, direction and implementation."""
    gmem_type, smem_type = g.gmem_type, g.smem_type
    check_indices(op, g, gmem_type, smem_type)
    check_element_type(op, g, impl)
    check_gmem_layout(g, gmem_type, impl, op.cp_async_alternative(g))
    # What no implementation can do comes before what only another one can (E3 and B4
    # before A9, A4, A5): the direction's rules are the more specific.
    check_direction(op, g)
    check_implementation(op, g, impl)
    # rule: A3
    if impl is not None and impl.is_bulk_async and g.is_load and g.barrier is None:
        raise Error(
            f"Barriers are required for {impl.upper()} GMEM -> SMEM copies",
            note="give the load a barrier (barrier %bar[%i], from copy.barrier_init) and "
            "wait on it with copy.barrier_wait" + op.cp_async_alternative(g),
        )


def check_barrier_operands(op: AsyncCopyOp, g: CopyGeometry) -> None:
    if g.barrier is not None:
        check_barrier_index(g.barrier, g.barrier_index)
        return
    # rule: I2
    if g.barrier_index is not None:
        raise Error(
            "a barrier index needs a barrier, but the copy has none",
            note="drop barrier_index, or pass the barrier group it indexes (barrier=)",
        )


def check_indices(
    op: AsyncCopyOp, g: CopyGeometry, gmem_type: MemRefType, smem_type: MemRefType
) -> None:
    rank = gmem_type.get_num_dims()
    # rule: K1
    if len(g.gmem_indices) != rank:
        raise Error(
            f"expected {rank} coordinates, but got {len(g.gmem_indices)}",
            note=f"index the GMEM ref with the box origin, one index per dimension ({rank})",
        )
    slots = len(g.smem_indices)
    # rule: B12
    if slots >= smem_type.get_num_dims() and smem_type.get_num_dims() > 0:
        raise Error(
            f"The size of the SMEM `indices` must be smaller than the rank of the SMEM "
            f"ref ({smem_type.get_num_dims()}), got {slots}",
            note="SMEM indices pick a slot along leading dims; the remaining dims are the box: "
            f"use at most {smem_type.get_num_dims() - 1}",
        )
    # rule: B6
    if len(g.box_shape) > rank or not g.box_shape:
        src, dst = (gmem_type, g.box_shape) if g.is_load else (g.box_shape, gmem_type)
        src_shape = list(src.get_shape()) if isinstance(src, MemRefType) else list(src)
        dst_shape = list(dst.get_shape()) if isinstance(dst, MemRefType) else list(dst)
        raise Error(
            f"Expected shapes to match, but src has shape {src_shape} and dst has shape "
            f"{dst_shape}",
            note="the box (the SMEM ref's dims after its slot indices) may leave out "
            "leading GMEM dims, which are then copied with size 1, but not add dims: index "
            "a slot of the SMEM ref, or give the GMEM ref more dims",
        )


def check_element_type(op: AsyncCopyOp, g: CopyGeometry, impl: Implementation | None) -> None:
    elt = g.element_type
    bits = bitwidth(elt)
    box = list(g.box_shape)
    # rule: B8
    if bits is None or (prod(box) * bits) % 8:
        raise Error(
            f"Can only transfer integer bytes (shape={box}, dtype={elt})",
            note="copy whole bytes: a box of sub-byte elements needs a multiple of "
            f"{8 // bits if bits else 8} elements, e.g. "
            f"{box[:-1] + [-(-box[-1] // (8 // bits)) * (8 // bits)] if box else [8 // bits]}"
            if bits
            else "use a numeric element type",
        )
    if impl == Implementation.TMA:
        check_tma_dtype(elt, packed=True)
    # rule: C12
    if bits < 8:
        packing = 8 // bits
        assert isinstance(gmem_type := g.gmem.type, MemRefType)
        minor = gmem_type.get_shape()[-1] if gmem_type.get_num_dims() else 1
        if box[-1] % packing or (minor >= 0 and minor % packing):
            pads = []
            if minor >= 0 and minor % packing:
                shape = [*gmem_type.get_shape()[:-1], padded_stride(minor, elt, 1)]
                pads.append(f"the GMEM ref to {MemRefType(elt, shape)}")
            if box[-1] % packing:
                pads.append(f"the box dim to {padded_stride(box[-1], elt, 1)}")
            raise Error(
                f"sub-byte element type {elt}: the innermost GMEM dim ({minor}) and box "
                f"dim ({box[-1]}) must be multiples of the packing {packing}",
                note=f"pad the innermost dimension to whole bytes: {' and '.join(pads)}",
            )


def check_implementation(op: AsyncCopyOp, g: CopyGeometry, impl: Implementation | None) -> None:
    target = enclosing_target(op)
    # rule: A1
    if impl == Implementation.BULK and target is not None and not BULK_COPIES.has(target):
        raise feature_error(
            op,
            BULK_COPIES,
            target,
            uses="with impl bulk",
            note=(
                "use impl cp_async without the barrier"
                if g.is_load
                else "store from threads with memref.store"
            )
            + ", or target sm_90 or newer"
            + legalize_hint(target),
        )
    # rule: A1
    if impl == Implementation.TMA and target is not None and not TMA.has(target):
        cp_async = op.cp_async_alternative(g).removeprefix(", or ")
        if not g.is_load:
            note = "cp.async cannot store or reduce: target sm_90 or newer, or store from "
            note += "threads with memref.store"
        elif cp_async and g.barrier is None:
            note = f"{cp_async}, or leave the implementation open to let the target choose"
        else:
            note = (f"{cp_async}, or " if cp_async else "") + "target sm_90 or newer"
        note += legalize_hint(target)
        raise feature_error(op, TMA, target, uses="with impl tma", note=note)
    if impl is None or impl.is_bulk_async:
        return
    # rule: A9
    if op.reduction is not None:
        raise Error(
            "Only the TMA implementation supports reductions",
            note=op.tma_note(g, "sm_90 or newer"),
        )
    # A leader-tracked copy is also collective (D3): A5, the more specific rule, first.
    # rule: A5
    if op.leader_tracked is not None:
        raise Error(
            "Only the TMA implementation supports leader_tracked copies",
            note=op.tma_note(g, CTA_PAIR.listed, target is not None and CTA_PAIR.has(target))
            + legalize_hint(target),
        )
    # rule: A4
    if op.collective is not None:
        raise Error(
            "Only the TMA implementation supports collective copies",
            note=op.tma_note(g, MULTICAST.listed, target is not None and MULTICAST.has(target))
            + legalize_hint(target),
        )
    # rule: B5
    if not g.is_load:
        raise Error(
            "CP_ASYNC implementation only supports GMEM -> SMEM copies",
            note="cp.async cannot store: use impl tma on sm_90 or newer, or store from threads "
            "with memref.store",
        )
    # rule: A2
    if g.barrier is not None and op.implementation is None:
        raise Error(
            "copy_gmem_to_smem with a barrier is only supported Hopper and newer GPUs, "
            "which use the TMA implementation",
            note="drop the barrier and wait with copy.commit_group cp_async + "
            "copy.wait_group cp_async, or use impl tma on sm_90+, or name impl cp_async to "
            "track the copy with the barrier (each issuing thread arrives once: count them "
            "in its arrivals)" + legalize_hint(target),
        )
    if g.barrier is not None:
        verify_tracked(op, g)
    # rule: A10, H1
    if op.predicate is not None:
        raise Error(
            "The cp.async implementation does not support user-defined predicates",
            note="all threads of the block issue a cp.async copy together: guard the "
            "whole copy with scf.if on a block-uniform condition"
            + (", or use impl tma" if target is not None and target.has_tma else ""),
        )


def check_direction(op: AsyncCopyOp, g: CopyGeometry) -> None:
    if g.is_load:
        # rule: E3
        if op.reduction is not None:
            raise Error(
                "Reductions are only supported for SMEM -> GMEM copies",
                note="drop reduce for a plain load; a reduction is a store that combines "
                "SMEM into GMEM: swap src and dst (and drop the barrier)",
            )
        return
    # rule: B3
    if g.barrier is not None:
        raise Error(
            "Barriers are unsupported for SMEM -> GMEM copies",
            note="drop the barrier: stores complete through bulk groups "
            "(copy.commit_group bulk, then copy.wait_group bulk)",
        )
    # rule: B4
    if op.collective is not None or op.leader_tracked is not None:
        raise Error(
            "Only GMEM -> SMEM copies can be collective",
            note="drop collective/leader_tracked: each CTA stores its own SMEM",
        )
    # rule: F1
    if op.oob is not None and op.oob.data in (OOBMode.ZEROS, OOBMode.NAN):
        raise Error(
            f"oob {op.oob.data} only applies to GMEM -> SMEM copies",
            note="a TMA store never writes outside the array (it clips); drop oob",
        )


def check_constant_coordinates(
    op: AsyncCopyOp, g: CopyGeometry, impl: Implementation | None
) -> None:
    coords = [constant_int(i) for i in g.gmem_indices]
    bits = g.element_bits
    if impl == Implementation.TMA:
        check_coordinate_range(g.gmem_indices)
        inner = coords[-1] if coords else None
        multiple = hardware.COORDINATE_BYTES_MULTIPLE
        # rule: TR12
        if inner is not None and (inner * bits // 8) % multiple:
            raise Error(
                f"the innermost TMA coordinate must be a multiple of {multiple} bytes, got "
                f"{inner} ({inner * bits // 8} bytes)",
                note="any other innermost coordinate is an illegal instruction on the GPU: "
                f"start boxes at multiples of {max(1, 8 * multiple // bits)} elements",
            )
        for i, c in enumerate(coords):
            # rule: TR13
            if not g.is_load and c is not None and c < hardware.MIN_STORE_COORDINATE:
                raise Error(
                    f"TMA store coordinates must be >= 0, got {c} at index {i}",
                    note="a negative store coordinate is an illegal instruction on the GPU "
                    "(loads may start out of bounds, stores may not): start at 0 or more",
                )
    if g.oob != OOBMode.PROMISE_IN_BOUNDS:
        return
    outside = g.window_outside()
    # rule: F3
    if outside is not None:
        i, c, size, n = outside
        raise Error(
            f"the copy window [{c}, {c + size}) along dim {i} is out of bounds of the "
            f"GMEM ref (size {n}), but oob is promise_in_bounds",
            note="use oob zeros to fill the out-of-bounds part",
        )
