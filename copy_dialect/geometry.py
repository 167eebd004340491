"""What a copy or prefetch moves, decoded once for the verifier and the lowering.

`AsyncCopyOp.geometry()` gives a `CopyGeometry`, `PrefetchOp.geometry()` a `BoxGeometry`:
the GMEM box and its origin, the element size, the swizzle, the SMEM slot, the box each CTA
issues (a multicast load's share: `MulticastSplit`) and the tensor map that describes the
box (its data type: `tensor_map_type`, which the TMA reduction table `REDUCTIONS_BY_MAP`
decides for reductions).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from math import prod

from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float4E2M1FNType,
    Float6E2M3FNType,
    Float6E3M2FNType,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatTF32Type,
    IntegerType,
    MemRefType,
    Signedness,
)
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Operation,
    SSAValue,
)

from copy_dialect import layout
from copy_dialect.attributes import OOBMode, ReductionKind
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.memory import bitwidth, element_strides, gmem_view, smem_bytes
from copy_dialect.verify_common import cluster_shape, constant_int, known_multiple
from facts import hardware

# ===----------------------------------------------------------------------=== #
# Tensor-map data types
# ===----------------------------------------------------------------------=== #


# The TMA reduction table an H200 ran (facts/hardware.toml, docs/hardware.md): which
# ops each tensor-map type takes. The map type comes from the element type and, for
# integers, the signedness the op or the type asks for.
REDUCTIONS_BY_MAP = hardware.REDUCTIONS_BY_MAP


def reduction_map_type(kind: ReductionKind, element_type: Attribute) -> str | None:
    """The tensor-map type a reduction of `kind` on `element_type` is encoded with.

    Raises for an integer min/max whose signedness neither the op nor the type gives
    (rule E2): the map type, not the instruction, decides it (jax#27086).
    """
    if isinstance(element_type, Float16Type):
        return "FLOAT16"
    if isinstance(element_type, BFloat16Type):
        return "BFLOAT16"
    if isinstance(element_type, Float32Type):
        return "FLOAT32"
    if isinstance(element_type, FloatTF32Type):
        return "TFLOAT32"
    if isinstance(element_type, Float64Type):
        return "FLOAT64"
    if not isinstance(element_type, IntegerType) or element_type.width.data not in (32, 64):
        return None
    signedness = element_type.signedness.data
    wants_signed = kind in (ReductionKind.SMIN, ReductionKind.SMAX)
    wants_unsigned = kind in (ReductionKind.UMIN, ReductionKind.UMAX)
    # rule: E2
    if (wants_signed and signedness == Signedness.UNSIGNED) or (
        wants_unsigned and signedness == Signedness.SIGNED
    ):
        raise Error(
            f"reduction {kind} contradicts the signedness of the element type {element_type}",
            note="the tensor-map type decides signedness: use "
            f"{'u' if wants_signed else 's'}{base_reduction(kind)} (the min/max that matches "
            "the type), or a signless element type",
        )
    # rule: E2
    if kind in (ReductionKind.MIN, ReductionKind.MAX) and signedness == Signedness.SIGNLESS:
        raise Error(
            f"reduction {kind} on the signless integer type {element_type} does not say "
            "whether to compare signed or unsigned",
            note=f"use u{kind} or s{kind} (or a si/ui element type): the tensor-map type "
            "decides signedness, and a wrong one silently changes the result (jax#27086)",
        )
    signed = wants_signed or (not wants_unsigned and signedness == Signedness.SIGNED)
    return f"{'INT' if signed else 'UINT'}{element_type.width.data}"


def reduction_map_op(kind: ReductionKind, element_type: Attribute) -> str:
    """The op a reduction asks of its tensor map (a key of REDUCTIONS_BY_MAP's sets): for
    integers the signedness of `umin`/`smax`... has gone into the map type, leaving `min`/
    `max`; floats take the op as written (no float map takes `umin`)."""
    return base_reduction(kind) if isinstance(element_type, IntegerType) else kind.value


def base_reduction(kind: ReductionKind) -> str:
    return (
        kind.value.removeprefix("u").removeprefix("s")
        if kind
        in (
            ReductionKind.UMIN,
            ReductionKind.UMAX,
            ReductionKind.SMIN,
            ReductionKind.SMAX,
        )
        else kind.value
    )


TENSOR_MAP_TYPES: dict[type[Attribute], str] = {
    Float16Type: "FLOAT16",
    BFloat16Type: "BFLOAT16",
    Float32Type: "FLOAT32",
    FloatTF32Type: "TFLOAT32",
    Float64Type: "FLOAT64",
}
"""The `CUtensorMapDataType` (without its prefix) of each float type with a map type of its
own; integers and 8-bit floats are mapped in `tensor_map_type`."""


PACKED_MAP_TYPES: dict[type[Attribute], str] = {
    Float4E2M1FNType: "16U4_ALIGN8B",
    Float6E2M3FNType: "16U6_ALIGN16B",
    Float6E3M2FNType: "16U6_ALIGN16B",
}
"""The `CUtensorMapDataType` (without its prefix) of each packed element type in SMEM packed
as in GMEM, or in SMEM of 16 to a 16-byte unit (`ALIGN16_MAP_TYPES`): FP4 "16 x U4 packed
values ... no gaps", FP6 only "16 x U6 ... aligned as 16 bytes" (cuda.h;
`copy_dialect.blackwell_maps`)."""
ALIGN16_MAP_TYPES = {"16U4_ALIGN8B": "16U4_ALIGN16B", "16U6_ALIGN16B": "16U6_ALIGN16B"}
"""The map type of a packed type whose SMEM is `#copy.smem<align16>`."""


def tensor_map_type(
    element_type: Attribute, reduction: ReductionKind | None = None, align16: bool = False
) -> str | None:
    """The `CUtensorMapDataType` name (FLOAT32, UINT64, ...) a TMA op on `element_type`
    encodes its tensor map with, or None where no map type exists (rule C11). For a
    reduction the reduction table decides (`reduction_map_type`: the signedness of a min/max
    goes into the map type); otherwise integers are unsigned unless the type is signed, and
    8-bit floats travel as bytes."""
    if reduction is not None:
        return reduction_map_type(reduction, element_type)
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width in (32, 64):
            signed = element_type.signedness.data == Signedness.SIGNED
            return f"{'INT' if signed else 'UINT'}{width}"
        return {8: "UINT8", 16: "UINT16"}.get(width)
    if (name := TENSOR_MAP_TYPES.get(type(element_type))) is not None:
        return name
    if (name := PACKED_MAP_TYPES.get(type(element_type))) is not None:
        return ALIGN16_MAP_TYPES[name] if align16 else name
    if isinstance(element_type, AnyFloat) and bitwidth(element_type) == 8:
        return "UINT8"
    return None


def tma_supports_dtype(t: Attribute, packed: bool = False) -> bool:
    """Element types a tensor map of this compiler can describe (C11): ints of 8..64 bits,
    f16/bf16/tf32/f32/f64, and the 8-bit floats (encoded as unsigned bytes); with `packed`
    (tiled copies and prefetches) also f4E2M1FN, a 16U4_ALIGN8B map. i4 has no map type in
    the lowering."""
    if not packed and type(t) in PACKED_MAP_TYPES:
        return False
    return tensor_map_type(t) is not None


# ===----------------------------------------------------------------------=== #
# The box and its tensor map
# ===----------------------------------------------------------------------=== #


def multicast_split_dim(box: Sequence[int]) -> int:
    """The box dim a multicast load splits over its collective group: the outermost dim
    larger than 1, so that each CTA's share is contiguous in SMEM."""
    return next((i for i, d in enumerate(box) if d > 1), len(box) - 1)


@dataclass(frozen=True)
class MulticastSplit:
    """How a multicast load shares its box: each of the `size` CTAs of the collective group
    issues 1/size of the box along box dim `dim` (the outermost dim larger than 1, so that
    the shares lie back to back in SMEM) and multicasts it to the whole group."""

    dim: int
    """The box dim the box is split along (`multicast_split_dim`)."""
    size: int
    """The CTAs of the collective group: the cluster's extent over the collective dims."""
    box_shape: tuple[int, ...]
    """The whole box."""

    @property
    def divides(self) -> bool:
        """Whether `size` divides the box along `dim` (rule D5 requires it)."""
        return self.box_shape[self.dim] % self.size == 0

    @property
    def share_extent(self) -> int:
        """Elements along `dim` each CTA issues: CTA `r` of the group starts `r` times this
        further along the split dim."""
        return self.box_shape[self.dim] // self.size

    @property
    def share(self) -> tuple[int, ...]:
        """The box each CTA issues."""
        box, dim = self.box_shape, self.dim
        return box[:dim] + (self.share_extent,) + box[dim + 1 :]


@dataclass(frozen=True, kw_only=True)
class BoxGeometry:
    """The box of a GMEM array that a copy or a prefetch addresses, and the tensor map that
    describes it (for TMA). `PrefetchOp.geometry()` gives this; `AsyncCopyOp.geometry()` a
    `CopyGeometry`, which adds the SMEM side."""

    gmem: SSAValue
    gmem_type: MemRefType
    gmem_indices: tuple[SSAValue, ...]
    """The box origin, one index per GMEM dim (rule K1)."""
    box_shape: tuple[int, ...]
    """The box, outermost dim first; it may leave out leading GMEM dims (copied with size 1)."""
    swizzle_bytes: int
    """The SMEM swizzle span in bytes, 16 for none."""
    oob: OOBMode
    """What out-of-bounds parts of the box do (the op's `oob`, else its default)."""
    reduction: ReductionKind | None
    """The reduction a TMA store applies, None for a plain copy."""

    @property
    def element_type(self) -> Attribute:
        return self.gmem_type.element_type

    @property
    def element_bits(self) -> int:
        """Bits an element occupies in memory (`bitwidth`; 8 for a non-numeric element type,
        which rule B8 rejects)."""
        return bitwidth(self.element_type) or 8

    @property
    def row_bytes(self) -> int:
        """Bytes of one innermost row of the box (whole bytes: rules B8, C12)."""
        return self.box_shape[-1] * self.element_bits // 8

    @property
    def box_bytes(self) -> int:
        """Bytes of the box, OOB parts included (what a barrier is credited: see
        `CopyGeometry.credited_bytes`)."""
        return prod(self.box_shape) * (bitwidth(self.element_type) or 0) // 8

    @property
    def issued_box(self) -> tuple[int, ...]:
        """The box each CTA issues: the whole box."""
        return self.box_shape

    def gmem_dim(self, box_dim: int) -> int:
        """The GMEM dim that box dim `box_dim` runs along (the box aligns with the innermost
        GMEM dims)."""
        return self.gmem_type.get_num_dims() - len(self.box_shape) + box_dim

    @property
    def gmem_box(self) -> tuple[int, ...]:
        """`issued_box` with a 1 for each GMEM dim it leaves out: one entry per GMEM dim,
        outermost first (the box of the tensor map)."""
        box = self.issued_box
        return (1,) * (self.gmem_type.get_num_dims() - len(box)) + box

    def window_outside(self) -> tuple[int, int, int, int] | None:
        """The first GMEM dim along which the box, at a constant origin, leaves the array
        (a static extent): (dim, origin, box extent, array extent); None when every such
        window lies inside. Rules F3 (copies) and BK4 (bulk prefetches) read it."""
        shape = self.gmem_type.get_shape()
        box = (1,) * (len(shape) - len(self.box_shape)) + self.box_shape
        for d, (index, size, n) in enumerate(zip(self.gmem_indices, box, shape, strict=True)):
            c = constant_int(index)
            if c is not None and n >= 0 and not (0 <= c and c + size <= n):
                return d, c, size, n
        return None

    @property
    def gmem_argument(self) -> int:
        """The index of the GMEM ref among the kernel's arguments: for a TMA op, whose GMEM
        ref is a kernel argument (rule B11)."""
        assert isinstance(self.gmem, BlockArgument)
        return self.gmem.index

    @property
    def tensor_map_type(self) -> str | None:
        """The tensor map's `CUtensorMapDataType` name (`tensor_map_type`); a TMA op that
        verifies has one (rules C11, E1)."""
        return tensor_map_type(
            self.element_type, self.reduction, layout.align16_of(self.swizzle_bytes)
        )

    @property
    def tensor_map_oob(self) -> str:
        """The tensor map's out-of-bounds fill: "nan" or "zeros"."""
        return "nan" if self.oob == OOBMode.NAN else "zeros"


@dataclass(frozen=True, kw_only=True)
class CopyGeometry(BoxGeometry):
    """What a `copy.async_copy` moves, by memory space rather than by src/dst: the GMEM box,
    the SMEM slot and, for a multicast load, each CTA's share."""

    is_load: bool
    """GMEM -> SMEM (else SMEM -> GMEM)."""
    smem: SSAValue
    smem_type: MemRefType
    smem_indices: tuple[SSAValue, ...]
    """Slot indices on the SMEM ref's leading dims; the remaining dims are the box."""
    barrier: SSAValue | None
    """The barrier group a load signals (None: a store, or a load without a barrier)."""
    barrier_index: SSAValue | None
    """The barrier's index in its group (None: the group of one, used without an index)."""
    predicate: SSAValue | None
    """The user's predicate (`if %p`), None for an unconditional copy."""
    collective_dims: tuple[int, ...]
    """The cluster dims a collective copy is shared over, () for none."""
    leader_tracked: bool
    """A leader-tracked copy of a CTA pair (each CTA issues its whole box)."""
    arrives: bool
    """The copy itself arrives on its barrier expecting its bytes (`credited_bytes`): it
    has a barrier and does not leave the arrival to the kernel (`arrive = false`)."""
    op: Operation = field(compare=False, repr=False)
    """The op decoded, whose kernel gives the cluster shape."""

    @property
    def credited_bytes(self) -> int:
        """Bytes the copy credits its barrier with: its box (the whole box for a multicast
        load, in each receiving CTA), both CTAs' boxes for a leader-tracked load (at the
        pair's leader)."""
        return (2 if self.leader_tracked else 1) * self.box_bytes

    @cached_property
    def cluster(self) -> tuple[int, int, int]:
        """The cluster shape of the kernel around the copy, (1, 1, 1) when it has none."""
        return cluster_shape(self.op)

    @cached_property
    def multicast(self) -> MulticastSplit | None:
        """How a multicast load splits its box over its collective group (collective dims
        valid: rule D7); None for a copy that is not collective or is leader-tracked."""
        if not self.collective_dims or self.leader_tracked:
            return None
        size = prod(self.cluster[d] for d in self.collective_dims)
        return MulticastSplit(multicast_split_dim(self.box_shape), size, self.box_shape)

    @property
    def issued_box(self) -> tuple[int, ...]:
        """The box each CTA issues: its share for a multicast load, else the whole box."""
        return self.box_shape if self.multicast is None else self.multicast.share

    @property
    def share_bytes(self) -> int:
        """The SMEM bytes the box each CTA issues occupies (`smem_bytes`: rows padded to the
        swizzle span); the shares of a multicast load lie back to back, CTA `r`'s at
        `r * share_bytes` into the slot (rules D5, TR11 keep each aligned)."""
        return smem_bytes(self.issued_box, self.element_type, self.swizzle_bytes)


def cp_async_chunks(g: CopyGeometry, cg: bool = False) -> tuple[int, ...]:
    """The bytes each cp.async of a copy may move, largest first: those of 16, 8 and 4 that
    divide the box row, every static GMEM stride and a constant innermost coordinate (in
    bytes), since cp.async needs its global address aligned to its size; with `cg` (cache
    cg) only 16. Where every GMEM stride is static the copy moves the first (one size);
    where one is dynamic (the row pitch of a dynamic-shape ref) the kernel picks at run time
    the largest that also divides the array's address and its dynamic strides, and the
    runtime checks that the last one does (`PointerParam.align`). A view made in the kernel
    (`gmem_view`) starts where its offset puts it, which only the kernel knows: it picks at
    run time too, whatever its strides; and so does a copy whose innermost coordinate is not
    known to be a multiple of the largest (`inner_aligned`). Empty when none fits.
    The verifier (H2, H6), the ABI and the lowering all take the chunks from here."""
    bits = bitwidth(g.element_type) or 8
    row_bytes = g.box_shape[-1] * bits // 8
    strides = element_strides(g.gmem_type) or ()
    offsets = [s * bits // 8 for s in strides[:-1] if s is not None]
    inner = constant_int(g.gmem_indices[-1]) if g.gmem_indices else None
    if inner is not None:
        offsets.append(inner * bits // 8)
    fits = tuple(
        c
        for c in (16, 8, 4)
        if row_bytes % c == 0 and all(o % c == 0 for o in offsets) and (c == 16 or not cg)
    )
    picked = None in strides[:-1] or gmem_view(g.gmem) is not None
    return fits if picked or not inner_aligned(g, fits[:1]) else fits[:1]


def inner_aligned(g: CopyGeometry, chunks: Sequence[int]) -> bool:
    """Whether the copy's innermost GMEM coordinate is known to put its rows on a multiple
    of the first of `chunks` (`known_multiple`: a constant, `%bx * 64`, ...). Where it is
    not (`%bx * 64 + 2`, a value loaded from memory), the cp.async lowering picks the chunk
    at run time from the coordinate too."""
    if not chunks or not g.gmem_indices:
        return True
    bits = bitwidth(g.element_type) or 8
    multiple = known_multiple(g.gmem_indices[-1])
    return multiple == 0 or multiple * bits // 8 % chunks[0] == 0


def cp_async_chunk_bytes(g: CopyGeometry) -> int | None:
    """The largest chunk a cp.async copy may move (`cp_async_chunks`), None when none
    fits."""
    chunks = cp_async_chunks(g)
    return chunks[0] if chunks else None
