"""`copy.gather4`, `copy.scatter4` and `copy.gather4_prefetch`: the TMA `.tile::gather4`
and `.tile::scatter4` modes (sm_100 and newer; PTX ISA 8.6, "`.tile::scatter4` and
`.tile::gather4` modes").

A 2-D GMEM array `[rows, cols]`, four row indices and one column: gather4 loads the four
rows `rows[i]`, columns `[col, col + W)`, into a `[4, W]` SMEM tile (row i of the tile is
row `rows[i]` of the array), completing on an mbarrier like a TMA load; scatter4 writes the
tile's four rows back to those rows, completing with the bulk group like a TMA store; the
prefetch brings the four row segments into L2. The tensor map is a tiled map of the 2-D
array whose box is one row, `[1, W]` (the ISA: "the size of the bounding box in the
dimension 1 must be one"); the instruction takes the coordinates `{col, row0, row1, row2,
row3}`. Each row is a tile-mode box of its own: rows or columns outside the array read as
zeros (gather4) and are not written (scatter4).

The rules are Mosaic GPU's gather/scatter rules (G1-G5, D6, E4, F5), the arch gates (A14)
and the tiled maps' rules the modes share (`copy_dialect.tma`): the element type (C11),
16-byte rows (C4), the swizzle span (C5), the GMEM layout (B10, C1, C2), the kernel
argument (B11), .s32 coordinates (K4), a 16-byte column (TR12), a scatter4's non-negative
coordinates (TR13) and the SMEM slot's alignment (TR10, TR11). What the
ISA has and these ops do not take: `.cta_group::2` for gather4, and reductions (E4: the
ISA's cp.reduce.async.bulk.tensor has no scatter4 mode). A collective copy here splits its
box over the cluster, which a 4-row tile cannot be (D6); a gather4 reaches other CTAs as
the ISA's `.multicast::cluster` form does instead: `multicast %mask` (an i16, bit r for the
cluster's CTA r) writes the whole tile into the same slot of every CTA of the mask and
completes its bytes on the barrier at the same offset in each (G6; sm_100a/f, sm_103a/f,
sm_110a/f: A14), the issuer's own arrival expecting them as usual.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod
from typing import ClassVar

from xdsl.dialects.builtin import (
    I1,
    I16,
    I64,
    BoolAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    UnitAttr,
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
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect

from copy_dialect import tma
from copy_dialect.attributes import (
    BarrierType,
    CachePolicy,
    Implementation,
    L2Policy,
    L2PolicyAttr,
    OOBMode,
    ReductionKind,
    ReductionKindAttr,
    enum_attr,
)
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.gather4_cluster import verify_multicast, verify_pair
from copy_dialect.gather4_targets import (
    GATHER4,
    SCATTER4,
)
from copy_dialect.geometry import BoxGeometry, CopyGeometry
from copy_dialect.gmem import check_gmem_layout
from copy_dialect.l2_policy import (
    policy_properties,
    policy_value,
    promotion_bytes,
    verify_cache_policy,
    verify_l2_promotion,
)
from copy_dialect.memory import GMEM, SMEM, memory_space, swizzle_of
from copy_dialect.verification import copy_op_definition, per_run
from copy_dialect.verify_common import (
    check_barrier_index,
    check_contiguous_smem,
    check_smem_indices,
    constant_int,
    enclosing_target,
    feature_error,
    retarget_note,
)
from facts import hardware
from facts.target import Feature

ROWS = 4
"""Rows a gather4 or scatter4 moves: the ISA's four row coordinates."""
TILE_BYTES_MULTIPLE = 128
"""A gather4/scatter4 tile is a multiple of 128 bytes (Mosaic GPU: each 4-row transfer
keeps the next one's SMEM address 128-byte aligned)."""


@dataclass(frozen=True, kw_only=True)
class Gather4Geometry(CopyGeometry):
    """What a gather4 or scatter4 moves: a `CopyGeometry` whose box is the SMEM tile
    `[4, W]` (its bytes are what a gather4 credits its barrier), plus the row indices and
    the column. `gmem_indices` is (row 0, column): the first row's box."""

    rows: tuple[SSAValue, ...]
    column: tuple[SSAValue, ...]

    @property
    def gmem_box(self) -> tuple[int, ...]:
        """The tensor map's box: one row of the tile, `[1, W]`."""
        return (1, self.box_shape[-1])

    @property
    def coordinates(self) -> tuple[SSAValue, ...]:
        """The instruction's coordinates, innermost first: {col, row0, row1, row2, row3}."""
        return (*self.column, *self.rows)


class _Gather4Base(IRDLOperation):
    """What the three ops share: the GMEM ref, the row indices, the column, the L2 policy
    and the map's L2 promotion."""

    l2 = opt_prop_def(L2PolicyAttr)
    l2_fraction = opt_prop_def(FloatAttr[Float32Type])
    l2_secondary = opt_prop_def(L2PolicyAttr)
    l2_promotion = opt_prop_def(IntegerAttr[I64])

    FEATURE: ClassVar[Feature] = GATHER4

    def l2_policy_value(self) -> int | CachePolicy | None:
        """The L2 cache-policy operand: a named policy's encoding, the CachePolicy the kernel
        makes with createpolicy, None for none."""
        return policy_value(self.l2, self.l2_fraction, self.l2_secondary)

    @property
    def l2_promotion_bytes(self) -> int:
        """The L2 promotion of the op's tensor map in bytes (0: none)."""
        return promotion_bytes(self.l2_promotion)

    def _verify_target(self) -> None:
        target = enclosing_target(self)
        # rule: A14
        if target is not None and not self.FEATURE.has(target):
            raise feature_error(
                self,
                self.FEATURE,
                target,
                note=f"{retarget_note(self.FEATURE)}, or load the rows with tiled copies "
                "(copy.async_copy of a [1, W] box per row)",
            )

    def _verify_coordinates(self, gmem_type: MemRefType) -> None:
        rank = gmem_type.get_num_dims()
        # rule: G1
        if rank != 2:
            shape = gmem_type.get_shape()
            rows = prod(shape[:-1]) if rank > 1 else 1
            merged = (
                f", e.g. {MemRefType(gmem_type.element_type, [rows, shape[-1]])}"
                if rank and min(shape) >= 0
                else ""
            )
            raise Error(
                "Gathers/scatters only supported along the first dimension of 2D arrays, got a "
                f"rank-{rank} GMEM ref ({gmem_type})",
                note="give the op a 2-D GMEM ref [rows, cols] (the array with its leading dims "
                f"merged into the rows){merged}: gather4 picks rows along dim 0",
            )
        # rule: G2
        if len(self.rows) != ROWS:
            raise Error(
                f"Expected {ROWS} row indices (the rows of the 4-row tile), got {len(self.rows)}",
                note=f"give rows [...] exactly {ROWS} index values; gather more rows with one "
                "op per 4 rows",
            )
        # rule: G5
        if len(self.rows) + len(self.column) != ROWS + 1:
            raise Error(
                f"Gather4 mode expects 5 coordinates, got {len(self.rows)} rows and "
                f"{len(self.column)} columns",
                note="give column [...] one index: the first column of every row",
            )
        tma.check_coordinate_range((*self.column, *self.rows), f"TMA {self.name[5:]}")

    def _verify_map(self, g: Gather4Geometry | BoxGeometry) -> None:
        """The tiled map's rules the modes share, and a tile's 128 bytes (G3)."""
        tma.check_kernel_argument(self, g.gmem)
        tma.check_tma_dtype(g.element_type)
        width = g.box_shape[-1]
        # rule: C7, TR5
        if not 1 <= width <= 256:
            raise Error(
                f"Async copies only support copying <=256 elements along each dimension, got "
                f"{width}",
                note="split the row: at most 256 columns per op, one op per block of columns",
            )
        tma.check_tma_row(g)
        tile_bytes = g.box_bytes
        # rule: G3
        if isinstance(g, Gather4Geometry) and tile_bytes % TILE_BYTES_MULTIPLE:
            step = TILE_BYTES_MULTIPLE // ROWS * 8 // g.element_bits
            raise Error(
                "Gather/scatter TMA would require breaking it up into transfers of "
                f"{tile_bytes} bytes, but need a multiple of {TILE_BYTES_MULTIPLE} bytes",
                note=f"make the tile's width a multiple of {step} elements ({g.element_type}): "
                f"{ROWS} rows of {step * ((width + step - 1) // step)} rather than {width}",
            )
        check_gmem_layout(g, g.gmem_type, Implementation.TMA, "")  # type: ignore[arg-type]
        tma.verify_copy_box(g, None)  # type: ignore[arg-type]
        verify_cache_policy(self.l2, self.l2_fraction, self.l2_secondary)
        verify_l2_promotion(self.l2_promotion, None)


class _TileOp(_Gather4Base):
    """gather4 and scatter4: the SMEM tile, its slot, the user predicate (F5)."""

    def geometry(self) -> Gather4Geometry:
        """The tile, its slot, the barrier and the coordinates, decoded once."""
        return per_run("gather4 geometry", self, self._decode_geometry)

    def _decode_geometry(self) -> Gather4Geometry:
        assert isinstance(gmem_type := self.src.type, MemRefType)
        assert isinstance(smem_type := self.smem.type, MemRefType)
        barrier = getattr(self, "barrier", None)
        first = tuple(self.rows[:1]) + tuple(self.column[:1])
        return Gather4Geometry(
            gmem=self.src,
            gmem_type=gmem_type,
            gmem_indices=first,
            box_shape=smem_type.get_shape()[len(self.smem_indices) :],
            swizzle_bytes=swizzle_of(smem_type),
            oob=OOBMode.ZEROS,
            reduction=None,
            is_load=isinstance(self, Gather4Op),
            smem=self.smem,
            smem_type=smem_type,
            smem_indices=tuple(self.smem_indices),
            barrier=barrier,
            barrier_index=getattr(self, "barrier_index", None),
            predicate=self.predicate,
            collective_dims=(),
            leader_tracked=getattr(self, "leader_tracked", None) is not None,
            arrives=barrier is not None and self.arrives,
            op=self,
            rows=tuple(self.rows),
            column=tuple(self.column),
        )

    def resolved_implementation(self) -> None:
        """None: the op has no implementation choice (the protocol reads TMA from its
        barrier, or its being a store)."""
        return None

    @property
    def arrives(self) -> bool:
        return True

    def _verify_tile(self, g: Gather4Geometry) -> None:
        src, dst = memory_space(g.gmem_type), memory_space(g.smem_type)
        # rule: B2
        if src != GMEM or dst != SMEM:
            raise Error(
                f"{self.name} moves rows between a GMEM ref and an SMEM tile, got {src} and {dst}",
                note="give the op a GMEM ref (no memory space) and an SMEM ref (#copy.smem)",
            )
        # rule: B1
        if g.gmem_type.element_type != g.smem_type.element_type:
            raise Error(
                f"Expected same element type, got {g.gmem_type.element_type} and "
                f"{g.smem_type.element_type}",
                note="copies do not convert: give both refs the same element type",
            )
        check_contiguous_smem(g.smem_type)
        check_smem_indices(g.smem_type, g.smem_indices)
        box = g.box_shape
        # rule: G4
        if len(box) != 2 or box[0] != ROWS:
            t = g.smem_type
            raise Error(
                f"Expected the SMEM tile of a {self.name} to be [{ROWS}, W] (one row per row "
                f"index), got {list(box)} (the SMEM ref's dims after its "
                f"{len(g.smem_indices)} slot indices)",
                note=f"make each slot a {ROWS}-row tile, e.g. "
                f"{MemRefType(t.element_type, [ROWS, box[-1]], t.layout, t.memory_space)}"
                if box
                else f"make each slot a {ROWS}-row tile [{ROWS}, W]",
            )
        # rule: F5
        if self.predicate is not None:
            raise Error(
                "Gather/scatter TMA can't use a predicate",
                note=f"drop `if` and guard the {self.name} with scf.if on the condition (the "
                "protocol analysis follows the branch)",
            )

    def _verify_all(self) -> Gather4Geometry:
        g = self.geometry()
        self._verify_tile(g)
        self._verify_target()
        self._verify_coordinates(g.gmem_type)
        self._verify_map(g)
        self._verify_constant_coordinates(g)
        tma.verify_smem_alignment(g)
        return g

    def _verify_constant_coordinates(self, g: Gather4Geometry) -> None:
        """The tile mode's coordinate rules (the ISA: "all other constraints and rules of
        the tile mode apply"): the column, the innermost coordinate, on a 16-byte boundary
        (TR12); a scatter4's coordinates, a `.global.shared::cta` copy's, not negative
        (TR13). The debug guards check dynamic ones."""
        column = constant_int(g.column[0])
        multiple = hardware.COORDINATE_BYTES_MULTIPLE
        # rule: TR12
        if column is not None and (column * g.element_bits // 8) % multiple:
            raise Error(
                f"the innermost TMA coordinate must be a multiple of {multiple} bytes, got "
                f"{column} ({column * g.element_bits // 8} bytes)",
                note="any other innermost coordinate is an illegal instruction on the GPU: "
                f"start the column at a multiple of {max(1, 8 * multiple // g.element_bits)} "
                "elements",
            )
        if g.is_load:
            return
        for i, index in enumerate((*g.column, *g.rows)):
            c = constant_int(index)
            # rule: TR13
            if c is not None and c < hardware.MIN_STORE_COORDINATE:
                raise Error(
                    f"TMA store coordinates must be >= 0, got {c} at index {i} of the "
                    "scatter4's {column, row0, row1, row2, row3}",
                    note="a negative store coordinate is an illegal instruction on the GPU "
                    "(PTX ISA: a .global.shared::cta copy's coordinates are non-negative): "
                    "start at 0 or more",
                )


@copy_op_definition
class Gather4Op(_TileOp):
    """
    Loads four rows of a 2-D GMEM array (`rows`, one index each), `W` columns each from
    `column` on, into the `[4, W]` SMEM tile by TMA (`.tile::gather4`, sm_100 and newer),
    and signals `barrier` when its bytes have landed (unless `arrive = false`, arriving on
    it expecting the tile's bytes, as a TMA load does). Rows and columns outside the array
    read as zeros. `l2 ...` is the L2 cache policy and `l2_promotion` the map's, as on
    copy.async_copy. With `multicast %mask` (i16, bit r: the cluster's CTA r) the tile lands
    in the same slot of every CTA of the mask, its bytes completing on the barrier at the
    same offset in each; each receiving CTA arms its own barrier (the issuer's arrival, or
    copy.barrier_arrive_expect_tx in the others).

    ```mlir
    copy.gather4 %x rows [%i, %j, %n, %h] column [%c] to %tiles[%slot]
        barrier %bars[%slot] : memref<4096x4096xf32> to memref<2x4x64xf32, #copy.smem>,
        !copy.barrier<2>
    copy.gather4 %x rows [%i, %j, %n, %h] column [%c] to %tiles[%slot]
        barrier %bars[%slot] multicast %mask : memref<4096x4096xf32>
        to memref<2x4x64xf32, #copy.smem>, !copy.barrier<2>
    ```
    """

    name = "copy.gather4"

    src = operand_def(MemRefType)
    rows = var_operand_def(IndexType)
    column = var_operand_def(IndexType)
    smem = operand_def(MemRefType)
    smem_indices = var_operand_def(IndexType)
    barrier = operand_def(BarrierType)
    barrier_index = opt_operand_def(IndexType)
    predicate = opt_operand_def(I1)
    multicast = opt_operand_def(I16)
    collective = opt_prop_def(DenseArrayBase.constr(i64))
    arrive = opt_prop_def(BoolAttr)
    leader_tracked = opt_prop_def(UnitAttr)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$src `rows` `[` $rows `]` `column` `[` $column `]` `to` $smem "
        "(`[` $smem_indices^ `]`)? `barrier` $barrier `[` $barrier_index `]` "
        "(`multicast` $multicast^)? (`leader_tracked` $leader_tracked^)? "
        "(`if` $predicate^)? (`l2` $l2^)? (`fraction` $l2_fraction^)? "
        "(`secondary` $l2_secondary^)? "
        "attr-dict `:` type($src) `to` type($smem) `,` type($barrier)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        smem: SSAValue | Operation,
        *,
        rows: Sequence[SSAValue | Operation],
        column: SSAValue | Operation,
        barrier: SSAValue | Operation,
        smem_indices: Sequence[SSAValue | Operation] = (),
        barrier_index: SSAValue | Operation | None = None,
        arrive: bool | None = None,
        multicast: SSAValue | Operation | None = None,
        leader_tracked: bool = False,
        l2: L2Policy | str | CachePolicy | None = None,
        l2_promotion: int | None = None,
    ):
        super().__init__(
            operands=[
                src,
                rows,
                [column],
                smem,
                smem_indices,
                barrier,
                barrier_index,
                None,
                multicast,
            ],  # fmt: skip
            properties={
                "arrive": None if arrive is None else BoolAttr.from_bool(arrive),
                "leader_tracked": UnitAttr() if leader_tracked else None,
                **policy_properties(l2),
                "l2_promotion": None if l2_promotion is None else IntegerAttr(l2_promotion, i64),
            },
        )

    @property
    def arrives(self) -> bool:
        """Whether the load itself arrives on its barrier expecting its bytes."""
        return self.arrive is None or self.arrive.value.data

    def verify_(self) -> None:
        check_barrier_index(self.barrier, self.barrier_index)
        # rule: D6
        if self.collective is not None:
            raise Error(
                "Collective copies with gather/scatter unsupported",
                note="drop collective and issue one copy.gather4 per CTA: a collective copy "
                "splits its box over the cluster, and a 4-row tile has no split TMA can make "
                "(each CTA's part of a gather4 tile is not a gather4 tile of its own), or "
                "issue it from one CTA with multicast %mask",
            )
        self._verify_all()
        if self.multicast is not None:
            verify_multicast(self, self.multicast)
        if self.is_leader_tracked:
            verify_pair(self)

    @property
    def is_leader_tracked(self) -> bool:
        """Whether the gather4 is a CTA pair's (`.cta_group::2`): its rows into this CTA's
        SMEM, its bytes on the barrier of the pair's leader (the even rank)."""
        return self.leader_tracked is not None


@copy_op_definition
class Scatter4Op(_TileOp):
    """
    Stores the `[4, W]` SMEM tile to four rows of a 2-D GMEM array (`rows`, one index
    each), `W` columns each from `column` on, by TMA (`.tile::scatter4`: sm_100a/f,
    sm_103a, sm_110a/f), completing with the bulk group (copy.commit_group bulk,
    copy.wait_group bulk) as a TMA store. Rows and columns outside the array are not
    written.

    ```mlir
    copy.scatter4 %tiles[%slot] to %x rows [%i, %j, %n, %h] column [%c]
        : memref<2x4x64xf32, #copy.smem> to memref<4096x4096xf32>
    ```
    """

    name = "copy.scatter4"

    smem = operand_def(MemRefType)
    smem_indices = var_operand_def(IndexType)
    src = operand_def(MemRefType)
    rows = var_operand_def(IndexType)
    column = var_operand_def(IndexType)
    predicate = opt_operand_def(I1)
    reduction = opt_prop_def(ReductionKindAttr)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$smem (`[` $smem_indices^ `]`)? `to` $src `rows` `[` $rows `]` "
        "`column` `[` $column `]` (`if` $predicate^)? (`reduce` $reduction^)? "
        "(`l2` $l2^)? (`fraction` $l2_fraction^)? (`secondary` $l2_secondary^)? "
        "attr-dict `:` type($smem) `to` type($src)"
    )

    FEATURE: ClassVar[Feature] = SCATTER4

    def __init__(
        self,
        smem: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        rows: Sequence[SSAValue | Operation],
        column: SSAValue | Operation,
        smem_indices: Sequence[SSAValue | Operation] = (),
        reduction: ReductionKind | str | None = None,
        l2: L2Policy | str | CachePolicy | None = None,
        l2_promotion: int | None = None,
    ):
        super().__init__(
            operands=[smem, smem_indices, dst, rows, [column], None],
            properties={
                "reduction": enum_attr(ReductionKindAttr, ReductionKind, reduction),
                **policy_properties(l2),
                "l2_promotion": None if l2_promotion is None else IntegerAttr(l2_promotion, i64),
            },
        )

    @property
    def is_load(self) -> bool:
        return False

    def verify_(self) -> None:
        # rule: E4
        if self.reduction is not None:
            raise Error(
                "Gather/scatter TMA can't perform reductions",
                note="drop the reduction: cp.reduce.async.bulk.tensor has no .tile::scatter4 "
                "mode (PTX ISA); reduce each row with a tiled copy.async_copy ... reduce "
                f"{self.reduction.data.value} of a [1, W] box",
            )
        self._verify_all()
