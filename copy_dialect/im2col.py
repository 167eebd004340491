"""`copy.im2col_load`: a TMA load in im2col mode, the A operand of an implicit-GEMM
convolution.

The GMEM ref is a batch of images with channels innermost (NWC, NHWC or NDHWC: rank 3 to 5);
the load gathers `pixels` pixels of `channels` channels each into an SMEM box
`[pixels, channels]`. The tensor map (`cuTensorMapEncodeIm2col`) holds the bounding box of the
filter's base in the spatial dims (its lower and upper corners, `lower` and `upper`) and the
traversal strides (`strides`); the instruction gives the coordinates of the first pixel's
filter base (n, spatial..., c) and the im2col offsets (the filter tap, one per spatial dim).
The pixels are the filter bases of the bounding box from the coordinates on, the innermost
spatial dim fastest, each step `strides` apart, wrapping to the next row (and image) at the
box's end; each pixel is read at its base plus the offsets, zero-filled outside the array.

With `impl cp_async` (what copy-legalize makes of it before sm_90) the same pixels are
gathered by the issuing threads with cp.async into a plain SMEM box, zero-filled where the
TMA unit zero-fills, each thread arriving once on the barrier (IC12, H2, L3, MB12, MB13).

The rules are those of `cuTensorMapEncodeIm2col` and of the PTX `.im2col` mode (IC1..IC11,
IC13: the channel coordinate on a 16-byte boundary),
and the tiled maps' rules where the two share them (`copy_dialect.tma`): the element type
(C11), 16-byte rows (C4), the GMEM layout (B10, C1, C2), the kernel argument (B11), the
swizzle span (C5), the array's extents (C8) and the SMEM slot's alignment (TR10, TR11).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects.builtin import (
    I16,
    I64,
    BoolAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect

from copy_dialect import cp_async, tma
from copy_dialect.attributes import (
    BarrierType,
    CachePolicy,
    Implementation,
    ImplementationAttr,
    L2Policy,
    L2PolicyAttr,
    OOBMode,
    enum_attr,
)
from copy_dialect.blackwell_maps import verify_blackwell_map
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import CopyGeometry, cp_async_chunk_bytes
from copy_dialect.gmem import check_gmem_layout
from copy_dialect.l2_policy import (
    policy_properties,
    policy_value,
    promotion_bytes,
    verify_cache_policy,
    verify_l2_promotion,
)
from copy_dialect.memory import GMEM, SMEM, memory_space, swizzle_of
from copy_dialect.portability import legalize_hint
from copy_dialect.verification import copy_op_definition, per_run
from copy_dialect.verify_common import (
    check_barrier_index,
    check_contiguous_smem,
    check_smem_indices,
    constant_int,
    enclosing_target,
    feature_error,
)
from facts import hardware
from facts.target import TMA

IM2COL_RANKS = (3, 4, 5)
"""The tensor ranks of an im2col map: NWC, NHWC, NDHWC (`cuTensorMapEncodeIm2col`)."""

CORNER_BITS = {3: 16, 4: 8, 5: 5}
"""Bits of a signed bounding-box corner, by tensor rank (PTX ISA, im2col mode): [-2**15,
2**15 - 1] for 3D, [-128, 127] for 4D, [-16, 15] for 5D."""

OFFSET_BITS = {3: 16, 4: 8, 5: 5}
"""Bits of an unsigned im2col offset, by tensor rank (PTX ISA): [0, 2**16 - 1] for 3D,
[0, 255] for 4D, [0, 31] for 5D."""

MAX_CHANNELS = 256
"""channelsPerPixel: at most 256 elements along C."""
MAX_PIXELS = 1024
"""pixelsPerColumn: at most 1024 pixels along N, D, H, W."""
MAX_TRAVERSAL_STRIDE = 8
"""elementStrides: 1 to 8."""


def corner_range(rank: int) -> tuple[int, int]:
    bits = CORNER_BITS[rank]
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def offset_range(rank: int) -> tuple[int, int]:
    return 0, (1 << OFFSET_BITS[rank]) - 1


@dataclass(frozen=True, kw_only=True)
class Im2colGeometry(CopyGeometry):
    """What a `copy.im2col_load` moves: a `CopyGeometry` whose box is the SMEM box
    `[pixels, channels]`, plus the im2col parameters of its tensor map and instruction."""

    offsets: tuple[SSAValue, ...]
    """The im2col offsets, one i16 per spatial dim, outermost first."""
    lower: tuple[int, ...]
    """The bounding box's lower corner (pixelBoxLowerCorner), outermost spatial dim first."""
    upper: tuple[int, ...]
    """The bounding box's upper corner (pixelBoxUpperCorner), relative to each dim's extent."""
    traversal_strides: tuple[int, ...]
    """The traversal stride per spatial dim (elementStrides of D, H, W), outermost first."""

    @property
    def pixels(self) -> int:
        return self.box_shape[0]

    @property
    def channels(self) -> int:
        return self.box_shape[-1]

    @property
    def element_strides(self) -> tuple[int, ...]:
        """elementStrides of the map, outermost dim first: 1 for N and C (TMA ignores C's)."""
        return (1, *self.traversal_strides, 1)


@copy_op_definition
class Im2colLoadOp(IRDLOperation):
    """
    Loads `pixels` x `channels` of a channels-innermost GMEM tensor (NWC, NHWC, NDHWC) into
    the SMEM box `[pixels, channels]` by TMA in im2col mode, and signals `barrier` when its
    bytes have landed (unless `arrive = false`, arriving on it expecting them). The
    coordinates give the first pixel's filter base (n, spatial..., c), `offsets` the filter
    tap (i16, one per spatial dim); `lower` and `upper` are the bounding box's corners and
    `strides` the traversal strides (default 1), one per spatial dim. Out-of-bounds pixels
    read zeros (the convolution's padding). `l2 evict_normal|evict_first|evict_last|
    evict_unchanged` (with `fraction` and `secondary`) is the L2 cache policy and
    `l2_promotion` the im2col map's L2 promotion, as on copy.async_copy (an input read once
    per filter tap: evict_last).

    ```mlir
    copy.im2col_load %img[%n, %h, %w, %c] offsets [%r, %s] to %pixels[%slot]
        barrier %bars[%slot] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>}
        : memref<2x9x9x64xf16> to memref<2x128x64xf16, #copy.smem>, !copy.barrier<2>
    ```
    """

    name = "copy.im2col_load"

    src = operand_def(MemRefType)
    coordinates = var_operand_def(IndexType)
    offsets = var_operand_def(I16)
    dst = operand_def(MemRefType)
    dst_indices = var_operand_def(IndexType)
    barrier = operand_def(BarrierType)
    barrier_index = opt_operand_def(IndexType)

    lower = prop_def(DenseArrayBase.constr(i64))
    upper = prop_def(DenseArrayBase.constr(i64))
    strides = opt_prop_def(DenseArrayBase.constr(i64))
    arrive = opt_prop_def(BoolAttr)
    implementation = opt_prop_def(ImplementationAttr)
    """`tma` (the default: the TMA unit's im2col mode) or `cp_async` (the same pixels,
    gathered by the issuing threads with cp.async: copy-legalize's pre-Hopper form)."""
    l2 = opt_prop_def(L2PolicyAttr)
    l2_fraction = opt_prop_def(FloatAttr[Float32Type])
    l2_secondary = opt_prop_def(L2PolicyAttr)
    l2_promotion = opt_prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$src `[` $coordinates `]` `offsets` `[` $offsets `]` `to` $dst "
        "(`[` $dst_indices^ `]`)? `barrier` $barrier `[` $barrier_index `]` "
        "(`impl` $implementation^)? (`l2` $l2^)? "
        "(`fraction` $l2_fraction^)? (`secondary` $l2_secondary^)? "
        "attr-dict `:` type($src) `to` type($dst) `,` type($barrier)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        coordinates: Sequence[SSAValue | Operation],
        offsets: Sequence[SSAValue | Operation],
        barrier: SSAValue | Operation,
        lower: Sequence[int],
        upper: Sequence[int],
        dst_indices: Sequence[SSAValue | Operation] = (),
        barrier_index: SSAValue | Operation | None = None,
        strides: Sequence[int] | None = None,
        arrive: bool | None = None,
        implementation: Implementation | str | None = None,
        l2: L2Policy | str | CachePolicy | None = None,
        l2_promotion: int | None = None,
    ):
        super().__init__(
            operands=[src, coordinates, offsets, dst, dst_indices, barrier, barrier_index],
            properties={
                "lower": DenseArrayBase.from_list(i64, lower),
                "upper": DenseArrayBase.from_list(i64, upper),
                "strides": None if strides is None else DenseArrayBase.from_list(i64, strides),
                "arrive": None if arrive is None else BoolAttr.from_bool(arrive),
                "implementation": enum_attr(ImplementationAttr, Implementation, implementation),
                **policy_properties(l2),
                "l2_promotion": None if l2_promotion is None else IntegerAttr(l2_promotion, i64),
            },
        )

    # -- derived facts, used by the verifier, the protocol analysis and the lowering -------

    def geometry(self) -> Im2colGeometry:
        """The load's box, SMEM slot, barrier and im2col parameters, decoded once."""
        return per_run("im2col geometry", self, self._decode_geometry)

    def _decode_geometry(self) -> Im2colGeometry:
        assert isinstance(gmem_type := self.src.type, MemRefType)
        assert isinstance(smem_type := self.dst.type, MemRefType)
        spatial = max(gmem_type.get_num_dims() - 2, 0)
        strides = (
            (1,) * spatial
            if self.strides is None
            else tuple(int(s) for s in self.strides.get_values())
        )
        return Im2colGeometry(
            gmem=self.src,
            gmem_type=gmem_type,
            gmem_indices=tuple(self.coordinates),
            box_shape=smem_type.get_shape()[len(self.dst_indices) :],
            swizzle_bytes=swizzle_of(smem_type),
            oob=OOBMode.ZEROS,
            reduction=None,
            is_load=True,
            smem=self.dst,
            smem_type=smem_type,
            smem_indices=tuple(self.dst_indices),
            barrier=self.barrier,
            barrier_index=self.barrier_index,
            predicate=None,
            collective_dims=(),
            leader_tracked=False,
            arrives=self.arrives,
            op=self,
            offsets=tuple(self.offsets),
            lower=tuple(int(v) for v in self.lower.get_values()),
            upper=tuple(int(v) for v in self.upper.get_values()),
            traversal_strides=strides,
        )

    def resolved_implementation(self) -> Implementation:
        """TMA unless the op names `impl cp_async` (the protocol analysis asks every copy)."""
        return Implementation.TMA if self.implementation is None else self.implementation.data

    def l2_policy_value(self) -> int | CachePolicy | None:
        """The L2 cache-policy operand of the load: a named policy's encoding, the
        CachePolicy the kernel makes with createpolicy, None for none."""
        return policy_value(self.l2, self.l2_fraction, self.l2_secondary)

    @property
    def l2_promotion_bytes(self) -> int:
        """The L2 promotion of the load's im2col map in bytes (0: none)."""
        return promotion_bytes(self.l2_promotion)

    @property
    def arrives(self) -> bool:
        """Whether the load itself arrives on its barrier expecting its bytes."""
        return self.arrive is None or self.arrive.value.data

    @property
    def credited_bytes(self) -> int:
        """Bytes the load credits its barrier with: the whole SMEM box."""
        return self.geometry().credited_bytes

    # -- verifier ------------------------------------------------------------------------

    def verify_(self) -> None:
        g = self.geometry()
        self._verify_spaces(g)
        impl = self.resolved_implementation()
        target = enclosing_target(self)
        # rule: A1
        if impl == Implementation.TMA and target is not None and not TMA.has(target):
            raise feature_error(
                self,
                TMA,
                target,
                uses="with impl tma" if self.implementation is not None else "",
                note="target sm_90 or newer, or gather the pixels with cp.async: impl cp_async "
                "(each issuing thread arrives once on the barrier: count them in its "
                f"arrivals){legalize_hint(target)}",
            )
        if impl != Implementation.TMA:
            self._verify_cp_async(g, impl)
        check_barrier_index(self.barrier, self.barrier_index)
        check_contiguous_smem(g.smem_type)
        check_smem_indices(g.smem_type, g.smem_indices)
        self._verify_operands(g)
        self._verify_box(g)
        self._verify_corners(g)
        self._verify_strides(g)
        self._verify_constant_offsets(g)
        tma.check_tma_dtype(g.element_type)
        verify_blackwell_map(self, g)  # a 128B_ATOM swizzle's target (SW2)
        tma.check_tma_row(g)
        check_gmem_layout(g, g.gmem_type, Implementation.TMA, "")
        if impl == Implementation.TMA:
            tma.check_coordinate_range(g.gmem_indices, "TMA im2col load")
            self._verify_channel_coordinate(g)
        tma.check_kernel_argument(self, g.gmem)
        tma.verify_copy_box(g, None)
        tma.verify_smem_alignment(g)
        verify_cache_policy(self.l2, self.l2_fraction, self.l2_secondary)
        verify_l2_promotion(self.l2_promotion, impl)

    def _verify_cp_async(self, g: Im2colGeometry, impl: Implementation) -> None:
        """`impl cp_async`: the issuing threads gather the pixels in 16-, 8- or 4-byte chunks
        into a plain SMEM box and arrive once each on the barrier when theirs have landed."""
        # rule: IC12
        if impl != Implementation.CP_ASYNC:
            raise Error(
                f"Expected an im2col load by TMA or cp.async, got impl {impl}",
                note="use impl tma (sm_90 or newer), or impl cp_async (the threads gather the "
                "pixels): a bulk copy has no im2col mode",
            )
        # rule: H2
        if g.swizzle_bytes != 16:
            raise Error(
                "Swizzle is not supported for CP_ASYNC copies",
                note="drop the swizzle (cp.async writes a plain #copy.smem buffer), or use "
                "impl tma on sm_90 or newer",
            )
        # rule: L3
        if self.l2 is not None:
            raise Error(
                "Expected no L2 cache policy on a cp.async copy: the cp.async lowering has no "
                "cache-hint operand",
                note="drop the L2 policy (l2), or use impl tma on sm_90 or newer",
            )
        # rule: H2
        if cp_async_chunk_bytes(g) is None:
            raise Error(
                "CP_ASYNC requires at least 4 bytes per transfer",
                note="make the channels per pixel, the GMEM pixel stride and the channel "
                "coordinate multiples of 4 bytes",
            )
        cp_async.verify_tracked(self, g)

    def _verify_spaces(self, g: Im2colGeometry) -> None:
        src, dst = memory_space(g.gmem_type), memory_space(g.smem_type)
        # rule: B2
        if src != GMEM or dst != SMEM:
            raise Error(
                f"copy.im2col_load copies GMEM to SMEM, got a copy from {src} to {dst}",
                note="load from a GMEM ref (no memory space) into an SMEM ref (#copy.smem)",
            )
        # rule: B1
        if g.gmem_type.element_type != g.smem_type.element_type:
            raise Error(
                f"Expected same element type, got {g.gmem_type.element_type} and "
                f"{g.smem_type.element_type}",
                note="copies do not convert: give both refs the same element type, "
                f"{g.gmem_type.element_type} or {g.smem_type.element_type}",
            )

    def _verify_operands(self, g: Im2colGeometry) -> None:
        rank = g.gmem_type.get_num_dims()
        # rule: IC1
        if rank not in IM2COL_RANKS:
            raise Error(
                f"Expected an im2col tensor of rank 3, 4 or 5 (NWC, NHWC, NDHWC), got rank "
                f"{rank} ({g.gmem_type})",
                note="give the GMEM ref one batch dim, 1 to 3 spatial dims and the channels "
                "innermost; merge other dims into the batch"
                if rank > 5
                else "add the batch and spatial dims (size 1 where there are none)",
            )
        # rule: K1
        if len(g.gmem_indices) != rank:
            raise Error(
                f"expected {rank} coordinates, but got {len(g.gmem_indices)}",
                note=f"index the GMEM ref with the first pixel's filter base: n, "
                f"{rank - 2} spatial coordinates and c ({rank} in all)",
            )
        # rule: IC2
        if len(g.offsets) != rank - 2:
            raise Error(
                f"Expected {rank - 2} im2col offsets (one per spatial dim of the rank-{rank} "
                f"tensor), got {len(g.offsets)}",
                note=f"give one i16 offset per spatial dim ({rank - 2}): the filter tap's "
                "position times the dilation",
            )

    def _verify_box(self, g: Im2colGeometry) -> None:
        box = g.box_shape
        # rule: IC3
        if len(box) != 2:
            t = g.smem_type
            flat = (
                MemRefType(t.element_type, [prod(box[:-1]), box[-1]], t.layout, t.memory_space)
                if len(box) > 2
                else None
            )
            raise Error(
                f"Expected the SMEM box of an im2col load to be [pixels, channels], got "
                f"{list(box)} (the SMEM ref's dims after its {len(g.smem_indices)} slot "
                "indices)",
                note="make each slot a 2-D box of pixels x channels"
                + ("" if flat is None else f", e.g. {flat}")
                + ", or index the SMEM ref's leading slot dims",
            )
        pixels, channels = box
        # rule: IC7
        if not 1 <= channels <= MAX_CHANNELS:
            raise Error(
                f"Expected 1 to {MAX_CHANNELS} channels per pixel, got {channels}",
                note=f"load at most {MAX_CHANNELS} channels per im2col load (the box's inner "
                "dim) and loop over the channel blocks",
            )
        # rule: IC8
        if not 1 <= pixels <= MAX_PIXELS:
            raise Error(
                f"Expected 1 to {MAX_PIXELS} pixels per column, got {pixels}",
                note=f"load at most {MAX_PIXELS} pixels per im2col load (the box's outer dim) "
                "and issue one load per block of pixels",
            )

    def _verify_corners(self, g: Im2colGeometry) -> None:
        rank = g.gmem_type.get_num_dims()
        spatial = rank - 2
        for name, corner in (("lower", g.lower), ("upper", g.upper)):
            # rule: IC4
            if len(corner) != spatial:
                raise Error(
                    f"Expected {spatial} {name} corner values (one per spatial dim of the "
                    f"rank-{rank} tensor), got {len(corner)}",
                    note=f"give {name} = array<i64: ...> one value per spatial dim ({spatial})",
                )
        low, high = corner_range(rank)
        for name, corner in (("lower", g.lower), ("upper", g.upper)):
            for i, v in enumerate(corner):
                # rule: IC5
                if not low <= v <= high:
                    raise Error(
                        f"Expected the {name} corner of a rank-{rank} im2col map in "
                        f"[{low}, {high}], got {v} at spatial dim {i}",
                        note=f"keep the corners of a rank-{rank} map in [{low}, {high}] "
                        f"({CORNER_BITS[rank]} bits): use less padding or a smaller filter, or a "
                        "tensor of lower rank (merge the batch with an outer spatial dim)",
                    )
        shape = g.gmem_type.get_shape()[1:-1]
        for i, (size, lo, up) in enumerate(zip(shape, g.lower, g.upper, strict=True)):
            # rule: IC6
            if size >= 0 and size + up - lo <= 0:
                raise Error(
                    f"Expected a bounding box of non-zero area, got an empty one along spatial "
                    f"dim {i}: [{lo}, {size} + {up}) for an extent of {size}",
                    note="the box holds the filter bases: lower = -padding, upper = padding - "
                    "(filter - 1) * dilation, which a filter larger than the padded input "
                    f"makes empty; raise upper above {lo - size}, e.g. to {lo - size + 1}",
                )

    def _verify_strides(self, g: Im2colGeometry) -> None:
        rank = g.gmem_type.get_num_dims()
        strides = g.traversal_strides
        # rule: IC9
        if len(strides) != rank - 2:
            raise Error(
                f"Expected {rank - 2} traversal strides (one per spatial dim of the rank-"
                f"{rank} tensor), got {len(strides)}",
                note=f"give strides = array<i64: ...> one value per spatial dim ({rank - 2}), "
                "or drop it for strides 1",
            )
        for i, s in enumerate(strides):
            # rule: IC10
            if not 1 <= s <= MAX_TRAVERSAL_STRIDE:
                raise Error(
                    f"Expected traversal strides in [1, {MAX_TRAVERSAL_STRIDE}], got {s} at "
                    f"spatial dim {i}",
                    note=f"a tensor map strides 1 to {MAX_TRAVERSAL_STRIDE} elements: for a "
                    "larger convolution stride, subsample the input first",
                )

    def _verify_channel_coordinate(self, g: Im2colGeometry) -> None:
        """A constant channel coordinate (the innermost, C) starts the box on a 16-byte
        boundary, as TR12 holds a tiled copy's innermost coordinate (IC13); the debug
        guards check a dynamic one at run time."""
        channel = constant_int(g.gmem_indices[-1]) if g.gmem_indices else None
        if channel is None:
            return
        multiple = hardware.COORDINATE_BYTES_MULTIPLE
        size = g.element_bits // 8
        # rule: IC13
        if channel * size % multiple:
            step = max(1, multiple // size)
            raise Error(
                f"Expected the channel coordinate of a TMA im2col load to be a multiple of "
                f"{multiple} bytes, got {channel} ({channel * size} bytes of "
                f"{g.element_type})",
                note=f"start the channel block at a multiple of {step} elements (e.g. "
                f"{channel - channel % step}); a channel block that starts elsewhere is an "
                "illegal instruction, as a tiled copy's innermost coordinate (TR12)",
            )

    def _verify_constant_offsets(self, g: Im2colGeometry) -> None:
        rank = g.gmem_type.get_num_dims()
        low, high = offset_range(rank)
        for i, offset in enumerate(g.offsets):
            value = constant_int(offset)
            if value is None:
                continue
            unsigned = value & 0xFFFF
            # rule: IC11
            if unsigned > high:
                raise Error(
                    f"Expected the im2col offsets of a rank-{rank} map in [{low}, {high}], got "
                    f"{value} (as unsigned 16 bits: {unsigned}) at spatial dim {i}",
                    note=f"keep each offset in [{low}, {high}] (unsigned, {OFFSET_BITS[rank]} "
                    f"bits for rank {rank}): the filter tap times the dilation",
                )
