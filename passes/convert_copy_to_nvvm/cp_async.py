"""The cp.async copies: a `copy.async_copy` with `impl cp_async`, issued by every thread of
the block (or role) together: 16-byte chunks (8 or 4 when a row is not a multiple of 16)
with `cp.async.{cg,ca}.shared.global`; with `oob zeros` each chunk's source size is clipped
to the array, and cp.async zero-fills the rest. A dynamic-shape ref's sizes are kernel
parameters (`dynamic_shapes`), and where its row pitch is one, the chunk size is picked at
run time from those the copy may move; a view no chunk can read is copied unit by unit
(`unit_loop`). On a barrier, each thread then executes
`cp.async.mbarrier.arrive.noinc.shared.b64 [bar]`: one arrival per thread once its chunks
(and its earlier cp.async copies) have landed.

Also the element addressing and bounds the im2col gather shares (`element_address`,
`inside_sizes`, `elements_to_bytes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects import llvm, scf
from xdsl.dialects.builtin import IntegerType, i32, i64
from xdsl.ir import Block, Operation, Region, SSAValue

from copy_dialect import ops as copy
from passes import nvvm
from passes.convert_copy_to_nvvm.barriers import barrier_pointer
from passes.convert_copy_to_nvvm.dynamic_shapes import cp_async_chunks, ref_layout, size_value
from passes.convert_copy_to_nvvm.emit import Emit
from passes.convert_copy_to_nvvm.kernel import Group, Kernel
from passes.convert_copy_to_nvvm.smem import slot_offset
from passes.llvm_types import lowered


def elements_to_bytes(e: Emit, count: SSAValue, bits: int) -> SSAValue:
    """`count` elements of `bits` bits in bytes; sub-byte elements come in whole bytes
    (rules B8, C12), so the division is exact."""
    if bits >= 8:
        return e.mul(count, bits // 8)
    return e.binary(llvm.SDivOp, e.mul(count, bits), 8)


def cp_async_copy(op: copy.AsyncCopyOp, g: copy.CopyGeometry, kernel: Kernel) -> list[Operation]:
    """A cp.async load (`op`, of geometry `g`): a loop of the block's threads over the box's
    chunks. Where the GMEM row pitch is dynamic (a dynamic-shape ref: its strides come from
    the kernel's size parameters), the largest chunk that divides the array's address and
    its strides is picked at run time, one loop per chunk size the copy may move
    (`cp_async_chunks`)."""
    e = Emit()
    sizes, strides = ref_layout(g.gmem, op, e, kernel.sizes)
    # Each chunk divides the box row, every static GMEM stride and a constant innermost
    # coordinate (a 300-element f16 row is 600 bytes: 8-byte chunks); the verifier
    # guarantees there is one (H2) and that `cache cg` gets 16 bytes (H6). A dynamic
    # innermost coordinate not known to be a multiple of the largest chunk (`%bx * 64 + 2`)
    # takes part in the run-time pick (`copy.inner_aligned`).
    chunks = cp_async_chunks(op, g)
    assert chunks
    (gmem,) = lowered([g.gmem], e.ops)
    (smem,) = lowered([g.smem], e.ops)
    smem = e.byte_offset(smem, slot_offset(e, g))
    origin = list(lowered(g.gmem_indices, e.ops))
    box = BoxCopy(op, g, gmem, smem, origin, sizes, strides, kernel.group(op))
    loops = [cp_async_loop(box, chunk) for chunk in chunks]
    inner = copy.inner_aligned(g, chunks)
    if unaligned_view(g, chunks) or (not inner and g.element_bits < 8 * chunks[-1]):
        # Nothing proves that even the smallest chunk divides the view's address and pitch,
        # or the innermost coordinate's bytes: where none does, the threads copy the box
        # unit by unit.
        tried, chosen = chunks, unit_loop(box)
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


@dataclass(frozen=True)
class BoxCopy:
    """A cp.async copy's box as the issuing group's loops walk it (`cp_async_loop`,
    `unit_loop`): the op, its geometry, the GMEM array's address, sizes and element strides,
    the SMEM slot's address, the box's GMEM origin and the issuing group."""

    op: copy.AsyncCopyOp
    g: copy.CopyGeometry
    gmem: SSAValue
    smem: SSAValue
    origin: list[SSAValue]
    sizes: list[int | SSAValue]
    strides: list[int | SSAValue]
    group: Group

    def item(
        self, b: Emit, item: SSAValue, per_row: int, elems: int
    ) -> tuple[list[SSAValue], SSAValue]:
        """Item `item` of the box, walked row-major in `per_row` items of `elems` elements a
        row (a cp.async chunk, or a unit): its GMEM position (the origin plus its place in
        the box, the outer coordinates from the quotient) and the address of its first
        element."""
        in_row = b.binary(llvm.URemOp, item, per_row)
        rest = b.binary(llvm.UDivOp, item, per_row)
        coords: list[SSAValue] = []
        for size in reversed(self.g.gmem_box[:-1]):
            coords.insert(0, b.binary(llvm.URemOp, rest, size) if size > 1 else b.const(0))
            rest = b.binary(llvm.UDivOp, rest, size) if size > 1 else rest
        coords.append(b.mul(in_row, elems))
        position = [b.add(o, x) for o, x in zip(self.origin, coords, strict=True)]
        address = element_address(b, self.gmem, position, self.strides, self.g.element_bits)
        return position, address


def element_address(
    b: Emit,
    base: SSAValue,
    position: Sequence[SSAValue],
    strides: Sequence[int | SSAValue],
    bits: int,
) -> SSAValue:
    """The address of the element at `position` of the array at `base` of element `strides`
    and `bits`-bit elements."""
    offset: SSAValue | None = None
    for p, stride in zip(position, strides, strict=True):
        term = b.mul(p, stride)
        offset = term if offset is None else b.add(offset, term)
    assert offset is not None
    return b.byte_offset(base, elements_to_bytes(b, offset, bits))


def inside_sizes(
    b: Emit,
    position: Sequence[SSAValue],
    sizes: Sequence[int | SSAValue],
    inside: SSAValue | None = None,
) -> SSAValue | None:
    """`inside` (None: true) and-ed with each coordinate of `position` being below its size
    (unsigned: negative is outside too)."""
    for p, size in zip(position, sizes, strict=True):
        below = b.icmp("ult", p, size)
        inside = below if inside is None else b(llvm.AndOp(inside, below)).results[0]
    return inside


def unit_loop(box: BoxCopy) -> list[Operation]:
    """The copy of a view no cp.async chunk can read (`unaligned_view`): the group's threads
    load the box's units (an element, or a byte of sub-byte elements) and store them to
    SMEM, unit u by thread u mod the group's threads; with `oob zeros` a unit outside the
    view's sizes is zero, and read from nowhere. On a barrier, a fence orders each thread's
    stores before its arrival (`cp.async.mbarrier.arrive`, which follows)."""
    g, smem, sizes, group = box.g, box.smem, box.sizes, box.group
    bits = g.element_bits
    unit = max(1, bits // 8)
    unit_type = IntegerType(8 * unit)
    units_per_row = g.row_bytes // unit
    elems_per_unit = unit * 8 // bits
    gmem_box = g.gmem_box

    body = Block(arg_types=[i64])
    b = Emit()
    u = body.args[0]
    position, src = box.item(b, u, units_per_row, elems_per_unit)
    dst = b.byte_offset(smem, b.mul(u, unit))
    read = Emit()
    value = read(llvm.LoadOp(src, unit_type)).results[0]
    if g.oob == copy.OOBMode.ZEROS:
        # Inside where every outer coordinate is below its size (unsigned: negative is
        # outside too) and the unit's elements are all before the row's end.
        left = b.binary(llvm.SubOp, size_value(sizes, -1, b), position[-1])
        inside = inside_sizes(b, position[:-1], sizes[:-1], b.icmp("sge", left, elems_per_unit))
        assert inside is not None
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
    total = e.const(prod(gmem_box[:-1]) * units_per_row)
    e(scf.ForOp(group.tid, total, group.nthreads, [], Region(body)))
    if g.barrier is not None:
        e(llvm.InlineAsmOp("fence.acq_rel.cta;", "~{memory}", [], has_side_effects=True))
    return e.ops


def cp_async_loop(box: BoxCopy, chunk: int) -> list[Operation]:
    """The loop of the group's threads over the box's chunks of `chunk` bytes: chunk c is
    copied by thread c mod the group's threads; with `oob zeros` each chunk's source size
    is clipped to the array's sizes (cp.async zero-fills the rest). In a role (a static,
    often small group: a producer warp issues a whole tile), each iteration issues
    `unroll_factor` chunks, whose address arithmetic is independent."""
    op, g, gmem, smem, sizes, group = box.op, box.g, box.gmem, box.smem, box.sizes, box.group
    bits, gmem_box = g.element_bits, g.gmem_box
    # An explicit cache mode is kept (`cache ca` on 16-byte chunks was emitted as .cg, issue
    # S); without one, 16-byte chunks bypass L1 (.cg), smaller ones cannot (.ca).
    if op.cache is not None:
        modifier = op.cache.data.value
    else:
        modifier = "cg" if chunk == 16 else "ca"
    chunks_per_row = g.row_bytes // chunk
    elems_per_chunk = chunk * 8 // bits
    total = prod(gmem_box[:-1]) * chunks_per_row
    zero_fill = g.oob == copy.OOBMode.ZEROS

    def copy_chunk(b: Emit, c: SSAValue) -> None:
        position, src = box.item(b, c, chunks_per_row, elems_per_chunk)
        dst = b.byte_offset(smem, b.mul(c, chunk))
        src_size = None
        if zero_fill:
            valid = inside_sizes(b, position[:-1], sizes[:-1])
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
