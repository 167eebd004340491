"""TMEM data movement (tcgen05, PTX ISA 9.7.16.9 "Tensor Memory Data Movement"):
`copy.smem_to_tmem` (`tcgen05.cp`, with `scales` a block-scaled MMA's scale factors, with
`metadata` a sparse MMA's metadata) and
`copy.tmem_shift` (`tcgen05.shift.down`). The TMEM tables, refs and CTA groups are
`copy_dialect.tmem`'s."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I32,
    Float8E4M3FNType,
    Float8E8M0FNUType,
    IndexType,
    IntegerAttr,
    MemRefType,
    UnitAttr,
)
from xdsl.ir import (
    Operation,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
)

from copy_dialect.attributes import (
    TmemCopyMulticast,
    TmemCopyMulticastAttr,
    TmemCopyShape,
    TmemCopyShapeAttr,
    enum_attr,
)
from copy_dialect.blackwell_maps import check_described_swizzle
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.memory import (
    SMEM,
    TMEM,
    bitwidth,
    memory_space,
    smem_bytes,
    swizzle_of,
)
from copy_dialect.tmem import (
    SPARSE_METADATA,
    TMEM_COPY_BYTES,
    check_cta_group,
    check_tcgen05,
    check_tmem_ref,
    cta_group_attr,
    tmem_columns,
)
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import (
    check_contiguous_smem,
    check_smem_indices,
    constant_int,
    enclosing_target,
    feature_error,
    retarget_note,
)
from facts.target import TCGEN05_SHIFT

SCALE_SHAPES = (TmemCopyShape.S32X128B, TmemCopyShape.S64X128B)
"""The tcgen05.cp shapes of scale factors: 32x128b.warpx4 (a 128-row tile's scale_vec::1X
layout, 32 rows of 16 bytes to each warp's lane quarter: Mosaic's scales_layout, CUTLASS's
SM100_UTCCP_4x32dp128bit) and 64x128b.warpx2 (a CTA pair's M = 64 B scales: Mosaic's
b_scales_m64_collective_layout, CUTLASS's 2x64dp128bit)."""


def check_scales(op: SmemToTmemOp, src_type: MemRefType) -> None:
    """`scales`: the copy moves the scale factors of a block-scaled MMA (J13): UE8M0 or UE4M3
    bytes (Mosaic's async_copy_scales_smem_to_tmem), broadcast by a multicast shape, from
    an unswizzled SMEM tile (the descriptor's 8-row core matrices of 16 bytes)."""
    element = src_type.element_type
    # rule: J13
    if not isinstance(element, Float8E8M0FNUType | Float8E4M3FNType):
        raise Error(
            f"Unsupported dtype: {element}, only f8e8m0fnu and f8e4m3fn are supported",
            note="scale factors are UE8M0 bytes (mxf8f6f4, mxf4) or UE4M3 bytes (nvf4): give "
            "both refs the element type f8E8M0FNU or f8E4M3FN",
        )
    # rule: J13
    if op.shape.data not in SCALE_SHAPES:
        raise Error(
            "scale factors are copied with shape 32x128b or 64x128b, got "
            f"{op.shape.data.value.removeprefix('shape_')}",
            note="use shape shape_32x128b multicast warpx4 (a tile's 32 rows of 16 bytes to "
            "each warp's lanes) or shape shape_64x128b multicast warpx2_01_23 (a CTA pair's "
            "M = 64 B scales)",
        )
    # rule: J13
    if swizzle_of(src_type) != 16:
        raise Error(
            f"scale factors are read from an unswizzled SMEM tile, got swizzle "
            f"{swizzle_of(src_type)}",
            note="give the scale tile the memory space #copy.smem (no swizzle): its rows are "
            "the descriptor's 16-byte core-matrix rows",
        )


def check_metadata(op: SmemToTmemOp, src_type: MemRefType) -> None:
    """`metadata`: the copy moves a sparse MMA's metadata (J13): i2 elements, 128 rows of 16
    bytes (64 values) into the 128 lanes (shape 128x128b, 4 columns a copy), from an
    unswizzled SMEM tile (Mosaic's async_copy_sparse_metadata_smem_to_tmem, one copy per 64
    values of K)."""
    element = src_type.element_type
    # rule: J13
    if op.scales is not None:
        raise Error(
            "a copy moves either scale factors or sparse metadata, got both `scales` and "
            "`metadata`",
            note="drop `scales` (the refs are i2: sparse metadata) or copy the scale factors "
            "with their own copy.smem_to_tmem",
        )
    # rule: J13
    if element != SPARSE_METADATA:
        raise Error(
            f"Unsupported dtype: {element}, only i2 supported",
            note="sparse metadata are 2-bit indices: give both refs the element type i2",
        )
    # rule: J13
    if op.shape.data != TmemCopyShape.S128X128B:
        raise Error(
            "sparse metadata are copied with shape 128x128b, got "
            f"{op.shape.data.value.removeprefix('shape_')}",
            note="use shape shape_128x128b (no multicast): a row of 64 values to each lane",
        )
    # rule: J13
    if swizzle_of(src_type) != 16:
        raise Error(
            f"sparse metadata are read from an unswizzled SMEM tile, got swizzle "
            f"{swizzle_of(src_type)}",
            note="give the metadata tile the memory space #copy.smem (no swizzle): its rows "
            "are the descriptor's 16-byte core-matrix rows",
        )


def check_copy_columns(op: SmemToTmemOp, src_type: MemRefType, tmem_type: MemRefType) -> None:
    """The columns the copy writes (a source row's 32-bit words from its column) lie in the
    TMEM ref (J23, as for the loads and stores)."""
    row_bytes = src_type.get_shape()[-1] * (bitwidth(src_type.element_type) or 8) // 8
    span, columns = max(1, row_bytes // 4), tmem_columns(tmem_type)
    start = constant_int(op.column)
    # rule: J23
    if span > columns or (start is not None and not 0 <= start <= columns - span):
        at = "" if start is None else f" from column {start}"
        raise Error(
            f"tcgen05.cp writes {span} TMEM columns{at} (rows of {row_bytes} bytes), past "
            f"the {columns} columns of the ref",
            note=f"start it at a column in [0, {columns - span}]"
            if span <= columns
            else "copy into a wider ref",
        )


def resized_rows_example(t: MemRefType, want_bytes: int) -> str:
    """`, e.g. to memref<...>`: 2-D SMEM ref `t` with as many rows as make `want_bytes`."""
    shape = t.get_shape()
    row = smem_bytes(shape[1:], t.element_type, 16) if len(shape) == 2 else 0
    if not row or want_bytes % row:
        return ""
    resized = MemRefType(t.element_type, [want_bytes // row, shape[1]], memory_space=t.memory_space)
    return f", e.g. to {resized}"


@copy_op_definition
class SmemToTmemOp(IRDLOperation):
    """
    Copies SMEM into TMEM asynchronously (`tcgen05.cp`), starting at a column; issued by the
    elected thread. The source is the buffer, or with `indices` its slot along the leading
    dims (a ring's stage: the tile is the trailing dims). Its rows are 16 bytes, or exactly
    one swizzle span. With
    `cta_group 2` the copy lands in the TMEM of both CTAs of the pair, at the same address;
    `scales` marks a copy of a block-scaled MMA's scale factors (UE8M0 / UE4M3 bytes),
    `metadata` a copy of a sparse MMA's metadata (i2, 128 rows of 64).

    ```mlir
    copy.smem_to_tmem %tile to %acc[%col] shape shape_128x256b
        : memref<128x8xf32, #copy.smem<swizzle = 32>>, memref<128x128xf32, #copy.tmem>
    copy.smem_to_tmem %ring[%slot] to %meta[%col] shape shape_128x128b metadata
        : memref<4x128x64xi2, #copy.smem>, memref<128x512xi2, #copy.tmem>
    ```
    """

    name = "copy.smem_to_tmem"

    src = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    """The slot of `src` along its leading dims (none: the whole buffer)."""
    tmem = operand_def(MemRefType)
    column = operand_def(IndexType)

    shape = prop_def(TmemCopyShapeAttr)
    multicast = opt_prop_def(TmemCopyMulticastAttr)
    cta_group = opt_prop_def(IntegerAttr[I32])
    scales = opt_prop_def(UnitAttr)
    """The copy moves a block-scaled MMA's scale factors (`check_scales`, J13)."""
    metadata = opt_prop_def(UnitAttr)
    """The copy moves a sparse MMA's metadata (`check_metadata`, J13)."""

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$src (`[` $indices^ `]`)? `to` $tmem `[` $column `]` `shape` $shape "
        "(`multicast` $multicast^)? "
        "(`cta_group` $cta_group^)? (`scales` $scales^)? (`metadata` $metadata^)? attr-dict "
        "`:` type($src) `,` type($tmem)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        tmem: SSAValue | Operation,
        column: SSAValue | Operation,
        *,
        shape: TmemCopyShape | str,
        multicast: TmemCopyMulticast | str | None = None,
        cta_group: int | None = None,
        scales: bool = False,
        metadata: bool = False,
        indices: Sequence[SSAValue | Operation] = (),
    ):
        super().__init__(
            operands=[src, list(indices), tmem, column],
            properties={
                "shape": TmemCopyShapeAttr(TmemCopyShape(shape)),
                "multicast": enum_attr(TmemCopyMulticastAttr, TmemCopyMulticast, multicast),
                "cta_group": cta_group_attr(cta_group),
                "scales": UnitAttr() if scales else None,
                "metadata": UnitAttr() if metadata else None,
            },
        )

    @property
    def tile_type(self) -> MemRefType:
        """The SMEM tile the copy reads: the source's dims after its indices."""
        assert isinstance(t := self.src.type, MemRefType)
        shape = t.get_shape()[len(self.indices) :]
        return MemRefType(t.element_type, shape, memory_space=t.memory_space)

    def verify_(self) -> None:
        assert isinstance(buffer_type := self.src.type, MemRefType)
        assert isinstance(tmem_type := self.tmem.type, MemRefType)
        src_type = buffer_type
        # rule: J11
        if memory_space(src_type) != SMEM:
            raise Error(
                "async_copy_smem_to_tmem source must be an SMEM ref",
                note=f"got a ref in {memory_space(src_type)}; copy GMEM to SMEM first "
                "(copy.async_copy)",
            )
        # rule: J11
        if memory_space(tmem_type) != TMEM:
            raise Error(
                "async_copy_smem_to_tmem target must be a TMEM ref",
                note=f"got a ref in {memory_space(tmem_type)}; allocate it with copy.tmem_alloc",
            )
        check_tcgen05(self)
        check_cta_group(self)
        check_tmem_ref(tmem_type)
        # rule: J11
        if src_type.element_type != tmem_type.element_type:
            raise Error(
                f"Expected SMEM element type ({src_type.element_type}) to equal the TMEM "
                f"element type ({tmem_type.element_type})",
                note="tcgen05.cp copies bits: give both refs the same element type, "
                f"{tmem_type.element_type}",
            )
        check_contiguous_smem(buffer_type, self.src)
        check_smem_indices(buffer_type, list(self.indices))
        rank, slots = buffer_type.get_num_dims(), len(self.indices)
        # rule: J12
        if rank - slots != 2:
            extra = [
                f"%{v.name_hint}" if v.name_hint else "an index" for v in self.indices[rank - 2 :]
            ]
            raise Error(
                f"tcgen05.cp reads a 2-D tile (the dims of the source after its indices), got "
                f"{rank - slots} dims of {buffer_type} after {slots} indices",
                note=(
                    f"drop {', '.join(extra)}: index the {rank - 2} leading dims (the slot), "
                    "leaving the tile's rows and its rows of bytes"
                    if extra
                    else f"index the {rank - 2} leading dims (the slot: %buf[%s])"
                )
                if rank >= 2
                else "copy from a 2-D tile",
            )
        src_type = self.tile_type
        if self.metadata is not None:
            check_metadata(self, src_type)
        elif self.scales is not None:
            check_scales(self, src_type)
        shape, multicast = self.shape.data, self.multicast
        cast = None if multicast is None else multicast.data
        # rule: J14
        if shape == TmemCopyShape.S64X128B and cast not in (
            TmemCopyMulticast.WARPX2_01_23,
            TmemCopyMulticast.WARPX2_02_13,
        ):
            raise Error(
                "Shape 64x128b requires multicast warpx2_01_23 or warpx2_02_13 for tcgen05.cp Op",
                note="add multicast warpx2_01_23 or multicast warpx2_02_13",
            )
        # rule: J14
        if shape == TmemCopyShape.S32X128B and cast != TmemCopyMulticast.WARPX4:
            raise Error(
                "Shape 32x128b requires multicast warpx4 for tcgen05.cp Op",
                note="add multicast warpx4",
            )
        # rule: J14
        if shape not in (TmemCopyShape.S64X128B, TmemCopyShape.S32X128B) and cast is not None:
            raise Error(
                "Invalid multicast type for tcgen05.cp Op",
                note=f"shape {shape} takes no multicast: drop it",
            )
        # rule: J12
        if tmem_type.get_shape()[0] != 128:
            raise Error(
                f"TMEM reference must have 128 rows, but got {tmem_type.get_shape()[0]}",
                note="tcgen05.cp writes all 128 lanes",
            )
        have = smem_bytes(src_type.get_shape(), src_type.element_type, 16)
        # rule: J12
        if have != TMEM_COPY_BYTES[shape]:
            raise Error(
                f"SMEM has shape {list(src_type.get_shape())} ({have} bytes), but expected "
                f"{TMEM_COPY_BYTES[shape]} bytes for TMEM copy shape {shape}",
                note="one tcgen05.cp moves exactly one shape's worth of SMEM: resize the source"
                + resized_rows_example(src_type, TMEM_COPY_BYTES[shape]),
            )
        check_described_swizzle(src_type, "tcgen05.cp's SMEM descriptor")
        swizzle = swizzle_of(src_type)
        row_bytes = src_type.get_shape()[-1] * (bitwidth(src_type.element_type) or 8) // 8
        # rule: J12
        if not (row_bytes == 16 and swizzle == 16) and row_bytes != swizzle:
            raise Error(
                f"Tiling does not fit swizzle: SMEM rows of {row_bytes} bytes with swizzle "
                f"{swizzle}",
                note="tcgen05.cp reads 8-row core matrices: give the source rows of 16 bytes "
                "unswizzled, or rows exactly one swizzle span wide "
                f"(#copy.smem<swizzle = {row_bytes}>)",
            )
        check_copy_columns(self, src_type, tmem_type)


SHIFT_COLUMNS = 8
"""The 32-bit columns of the 32-byte element tcgen05.shift moves down in each row."""


@copy_op_definition
class TmemShiftOp(IRDLOperation):
    """
    Shifts TMEM rows down by one lane, asynchronously (`tcgen05.shift.cta_group::N.down`):
    the 32-byte element (8 columns) at a column of every lane but the last moves to the next
    lane; issued by the elected thread, for the CTA's TMEM (`cta_group 2`: the pair's).
    The PTX ISA's tcgen05.shift says nothing of the first lane's element after the shift.

    ```mlir
    copy.tmem_shift %acc[%col] : memref<128x128xf32, #copy.tmem>
    ```
    """

    name = "copy.tmem_shift"

    tmem = operand_def(MemRefType)
    column = operand_def(IndexType)

    cta_group = opt_prop_def(IntegerAttr[I32])

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$tmem `[` $column `]` (`cta_group` $cta_group^)? attr-dict `:` type($tmem)"

    def __init__(
        self,
        tmem: SSAValue | Operation,
        column: SSAValue | Operation,
        cta_group: int | None = None,
    ):
        super().__init__(
            operands=[tmem, column], properties={"cta_group": cta_group_attr(cta_group)}
        )

    def verify_(self) -> None:
        assert isinstance(t := self.tmem.type, MemRefType)
        # rule: J30
        if memory_space(t) != TMEM:
            raise Error(
                f"copy.tmem_shift shifts TMEM rows, got a ref in {memory_space(t)}",
                note="shift a TMEM ref (from copy.tmem_alloc) of type "
                f"memref<{'x'.join(map(str, t.get_shape()))}x{t.element_type}, #copy.tmem>",
            )
        check_tcgen05(self)
        target = enclosing_target(self)
        # rule: A14
        if target is not None and not TCGEN05_SHIFT.has(target):
            raise feature_error(
                self,
                TCGEN05_SHIFT,
                target,
                note="shift the rows with copy.tmem_load and copy.tmem_store, or "
                + retarget_note(TCGEN05_SHIFT),
            )
        check_cta_group(self)
        check_tmem_ref(t)
        # rule: J30
        if t.get_shape()[0] != 128:
            raise Error(
                f"tcgen05.shift moves rows down across all 128 TMEM lanes, but the ref has "
                f"{t.get_shape()[0]} lanes",
                note=f"shift a ref of 128 lanes: memref<128x{t.get_shape()[1]}x{t.element_type}"
                ", #copy.tmem>",
            )
        columns = tmem_columns(t)
        start = constant_int(self.column)
        # rule: J23
        if columns < SHIFT_COLUMNS or (
            start is not None and not 0 <= start <= columns - SHIFT_COLUMNS
        ):
            at = "" if start is None else f" from column {start}"
            raise Error(
                f"tcgen05.shift moves {SHIFT_COLUMNS} TMEM columns (32 bytes){at}, past the "
                f"{columns} columns of the ref",
                note=f"start it at a column in [0, {columns - SHIFT_COLUMNS}]"
                if columns >= SHIFT_COLUMNS
                else "shift a wider ref",
            )
