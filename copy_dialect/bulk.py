"""The bulk rules of `copy.async_copy` and `copy.prefetch` (`impl bulk`): a non-tensor
`cp.async.bulk` moves one contiguous byte range, with no tensor map, so the box must be
one range of the GMEM array (BK1), of whole 16-byte chunks at a 16-byte offset (BK2),
unswizzled in SMEM, where an unswizzled box is dense (BK3), inside the array (BK4), and
neither a reduction (BK5) nor leader-tracked (A5).

`bulk_span` is the one decoder of that range: the verifier reads it here, the lowering
(passes/convert_copy_to_nvvm/copies.py) takes its byte strides from it, and
`AsyncCopyOp.resolved_implementation` asks `bulk_fits` when the IR leaves the
implementation open.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd, prod

from copy_dialect import layout
from copy_dialect.attributes import OOBMode
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import BoxGeometry, CopyGeometry
from copy_dialect.layout import UNSWIZZLED
from copy_dialect.memory import static_strides
from copy_dialect.verify_common import constant_int, known_multiple

BULK_ALIGN = 16
"""cp.async.bulk's size and both addresses are multiples of 16 bytes (PTX ISA)."""


@dataclass(frozen=True)
class BulkSpan:
    """The contiguous GMEM byte range a bulk copy moves."""

    byte_strides: tuple[int, ...]
    """Bytes between consecutive indices of each GMEM dim (the box origin's byte offset is
    the sum of index * stride)."""
    issued_bytes: int
    """Bytes each CTA issues: the box, or its share of a multicast load."""


def bulk_span(g: BoxGeometry) -> BulkSpan:
    """The range the box occupies in GMEM; raises the rule it breaks (BK1, BK2) when the
    box is not one range of whole 16-byte chunks at a 16-byte offset."""
    gmem_type, box = g.gmem_type, g.gmem_box
    shape = gmem_type.get_shape()
    strides = static_strides(gmem_type)
    outer = next((d for d, n in enumerate(box) if n > 1), len(box) - 1)
    # The dims the box spans whole (those after its outermost one longer than 1) need their
    # sizes; the outer dims may be dynamic (an array of M rows, M known at run time): the
    # range starts at the sum of index * stride, and lies inside the array by the copy's
    # promise (oob promise_in_bounds, BK4).
    # rule: BK1
    if strides is None or any(shape[d] < 0 for d in range(outer + 1, len(shape))):
        raise Error(
            f"Expected a GMEM ref of static strides, and static sizes in the dims the box "
            f"spans whole, for a bulk copy, got {gmem_type}",
            note="give those dims and the strides a size (only the outer dims may be "
            "dynamic), or use impl tma, whose tensor map is encoded at launch",
        )
    for d in range(outer + 1, len(box)):
        dense = strides[d - 1] == strides[d] * shape[d]
        # rule: BK1
        if box[d] != shape[d] or not dense or strides[-1] != 1:
            whole = [*box[: outer + 1], *shape[outer + 1 :]]
            raise Error(
                f"Expected the box to be one contiguous range of the GMEM array for a bulk "
                f"copy, got the box {list(box)} of {gmem_type}"
                + (
                    f", whose dim {d} copies {box[d]} of {shape[d]} elements"
                    if box[d] != shape[d]
                    else ", whose strides leave gaps between its rows"
                ),
                note=f"copy whole rows (a box {whole}) from a row-major ref for impl bulk, or "
                "use impl tma, whose tensor map addresses any box",
            )
    bits = g.element_bits
    byte_strides = tuple(s * bits // 8 for s in strides)
    issued = g.issued_box if isinstance(g, CopyGeometry) else g.box_shape
    issued_bytes = prod(issued) * bits // 8
    # rule: BK2
    if issued_bytes % BULK_ALIGN:
        raise Error(
            f"Expected a bulk copy of a multiple of 16 bytes, got {issued_bytes} bytes"
            + (" per CTA (its share of the multicast box)" if issued != g.box_shape else ""),
            note=f"copy a multiple of 16 bytes, a box {_whole_chunks(g, issued)} (pad the "
            "array to match), or use impl tma",
        )
    offset = 0
    for d, (index, stride) in enumerate(zip(g.gmem_indices, byte_strides, strict=True)):
        c = constant_int(index)
        if c is not None:
            offset += c * stride
            continue
        step = known_multiple(index) * stride
        # rule: BK2
        if step % BULK_ALIGN:
            need = BULK_ALIGN // gcd(stride, BULK_ALIGN)
            raise Error(
                f"Expected a bulk copy to start at a multiple of 16 bytes, but the dynamic "
                f"coordinate of dim {d} is only known to be a multiple of "
                f"{known_multiple(index)} ({step} bytes)",
                note=f"compute the coordinate as a multiple of {need} (arith.muli by a "
                "constant), or use impl tma",
            )
    # rule: BK2
    if offset % BULK_ALIGN:
        raise Error(
            f"Expected a bulk copy to start at a multiple of 16 bytes, got an offset of "
            f"{offset} bytes",
            note="start the box at a multiple of 16 bytes into the array"
            + (f" (a multiple of {8 * BULK_ALIGN // bits} elements)" if len(box) == 1 else "")
            + ", or use impl tma",
        )
    return BulkSpan(byte_strides, issued_bytes)


def _whole_chunks(g: BoxGeometry, issued: tuple[int, ...]) -> list[int]:
    """The box with its outermost dim larger than 1 grown until each CTA's part of it is
    whole 16-byte chunks."""
    dim = next((d for d, n in enumerate(issued) if n > 1), len(issued) - 1)
    bits = prod(issued[dim + 1 :]) * g.element_bits
    extent = issued[dim]
    while extent * bits % (8 * BULK_ALIGN):
        extent += 1
    box = list(g.box_shape)
    box[dim] = extent * (g.box_shape[dim] // issued[dim])
    return box


def verify_copy(g: CopyGeometry) -> None:
    """The rules of a bulk `copy.async_copy`, in the order they are reported."""
    # rule: BK5
    if g.reduction is not None:
        raise Error(
            f"Expected no reduction on a bulk copy, got reduce {g.reduction}: the dialect "
            "lowers reductions to TMA tensor reductions only",
            note="use impl tma for the reduction",
        )
    # rule: A5
    if g.leader_tracked:
        raise Error(
            "Only the TMA implementation supports leader_tracked copies",
            note="use impl tma: the .cta_group::2 forms are tensor copies",
        )
    # rule: BK3
    if g.swizzle_bytes != UNSWIZZLED:
        raise Error(
            f"Expected an unswizzled SMEM buffer for a bulk copy, got swizzle "
            f"{g.swizzle_bytes}: cp.async.bulk writes bytes in order",
            note="use a #copy.smem buffer without swizzle, or use impl tma, whose tensor map "
            "swizzles",
        )
    # rule: BK4
    if g.oob != OOBMode.PROMISE_IN_BOUNDS:
        raise Error(
            f"Expected oob promise_in_bounds on a bulk copy, got oob {g.oob}: cp.async.bulk "
            "has no out-of-bounds handling",
            note="add oob promise_in_bounds (the box lies inside the array), or use impl tma, "
            "which zero-fills loads and clips stores",
        )
    bulk_span(g)


def bulk_fits(g: CopyGeometry) -> bool:
    """Whether a bulk copy can move this copy exactly as TMA would: the lowering's choice
    for a plain, unswizzled, in-bounds copy of one contiguous range (Mosaic GPU's)."""
    if g.collective_dims or g.leader_tracked or g.reduction is not None:
        return False
    if layout.align16_of(g.swizzle_bytes):  # its gaps are a tensor map's (PK7)
        return False
    # The lowering's choice is asked before the op's own rules (K1, B6) have passed.
    rank = g.gmem_type.get_num_dims()
    if len(g.gmem_indices) != rank or not 0 < len(g.box_shape) <= rank:
        return False
    try:
        verify_copy(g)
    except Error:
        return False
    return True
