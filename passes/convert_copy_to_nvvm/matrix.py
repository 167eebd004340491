"""Lowers the thread-collective matrix copies: `copy.ldmatrix` -> `nvvm.ldmatrix`,
`copy.stmatrix` -> `nvvm.stmatrix` (PTX `ldmatrix`/`stmatrix.sync.aligned`).

Each thread's row address is the element of the buffer at the op's indices, as
convert-memref-to-llvm addresses a thread's `memref.load` (`element_pointer`: in swizzled
SMEM, the layout's XOR of the 16-byte unit, `copy_dialect.layout`). The registers go between
the op's vector and the i32 (or struct of i32) NVVM takes: element by element, then a bitcast
to the vector's element type (`vector<8xf16>` is four registers' halves)."""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseArrayBase, VectorType, i32, i64
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from copy_dialect import matrix
from copy_dialect import ops as copy
from copy_dialect.upstream_llvm import ExtractElementOp
from passes import convert_memref_to_llvm, nvvm
from passes.convert_copy_to_nvvm.emit import Emit
from passes.llvm_types import lowered, replace_with_casts, to_llvm_type

SHAPE_MN = {
    copy.MatrixShape.M8N8: (8, 8),
    copy.MatrixShape.M16N16: (16, 16),
    copy.MatrixShape.M16N8: (16, 8),
}
"""NVVM's `#nvvm.ld_st_matrix_shape` of each shape."""


def _form(op: copy.LdmatrixOp | copy.StmatrixOp) -> dict[str, object]:
    """The nvvm op's layout, shape and element type."""
    shape = op.matrix_shape
    if shape == copy.MatrixShape.M8N8:
        elt = "b16"
    elif isinstance(op, copy.LdmatrixOp) and op.format is not None:
        elt = f"b8x16.{op.format.data}"
    else:
        elt = "b8"
    layout = "col" if op.trans is not None else "row"
    return {"layout": layout, "shape": SHAPE_MN[shape], "elt": elt}


def _registers(op: copy.LdmatrixOp | copy.StmatrixOp) -> VectorType:
    return VectorType(i32, [matrix.registers(op.matrix_shape, op.matrices)])


def row_address(op: copy.LdmatrixOp | copy.StmatrixOp, e: Emit) -> SSAValue:
    """The thread's row: the address of the buffer's element at the op's indices, as
    convert-memref-to-llvm addresses a thread's `memref.load` (which imports this package:
    the module is read at the call)."""
    return convert_memref_to_llvm.element_pointer(op.smem, list(op.indices), op, e.ops)


class LowerLdmatrix(RewritePattern):
    """`copy.ldmatrix` -> `nvvm.ldmatrix` at the thread's row, its registers into a vector."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.LdmatrixOp, rewriter: PatternRewriter, /):
        e = Emit()
        address = row_address(op, e)
        load = e(nvvm.LdMatrixOp(address, num=op.matrices, **_form(op)))  # type: ignore[arg-type]
        registers = _registers(op)
        count = registers.get_shape()[0]
        vector = e(llvm.UndefOp(registers)).results[0]
        for i in range(count):
            if count == 1:
                value = load.results[0]
            else:
                value = e(
                    llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [i]), load.results[0], i32)
                ).results[0]
            vector = e(llvm.InsertElementOp(vector, value, e.const(i, i64))).results[0]
        result = e.bitcast(vector, to_llvm_type(op.result.type))
        replace_with_casts(rewriter, op, e.ops, [result])


class LowerStmatrix(RewritePattern):
    """`copy.stmatrix` -> `nvvm.stmatrix` at the thread's row, from the vector's registers."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.StmatrixOp, rewriter: PatternRewriter, /):
        e = Emit()
        address = row_address(op, e)
        (value,) = lowered([op.value], e.ops)
        registers = _registers(op)
        vector = e.bitcast(value, registers)
        sources: list[SSAValue] = [
            e(ExtractElementOp(vector, e.const(i, i64))).results[0]
            for i in range(registers.get_shape()[0])
        ]
        e(nvvm.StMatrixOp(address, sources, **_form(op)))  # type: ignore[arg-type]
        rewriter.replace(op, e.ops, [])
