"""The TMA rules: the box and element type a tensor map can describe (shared by
`copy.async_copy` and `copy.prefetch`), and the rules of TMA copies (swizzle, reductions,
collective and leader-tracked loads, SMEM slot alignment)."""

from __future__ import annotations

from collections.abc import Sequence
from math import gcd, prod

from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerType,
    MemRefType,
    NoneAttr,
)
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Operation,
    SSAValue,
)

from copy_dialect.attributes import SWIZZLES, OOBMode
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import (
    REDUCTIONS_BY_MAP,
    BoxGeometry,
    CopyGeometry,
    base_reduction,
    reduction_map_op,
    tma_supports_dtype,
)
from copy_dialect.memory import bitwidth, padded_stride, smem_alignment, smem_bytes, smem_strides
from copy_dialect.smem import AllocSmemOp
from copy_dialect.verify_common import (
    constant_int,
    enclosing_kernel,
    enclosing_target,
    feature_error,
    retarget_note,
    value_name,
)
from facts import hardware as hw
from facts.target import CTA_PAIR, MULTICAST, Target


def merged_leading_dims_example(t: MemRefType) -> str:
    """`, e.g. to memref<...>` with the leading dims of row-major `t` merged down to 5 dims."""
    shape = t.get_shape()
    if not isinstance(t.layout, NoneAttr) or len(shape) <= 5 or min(shape) < 0:
        return ""
    merged = MemRefType(t.element_type, [prod(shape[: len(shape) - 4]), *shape[-4:]])
    return f", e.g. to {merged} (merging leading dims)"


COORDINATE_RANGE = range(-(2**31), 2**31)
"""A TMA coordinate is a signed 32-bit value (`cp.async.bulk.tensor`,
`cp.reduce.async.bulk.tensor` and `cp.async.bulk.prefetch.tensor` take .s32 coordinates)."""


def check_coordinate_range(indices: Sequence[SSAValue], what: str = "TMA copy") -> None:
    """The constant coordinates of a TMA op fit in .s32 (K4); the lowering keeps the low 32
    bits of each, so one outside would address another element silently. The debug guards
    check dynamic ones at run time."""
    low, high = COORDINATE_RANGE.start, COORDINATE_RANGE.stop - 1
    for i, index in enumerate(indices):
        c = constant_int(index)
        # rule: K4
        if c is not None and c not in COORDINATE_RANGE:
            wrapped = (c - low) % 2**32 + low
            note = (
                "a tensor map cannot reach that far along one dim: pass the kernel a view of "
                f"the array that starts at index {c} of dim {i} (on the host, a slice), and "
                "index it from 0 there"
                if c > high
                else f"the box lies wholly before the array (a load reads only the OOB fill): "
                f"start it at {low} or more"
            )
            raise Error(
                f"Expected the coordinates of a {what} in the signed 32-bit range "
                f"[{low}, {high}], got {c} at index {i}: the instruction takes .s32 "
                f"coordinates, and {c} would address {wrapped}",
                note=note,
            )


def check_tma_dtype(elt: Attribute, packed: bool = False) -> None:
    """C11: a map type for `elt`; `packed`: the op takes the packed 4-bit map type (tiled
    copies and prefetches, `copy_dialect.blackwell_maps`)."""
    # rule: C11
    if not tma_supports_dtype(elt, packed):
        raise Error(
            f"unsupported TMA dtype {elt}",
            note="TMA copies 8- to 64-bit integers, f16, bf16, tf32, f32, f64 and 8-bit floats "
            "(and f4E2M1FN, f6E2M3FN, f6E3M2FN in tiled copies and prefetches on sm_100+); "
            + (
                "pack 4-bit elements into i8"
                if bitwidth(elt) == 4
                else "store the values as i8"
                if isinstance(elt, IntegerType) and elt.width.data < 8
                else "bitcast other types to an integer of the same width"
            ),
        )


def check_kernel_argument(op: Operation, gmem: SSAValue) -> None:
    kernel = enclosing_kernel(op)
    entry = None if kernel is None or not kernel.regions[0].blocks else kernel.regions[0].blocks[0]
    # rule: B11
    if not (isinstance(gmem, BlockArgument) and gmem.block is entry):
        raise Error(
            f"Expected {value_name(gmem)} to be a GMEM kernel argument.",
            note="a TMA descriptor is encoded on the host before launch: make "
            f"{value_name(gmem)} an argument of the kernel and index it, instead of a view made "
            "in the kernel",
        )


def check_tma_box(g: BoxGeometry, *, rank_note: str, size_note: str) -> None:
    """The box a tensor map can describe, for copies and prefetches alike: 1 to 5 dims and
    at most the array's rank (C3), 1 to 256 elements per dim (C7), innermost rows of whole
    16-byte chunks (C4). The notes say how to mend the box in the op's own terms."""
    box, rank = g.box_shape, g.gmem_type.get_num_dims()
    # rule: C3
    if not hw.MIN_RANK <= len(box) <= rank <= hw.MAX_RANK:
        raise Error("Async copies only support striding up to 5 dimensions", note=rank_note)
    for size in box:
        # rule: C7, TR5
        if not 1 <= size <= hw.MAX_BOX_DIM:
            raise Error(
                f"Async copies only support copying <={hw.MAX_BOX_DIM} elements along each "
                f"dimension, got {size}",
                note=size_note,
            )
    check_tma_row(g)


def check_tma_row(g: BoxGeometry) -> None:
    """The box's innermost rows are whole 16-byte chunks (C4), for tiled and im2col maps."""
    box, bits = g.box_shape, g.element_bits
    row_bits = 8 * hw.BOX_ROW_MULTIPLE
    # rule: C4, TR5
    if (box[-1] * bits) % row_bits:
        raise Error(
            "Async copies require the number of bits copied along the last dimension "
            f"to be divisible by {row_bits}, but got {box[-1] * bits}",
            note=f"make the innermost box dim a multiple of {max(1, row_bits // bits)} "
            f"elements ({g.element_type}): "
            f"{padded_stride(box[-1], g.element_type, hw.BOX_ROW_MULTIPLE)} rather than "
            f"{box[-1]}",
        )


# ===----------------------------------------------------------------------=== #
# TMA copies
# ===----------------------------------------------------------------------=== #


def verify_copy(g: CopyGeometry, *, swizzle: int | None, partition_axis: int | None) -> None:
    """The rules of a TMA `copy.async_copy` (a load has its barrier: A3), in the order they
    are reported; `swizzle` and `partition_axis` are the op's `swizzle` and the partition axis
    of its `leader_tracked`."""
    check_kernel_argument(g.op, g.gmem)
    gmem_type = g.gmem_type
    check_tma_box(
        g,
        rank_note=f"the GMEM ref has rank {gmem_type.get_num_dims()}; a tensor map has 1 to 5 "
        f"dims: reshape the array{merged_leading_dims_example(gmem_type)}",
        size_note=f"split the box {list(g.box_shape)} into several copies of at most "
        f"{hw.MAX_BOX_DIM} elements per dimension",
    )
    verify_copy_box(g, swizzle)
    _verify_reduction(g)
    _verify_collective(g, partition_axis)
    verify_smem_alignment(g)


def verify_copy_box(g: CopyGeometry, descriptor_swizzle: int | None) -> None:
    """What a copy adds to its tensor map's box: array extents, the swizzle, the NaN fill."""
    gmem_type, box, bits = g.gmem_type, g.box_shape, g.element_bits
    minor_bits = box[-1] * bits
    for i, size in enumerate(gmem_type.get_shape()):
        # rule: C8
        if size > hw.MAX_GLOBAL_DIM:
            raise Error(
                f"TMA size must be at most 2**32, but got {size} at index {i}",
                note="split the array: a tensor-map dimension holds at most 2**32 elements",
            )
    swizzle = g.swizzle_bytes
    # rule: C15
    if descriptor_swizzle is not None and descriptor_swizzle != swizzle:
        raise Error(
            "TMA descriptor layout must match shared layout, but got descriptor layout "
            f"swizzle {descriptor_swizzle} and shared memory layout swizzle {swizzle}",
            note=f"drop the copy's swizzle, or allocate the buffer as "
            f"#copy.smem<swizzle = {descriptor_swizzle}>",
        )
    # rule: C5, TR8
    if swizzle != 16 and hw.ROW_AT_MOST_SPAN and minor_bits > swizzle * 8:
        raise Error(
            f"Async copies with swizzle={swizzle} require the last dimension of the slice "
            f"to be at most {swizzle} bytes i.e. {swizzle * 8 // bits} elements, but got "
            f"{box[-1]} elements.",
            note=f"narrow the innermost box dim to {swizzle * 8 // bits} elements (one "
            "swizzle span) and copy the rest separately, or use "
            + next(
                (f"swizzle = {s}" for s in SWIZZLES if s > swizzle and minor_bits <= s * 8),
                "an unswizzled buffer",
            ),
        )
    # rule: TR15
    if (
        hw.NAN_FILL_FLOATS_ONLY
        and g.oob == OOBMode.NAN
        and not isinstance(g.element_type, AnyFloat)
    ):
        raise Error(
            f"oob nan needs a floating-point element type, got {g.element_type}",
            note="the NaN fill (NAN_REQUEST_ZERO_FMA) exists only for float tensor maps: "
            "use oob zeros",
        )


def _verify_reduction(g: CopyGeometry) -> None:
    if g.reduction is None:
        return
    kind, elt = g.reduction, g.element_type
    map_type = g.tensor_map_type
    # rule: E1, E5
    if map_type is None or reduction_map_op(kind, elt) not in REDUCTIONS_BY_MAP[map_type]:
        supported = sorted(REDUCTIONS_BY_MAP.get(map_type or "", ()))
        base = base_reduction(kind)
        if base != kind.value and not isinstance(elt, IntegerType) and base in supported:
            # umin/smax... pick an integer comparison; a float map compares as floats.
            note = (
                f"use reduce {base}: {kind} names the signedness of an integer comparison, "
                f"and {elt} (tensor map {map_type}) takes {', '.join(supported)}"
            )
        elif supported:
            note = f"{elt} (tensor map {map_type}) takes {', '.join(supported)}"
        else:
            note = f"no TMA reduction exists for {elt}"
        raise Error(
            f"Reduction op {kind} not supported by the TMA implementation for element type {elt}",
            note=note + " (measured on an H200; anything else is an illegal instruction)",
        )


def _verify_collective(g: CopyGeometry, partition_axis: int | None) -> None:
    dims = g.collective_dims
    if not dims and not g.leader_tracked:
        return
    # rule: D7
    if len(set(dims)) != len(dims):
        raise Error(
            "The `collective` attribute must not contain duplicate dimensions.",
            note=f"got {list(dims)}: name each cluster dim once",
        )
    # rule: D13
    if any(d not in (0, 1, 2) for d in dims):
        raise Error(
            f"collective dims are cluster dims 0 (x), 1 (y) or 2 (z), got {list(dims)}",
            note="name each cluster dimension the copy is shared over once: 0 (x), 1 (y), 2 (z)",
        )
    target = enclosing_target(g.op)
    if g.leader_tracked:
        _verify_leader_tracked(g, dims, partition_axis, target)
        return
    # rule: A4
    if target is not None and not MULTICAST.has(target):
        raise feature_error(
            g.op,
            MULTICAST,
            target,
            uses="with collective",
            note=".multicast::cluster is an arch-specific feature: " + retarget_note(MULTICAST),
        )
    split = g.multicast
    assert split is not None
    size, dim, box = split.size, split.dim, g.box_shape
    # rule: D5
    if size < 2:
        raise Error(
            f"a collective copy over cluster dims {list(dims)} needs a cluster larger "
            f"than 1 along them, got cluster {list(g.cluster)}",
            note="set copy.cluster = array<i32: x, y, z> on the kernel, or drop collective",
        )
    share = split.share
    innermost = dim == len(box) - 1
    # rule: D5
    if not split.divides or (
        innermost and (g.swizzle_bytes != 16 or share[-1] * g.element_bits % 128)
    ):
        raise Error(
            f"None of the leading dimensions in the transformed slice shape {list(box)} "
            f"is divisible by the collective size {size}",
            note=f"each CTA of the collective loads 1/{size} of the box along its outermost "
            f"dim larger than 1 (here dim {dim}) and multicasts it: make that dim a multiple "
            f"of {size}, e.g. {-(-box[dim] // size) * size}"
            + (" (an unswizzled innermost dim of whole 16-byte chunks)" if innermost else ""),
        )
    share_bytes = g.share_bytes
    required = smem_alignment(g.swizzle_bytes)
    # rule: D5, TR11
    if share_bytes % required:
        grown = box[dim] * (required // gcd(share_bytes, required))
        raise Error(
            f"each CTA's share of the multicast box is {share_bytes} bytes, not a multiple "
            f"of the {required} bytes TMA needs its SMEM destination aligned to",
            note=f"make the box's share per CTA ({list(share)}) a multiple of {required} bytes"
            + (f", e.g. a box dim {dim} of {grown}" if grown <= 256 else ""),
        )


def _verify_leader_tracked(
    g: CopyGeometry, dims: Sequence[int], partition_axis: int | None, target: Target | None
) -> None:
    assert g.leader_tracked
    cluster = g.cluster
    # rule: D3
    if not dims:
        raise Error(
            "`collective_axes` must be specified when `leader_tracked` is set",
            note="give the cluster dim of the CTA pair: collective = array<i64: 0>",
        )
    # rule: D1
    if len(dims) != 1:
        raise Error(
            f"Expected exactly one collective axis, got collective_axes={list(dims)}",
            note="a leader-tracked copy is shared by a pair of CTAs along one cluster dim: "
            f"keep one of the collective dims {list(dims)}",
        )
    # rule: D2
    if prod(cluster) != 2:
        raise Error(
            "Partitioned loads only supported for clusters of size 2. Got cluster size "
            f"{prod(cluster)}.",
            note="set copy.cluster = array<i32: 2, 1, 1> (or 1, 2, 1 / 1, 1, 2) on the kernel",
        )
    pair = next(d for d in range(len(cluster)) if cluster[d] == 2)
    # rule: D2
    if cluster[dims[0]] != 2:
        raise Error(
            f"the collective axis {dims[0]} of a leader-tracked copy has extent "
            f"{cluster[dims[0]]} in the cluster {list(cluster)}: expected the pair's axis, "
            "of extent 2",
            note=f"use collective = array<i64: {pair}> (the cluster dim that holds the pair); "
            "with an axis of extent 1 both CTAs take themselves for the leader and each "
            "waits for both boxes",
        )
    axis = partition_axis
    box = g.box_shape
    # rule: D4
    if axis is not None and axis >= len(box):
        raise Error(
            f"partition axis {axis} is out of range for the rank-{len(box)} slice {list(box)}",
            note=f"partition along a dim of the box (0 to {len(box) - 1}); each CTA's SMEM ref "
            "holds its half",
        )
    # rule: A5, A14
    if target is not None and not CTA_PAIR.has(target):
        raise feature_error(
            g.op,
            CTA_PAIR,
            target,
            uses="with leader_tracked",
            note="drop leader_tracked for a plain collective copy (multicast), or "
            + retarget_note(CTA_PAIR),
        )


def verify_smem_alignment(g: CopyGeometry) -> None:
    if not g.smem_indices or not isinstance(g.smem.owner, AllocSmemOp):
        return
    assert isinstance(smem_type := g.smem.type, MemRefType)
    swizzle = g.swizzle_bytes
    required = smem_alignment(swizzle)
    slot_offsets = [constant_int(i) for i in g.smem_indices]
    strides = smem_strides(smem_type.get_shape(), g.element_type, swizzle)[: len(g.smem_indices)]
    offset = None
    if all(o is not None for o in slot_offsets):
        offset = sum(o * s for o, s in zip(slot_offsets, strides, strict=True))  # type: ignore[operator]
        misaligned = offset % required
    else:
        misaligned = min(strides) % required
    if misaligned:
        slot_bytes = smem_bytes(g.box_shape, g.element_type, swizzle)
        where = (
            f"slots are {slot_bytes} bytes apart"
            if offset is None
            else f"slot {[o for o in slot_offsets]} starts at byte {offset}"
        )
        grown = g.box_shape[0] * (required // gcd(slot_bytes, required))
        # rule: TR10, TR11
        raise Error(
            f"TMA needs its SMEM address aligned to {required} bytes"
            + (f" (swizzle {swizzle} repeats every {required} bytes)" if swizzle != 16 else "")
            + f", but {where}",
            note=f"make each slot a multiple of {required} bytes"
            + (f" (e.g. a box {[grown, *g.box_shape[1:]]})" if grown <= 256 else "")
            + "; a misaligned TMA "
            + (
                "address faults with CUDA_ERROR_MISALIGNED_ADDRESS"
                if required == 128
                else "copy silently swizzles by absolute address bits"
            ),
        )
