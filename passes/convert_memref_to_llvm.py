"""Lowers `memref.load` and `memref.store` on static memrefs to address arithmetic and
`llvm.load`/`llvm.store` on the bare pointer the memref lowers to."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects import builtin, llvm, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from copy_dialect.passes.llvm_types import (
    lowered,
    replace_with_casts,
    static_memref,
    to_llvm_type,
)


def element_pointer(
    ref: SSAValue, indices: Sequence[SSAValue], op: Operation, ops: list[Operation]
) -> SSAValue:
    """The address of `ref[indices]`: base + sum(index * stride) elements."""
    assert isinstance(t := ref.type, MemRefType)
    _, strides = static_memref(t, op)
    (base,) = lowered([ref], ops)
    offset: SSAValue | None = None
    for index, stride in zip(lowered(indices, ops), strides, strict=True):
        term = index
        if stride != 1:
            scale = llvm.ConstantOp(IntegerAttr(stride, i64), i64)
            mul = llvm.MulOp(index, scale.result)
            ops += [scale, mul]
            term = mul.res
        if offset is None:
            offset = term
        else:
            add = llvm.AddOp(offset, term)
            ops.append(add)
            offset = add.res
    if offset is None:
        return base
    element = to_llvm_type(t.element_type)
    assert isinstance(ptr_type := base.type, llvm.LLVMPointerType)
    gep = llvm.GEPOp.from_mixed_indices(base, [offset], element, result_type=ptr_type)
    ops.append(gep)
    return gep.result


class ConvertLoad(RewritePattern):
    """`memref.load %m[%i, %j]` -> `llvm.getelementptr` + `llvm.load`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        ptr = element_pointer(op.memref, op.indices, op, ops)
        load = llvm.LoadOp(ptr, to_llvm_type(op.res.type))
        ops.append(load)
        replace_with_casts(rewriter, op, ops, load.results)


class ConvertStore(RewritePattern):
    """`memref.store %v, %m[%i, %j]` -> `llvm.getelementptr` + `llvm.store`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        ptr = element_pointer(op.memref, op.indices, op, ops)
        (value,) = lowered([op.value], ops)
        ops.append(llvm.StoreOp(value, ptr))
        rewriter.replace(op, ops, [])


class ConvertMemrefToLLVMPass(ModulePass):
    """Lowers `memref.load`/`memref.store` on static memrefs to `llvm`."""

    name = "convert-memref-to-llvm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    ConvertLoad(),  # memref.load
                    ConvertStore(),  # memref.store
                ]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
