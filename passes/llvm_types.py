"""Type conversion shared by the passes that lower to the llvm dialect.

Memrefs lower to bare pointers (the lowering takes static shapes only): GMEM to
`!llvm.ptr<1>`, SMEM to `!llvm.ptr<3>`, TMEM to `!llvm.ptr<6>`; `index` to `i64`; a barrier
group to the `!llvm.ptr<3>` of its first mbarrier; a tensor map in global memory to the
generic `!llvm.ptr` of its 128 bytes; signed and unsigned integers, and vectors
of them, to signless ones. A pass that converts some ops bridges the values it does not own with
`builtin.unrealized_conversion_cast`, which `reconcile-unrealized-casts` removes at the end.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import builtin, llvm
from xdsl.dialects.builtin import (
    IndexType,
    IntAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from copy_dialect import ops as copy
from copy_dialect.errors import CopyVerifyException
from passes import llvm_build

GLOBAL, SHARED, TENSOR = 1, 3, 6
"""NVPTX address spaces of GMEM, SMEM and TMEM."""


def ptr(space: int | None = None) -> llvm.LLVMPointerType:
    """`!llvm.ptr` in the generic address space, or `!llvm.ptr<space>`."""
    return llvm.LLVMPointerType(NoneAttr() if space is None else IntAttr(space))


def address_space(t: MemRefType) -> int:
    space = copy.memory_space(t)
    return {copy.GMEM: GLOBAL, copy.SMEM: SHARED, copy.TMEM: TENSOR}[space]


def to_llvm_type(t: Attribute) -> Attribute:
    """The llvm-dialect type a value of type `t` lowers to."""
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, IntegerType):
        return IntegerType(t.width.data)
    if isinstance(t, MemRefType):
        return ptr(address_space(t))
    if isinstance(t, copy.BarrierType):
        return ptr(SHARED)
    if isinstance(t, copy.TensorMapType):
        return ptr()  # the generic address of the map in global memory
    if isinstance(t, VectorType) and isinstance(t.element_type, IntegerType):
        return VectorType(to_llvm_type(t.element_type), t.get_shape())
    return t


def is_legal(t: Attribute) -> bool:
    return to_llvm_type(t) == t


def cast(value: SSAValue, to_type: Attribute, ops: list[Operation]) -> SSAValue:
    """`value` as `to_type`, appending the cast (if one is needed) to `ops`. A value that a
    cast made from a `to_type` value is that value: the cast back is not built (it and its
    pair are what reconcile-unrealized-casts removes)."""
    if value.type == to_type:
        return value
    owner = value.owner
    if (
        isinstance(owner, builtin.UnrealizedConversionCastOp)
        and len(owner.inputs) == 1
        and len(owner.outputs) == 1
        and owner.inputs[0].type == to_type
    ):
        return owner.inputs[0]
    cast_op = llvm_build.unrealized_cast(value, to_type)
    ops.append(cast_op)
    return cast_op.results[0]


def lowered(values: Sequence[SSAValue], ops: list[Operation]) -> list[SSAValue]:
    """Each value cast to its llvm-dialect type."""
    return [cast(v, to_llvm_type(v.type), ops) for v in values]


def replace_with_casts(
    rewriter: PatternRewriter, op: Operation, ops: list[Operation], results: Sequence[SSAValue]
) -> None:
    """Replaces `op` by `ops`, casting each new result back to the old result's type."""
    new_results = [cast(new, old.type, ops) for new, old in zip(results, op.results, strict=True)]
    rewriter.replace(op, ops, new_results)


def convert_block_arguments(rewriter: PatternRewriter, block: Block) -> None:
    """Gives the block's arguments their llvm-dialect types; the old users see a cast."""
    for arg in list(block.args):
        new_type = to_llvm_type(arg.type)
        if new_type == arg.type:
            continue
        old_type = arg.type
        new_arg = rewriter.replace_value_with_new_type(arg, new_type)
        if new_arg.uses:
            back = builtin.UnrealizedConversionCastOp.get([new_arg], [old_type])
            rewriter.insert(back, InsertPoint.at_start(block))
            rewriter.replace_uses_with_if(
                new_arg, back.results[0], lambda use, back=back: use.operation is not back
            )


def static_memref(t: MemRefType, op: Operation) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shape and element strides of a memref the lowering supports (static ones)."""
    shape = t.get_shape()
    layout = t.layout
    if isinstance(layout, builtin.StridedLayoutAttr):
        strides = tuple(s.data if isinstance(s, builtin.IntAttr) else -1 for s in layout.strides)
    else:
        strides = tuple(
            _prod(shape[i + 1 :]) if all(d >= 0 for d in shape[i + 1 :]) else -1
            for i in range(len(shape))
        )
    if any(d < 0 for d in shape) or any(s < 0 for s in strides):
        error = CopyVerifyException(
            f"'{op.name}' op: the lowering supports memrefs of static shape and strides, got {t}",
            note="give every dimension and stride a size (dynamic shapes are not lowered yet)",
        )
        error.op = op  # type: ignore[attr-defined]  # copy-opt reports it at the op
        raise error
    return shape, strides


def _prod(values: Sequence[int]) -> int:
    result = 1
    for v in values:
        result *= v
    return result
