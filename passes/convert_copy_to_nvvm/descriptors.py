"""Lowers `copy.matrix_descriptor` to LLVM integer arithmetic on the slot's SMEM address:
`((addr & 0x3FFFF) >> 4) | fields`, the fields (leading and stride byte offsets, base offset,
swizzle) one i64 constant of the buffer's type (`copy_dialect.descriptors`). The address is
the slot's `!llvm.ptr<3>` (the leading dims the indices pick, as a DSMEM or TMA slot),
converted to its 32-bit shared-window offset.

`copy.mma_instruction_descriptor` lowers to one i32 constant: every field of the tcgen05.mma
instruction descriptor is a property (`copy_dialect.instruction_descriptor`)."""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i32, i64
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from copy_dialect import descriptors
from copy_dialect import ops as copy
from passes.convert_copy_to_nvvm.dsmem import slot_address
from passes.convert_copy_to_nvvm.emit import Emit
from passes.llvm_types import replace_with_casts


class LowerMatrixDescriptor(RewritePattern):
    """`copy.matrix_descriptor` -> the slot's address >> 4, or-ed with the constant fields."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.MatrixDescriptorOp, rewriter: PatternRewriter, /):
        e = Emit()
        address = e.resize(e.ptrtoint(slot_address(e, op.smem, list(op.indices)), i32), i64)
        masked = e.binary(llvm.AndOp, address, descriptors.ADDRESS_MASK)
        start = e.binary(llvm.LShrOp, masked, 4)
        result = e.binary(llvm.OrOp, start, op.descriptor.constant_bits)
        replace_with_casts(rewriter, op, e.ops, [result])


class LowerMmaInstructionDescriptor(RewritePattern):
    """`copy.mma_instruction_descriptor` -> `llvm.mlir.constant` of the encoded fields."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.MmaInstructionDescriptorOp, rewriter: PatternRewriter, /):
        e = Emit()
        replace_with_casts(rewriter, op, e.ops, [e.const(op.fields.encoded, i32)])
