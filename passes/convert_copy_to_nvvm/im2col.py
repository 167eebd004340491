"""The im2col loads (`copy.im2col_load`), in both forms:

- by TMA (`im2col_tma`): a TMA load through an im2col tensor map (its corners, traversal
  strides, pixels and channels in the map, `Im2colMapParam`): it arrives on its barrier
  expecting the SMEM box's bytes (unless `arrive = false`) and issues
  `cp.async.bulk.tensor.Nd.shared::cluster.global.im2col.mbarrier::complete_tx::bytes` with
  the coordinates and the im2col offsets, innermost first (`.L2::cache_hint` with `l2`);
- with `impl cp_async` (copy-legalize's pre-Hopper form, `im2col_cp_async`): the same
  traversal gathered by the issuing threads: each takes (pixel row, chunk) items, computes
  the row's pixel as the TMA unit does (`im2col_pixel`) and copies the chunk of its
  channels with cp.async, zero-filled outside the array, then arrives once on the barrier.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import llvm, scf
from xdsl.dialects.builtin import i32, i64
from xdsl.ir import Block, Operation, Region, SSAValue

from copy_dialect import layout
from copy_dialect import ops as copy
from facts.abi import Im2colMapParam
from passes import nvvm
from passes.convert_copy_to_nvvm.barriers import barrier_pointer
from passes.convert_copy_to_nvvm.cp_async import element_address, elements_to_bytes, inside_sizes
from passes.convert_copy_to_nvvm.emit import Emit
from passes.convert_copy_to_nvvm.kernel import Kernel
from passes.convert_copy_to_nvvm.smem import slot_offset
from passes.convert_copy_to_nvvm.tma import l2_cache_hint, load_barrier, own_window, tma_coordinates
from passes.llvm_types import lowered, static_memref


def im2col_tma(op: copy.Im2colLoadOp, g: copy.Im2colGeometry, kernel: Kernel) -> list[Operation]:
    """An im2col load (`op`, of geometry `g`) by TMA, issued by the elected thread through
    its im2col tensor map (a kernel parameter): it arrives on the barrier expecting the SMEM
    box's bytes (unless `arrive = false`) and issues the copy with the coordinates and the
    im2col offsets, innermost first."""
    dtype = g.tensor_map_type
    assert dtype is not None  # rule C11
    key = Im2colMapParam(
        g.gmem_argument,
        g.box_shape,
        int(g.swizzle_bytes),
        g.tensor_map_oob,
        dtype,
        False,
        g.lower,
        g.upper,
        g.element_strides,
        l2_promotion=op.l2_promotion_bytes,
        swizzle_atom=layout.atom_of(g.swizzle_bytes),
        swizzle_flip=layout.flip_of(g.swizzle_bytes),
    )
    descriptor = kernel.tensor_map(key, written=False)
    body = Emit()
    (smem,) = lowered([g.smem], body.ops)
    smem = body.byte_offset(smem, slot_offset(body, g))
    indices = lowered(g.gmem_indices, body.ops)
    if kernel.guards is not None:
        kernel.guards.coordinate_range(body, kernel.fn, op, g.gmem_indices, indices)
        kernel.guards.im2col_channel(body, kernel.fn, g, indices)
    coordinates = tma_coordinates(body, indices)
    offsets = list(lowered(g.offsets, body.ops))
    if kernel.guards is not None:
        kernel.guards.im2col_offsets(body, kernel.fn, g, offsets)
    offsets.reverse()
    bar = load_barrier(body, op, kernel, g.credited_bytes if g.arrives else None)
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
    return e.ops


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


def im2col_cp_async(
    op: copy.Im2colLoadOp, g: copy.Im2colGeometry, kernel: Kernel
) -> list[Operation]:
    """An im2col load (`op`, of geometry `g`) gathered with cp.async by the issuing group's
    threads: item c of the box's `pixels x chunks per row` is pixel row c / chunks, chunk
    c % chunks of its channels; the pixel is read at its filter base plus the offsets
    (unsigned), zero-filled where the pixel or the channels lie outside the array (src-size
    0, or the channels left in the row), as the TMA unit zero-fills them. Each thread then
    arrives once on the barrier (`cp.async.mbarrier.arrive.noinc`) when its chunks have
    landed."""
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
    valid = inside_sizes(b, position, shape)
    assert valid is not None
    left = b.binary(llvm.SubOp, b.const(shape[-1]), channel)
    clipped = b(llvm.SelectOp(b.icmp("slt", left, elems), left, b.const(elems))).results[0]
    clipped = b(llvm.SelectOp(valid, clipped, b.const(0))).results[0]
    src_size = b.resize(elements_to_bytes(b, clipped, bits), i32)
    src = element_address(b, gmem, position, strides, bits)
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
