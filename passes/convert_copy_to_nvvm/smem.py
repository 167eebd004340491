"""Lowers `copy.alloc_smem`: each buffer is its place in the kernel's shared-memory arena
(laid out by the dialect's `arena_layout`); and the byte offset of the slot of a buffer that
a copy's SMEM indices pick (`slot_offset`), for the copy lowerings."""

from __future__ import annotations

from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from copy_dialect import ops as copy
from passes.convert_copy_to_nvvm.emit import Arith, Emit
from passes.convert_copy_to_nvvm.kernel import KernelPattern
from passes.llvm_types import cast, lowered


class LowerAllocSmem(KernelPattern):
    """`copy.alloc_smem` -> its address in the kernel's shared-memory arena."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.AllocSmemOp, rewriter: PatternRewriter, /):
        e = Emit()
        address = self.kernel(op).arena_address(e, op)
        rewriter.replace(op, e.ops, [cast(address, op.result.type, e.ops)])


def slot_offset(e: Emit, g: copy.CopyGeometry) -> SSAValue | int:
    """Byte offset of the slot the SMEM indices pick: the layout's linear offset of the
    slot's first element. A slot starts at a multiple of the swizzle period (TR11),
    where the swizzle leaves offsets in place."""
    strides = copy.smem_strides(g.smem_type.get_shape(), g.element_type, g.swizzle_bytes)
    indices = lowered(g.smem_indices, e.ops)
    offset: Arith | int = 0
    for index, stride in zip(indices, strides[: len(indices)], strict=True):
        offset = Arith(e, index) * stride + offset
    return offset if isinstance(offset, int) else offset.value
