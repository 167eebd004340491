"""TMEM views: `copy.tmem_slice`, a ref to a constant column range of a TMEM ref (rule J7:
TMEM is sliced, never indexed). A TMEM address is lane << 16 | column; the slice adds its
column offset and keeps every lane, since a warp's tcgen05.ld/st reaches the lanes of its
quarter of the warpgroup (warp % 4) * 32 from the ref's lane 0, and tcgen05.cp writes all 128
lanes: a lane offset has no access that could use it. The accesses of a slice stay within it
(J23), so within its parent's allocation."""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, MemRefType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import IRDLOperation, operand_def, prop_def, result_def

from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.memory import TMEM, bitwidth, memory_space
from copy_dialect.tmem import check_tcgen05, check_tmem_ref, tmem_columns
from copy_dialect.verification import copy_op_definition

COLUMN_BITS = 32
"""A TMEM column is a 32-bit cell of each lane: a slice starts and ends on one."""


@copy_op_definition
class TmemSliceOp(IRDLOperation):
    """
    A view of the columns of a TMEM ref from a constant column (in the ref's elements): the
    same lanes and element type, fewer columns (`tcgen05` addresses: lane << 16 | column).
    Loads, stores, copies and shifts take it as they take an allocation; it is not freed.

    ```mlir
    %half = copy.tmem_slice %acc[64]
        : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    ```
    """

    name = "copy.tmem_slice"

    tmem = operand_def(MemRefType)
    column = prop_def(IntegerAttr[I64])

    result = result_def(MemRefType)

    assembly_format = "$tmem `[` $column `]` attr-dict `:` type($tmem) `->` type($result)"

    def __init__(self, tmem: SSAValue | Operation, column: int, result_type: MemRefType):
        super().__init__(
            operands=[tmem],
            properties={"column": IntegerAttr(column, i64)},
            result_types=[result_type],
        )

    def verify_(self) -> None:
        assert isinstance(src := self.tmem.type, MemRefType)
        assert isinstance(dst := self.result.type, MemRefType)
        # rule: J7
        if memory_space(src) != TMEM or memory_space(dst) != TMEM:
            raise Error(
                f"copy.tmem_slice views TMEM, got a {memory_space(src)} ref and a "
                f"{memory_space(dst)} result",
                note="slice a TMEM ref into a TMEM ref (#copy.tmem); index SMEM or GMEM with "
                "memref.subview",
            )
        check_tcgen05(self)
        check_tmem_ref(src)
        check_tmem_ref(dst)
        (lanes, width), (slice_lanes, slice_width) = src.get_shape(), dst.get_shape()
        # rule: J7
        if dst.element_type != src.element_type or slice_lanes != lanes:
            raise Error(
                "TMEM can only be sliced, not indexed: a slice keeps the ref's lanes and "
                f"element type ({lanes} x {src.element_type}), got {slice_lanes} x "
                f"{dst.element_type}",
                note="slice columns only: memref<"
                f"{lanes}x{slice_width}x{src.element_type}, #copy.tmem> (a warp's tcgen05.ld/st "
                "reaches its lane quarter from the ref's lane 0, so a lane offset has no use)",
            )
        start, bits = self.column.value.data, bitwidth(src.element_type) or 32
        # rule: J7
        if start < 0 or start + slice_width > width:
            raise Error(
                f"the slice's columns [{start}, {start + slice_width}) are not within the "
                f"{width} columns of the ref",
                note=f"start the slice at a column in [0, {max(0, width - slice_width)}]"
                if slice_width <= width
                else f"slice at most {width} columns",
            )
        per_column = COLUMN_BITS // bits
        # rule: J7
        if start * bits % COLUMN_BITS or slice_width * bits % COLUMN_BITS:
            raise Error(
                f"a TMEM slice starts and ends on a 32-bit column, but [{start}, "
                f"{start + slice_width}) of {src.element_type} ({per_column} to a column) "
                "does not",
                note=f"start at and take a multiple of {per_column} elements, e.g. "
                f"[{start - start % per_column}]",
            )

    @property
    def first_column(self) -> int:
        """The 32-bit column of the parent ref the slice starts at."""
        assert isinstance(t := self.tmem.type, MemRefType)
        return self.column.value.data * (bitwidth(t.element_type) or 32) // COLUMN_BITS


def slice_columns(op: TmemSliceOp) -> tuple[int, int]:
    """(first column in the parent, columns): the slice's 32-bit columns."""
    assert isinstance(t := op.result.type, MemRefType)
    return op.first_column, tmem_columns(t)
