"""Lowers the 1-D `vector` ops threads use on their tiles: `vector.load` and `vector.store`
(one wide `ld`/`st`, e.g. `ld.shared.v4.f32`), `vector.broadcast` of a
scalar (a splat), and `vector.extract` / `vector.insert` of one element of a 1-D vector
(`extractelement` / `insertelement`, the position static or an index).

A wide access is only as aligned as its address is known to be: the alignment given to LLVM
is the largest power of two that provably divides the byte offset (`known_multiple` of each
index, from constants, `muli`, `addi`, `remui` by a constant and `scf.for` induction
variables), capped by the vector's size and the base's alignment: an SMEM buffer's, or a GMEM
array's that `memref.assume_alignment` promises (the runtime checks it: the kernel's ABI asks
for it); in any other GMEM array only the element's. A smaller alignment is still correct:
LLVM then splits the access. It runs before `convert-scf-to-cf`, while loops still say their
bounds and steps.

In swizzled SMEM an access is lowered where it stays inside one 16-byte unit (rule SV1,
`verify_common.unit_problem`: 4, 8 or 16 bytes at an offset that is a known multiple of its
size): a swizzle keeps a unit's bytes together, so the access is contiguous at the swizzled
place of its first element (`element_pointer`, the layout's XOR), and is as aligned as its
size."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import builtin, llvm, memref, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    MemRefType,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from copy_dialect import layout, upstream_llvm
from copy_dialect import ops as copy
from copy_dialect.verify_common import offset_multiple, unit_problem
from passes import llvm_build
from passes.convert_copy_to_nvvm.emit import fail
from passes.convert_memref_to_llvm import element_pointer
from passes.llvm_types import lowered, replace_with_casts, to_llvm_type
from passes.rewrite import apply_patterns


def access_alignment(
    op: Operation, ref: SSAValue, indices: list[SSAValue], vtype: VectorType
) -> int:
    """The alignment in bytes a `vector.load`/`store` of `vtype` at `ref[indices]` is known to
    have (see the module's docstring)."""
    assert isinstance(t := ref.type, MemRefType)
    bits = copy.bitwidth(t.element_type)
    assert bits is not None
    elem = bits // 8
    size = elem * vtype.get_shape()[0]
    if copy.memory_space(t) == copy.SMEM:
        base = copy.smem_alignment(copy.swizzle_of(t))
    elif isinstance(assume := ref.owner, memref.AssumeAlignmentOp):
        base = assume.alignment.value.data
    else:
        return elem
    offset = offset_multiple(t, indices) or 1 << 30
    align = min(size, base)
    while align > elem and offset % align:
        align //= 2
    return align


def _check(op: Operation, ref: SSAValue, indices: list[SSAValue], vtype: VectorType) -> None:
    assert isinstance(t := ref.type, MemRefType)
    if vtype.get_num_dims() != 1:
        raise fail(op, f"only 1-D vectors are lowered, got {vtype}")
    bits = copy.bitwidth(t.element_type)
    if bits is None or bits % 8:
        raise fail(op, f"cannot address vectors of {t.element_type}: they are not whole bytes")
    swizzle = copy.swizzle_of(t)
    if copy.memory_space(t) == copy.SMEM and swizzle != layout.UNSWIZZLED:
        # Rule SV1 (analysis/kernel/vectors.py) holds in a verified module; a pass run on
        # IR that skipped verification gets the same words here.
        problem = unit_problem(t, indices, bits // 8 * vtype.get_shape()[0])
        if problem is not None:
            raise fail(
                op,
                f"cannot lower a vector access of {swizzle}B-swizzled SMEM that may cross a "
                f"16-byte unit ({problem}) (rule SV1): access at most 16 bytes at an "
                "innermost index that is a multiple of the vector's length, or use "
                "memref.load/store",
            )
    strides = copy.element_strides(t)
    if not strides or strides[-1] != 1:
        raise fail(op, f"a vector access needs a contiguous innermost dimension, got {t}")


class ConvertVectorLoad(RewritePattern):
    """`vector.load %m[...]` -> `llvm.load <N x T>` with the alignment it is known to have."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.LoadOp, rewriter: PatternRewriter, /):
        vtype = op.result.type
        assert isinstance(vtype, VectorType)
        _check(op, op.base, list(op.indices), vtype)
        ops: list[Operation] = []
        address = element_pointer(op.base, list(op.indices), op, ops)
        align = access_alignment(op, op.base, list(op.indices), vtype)
        load = llvm.LoadOp(address, to_llvm_type(vtype), alignment=align)
        ops.append(load)
        replace_with_casts(rewriter, op, ops, load.results)


class ConvertVectorStore(RewritePattern):
    """`vector.store %v, %m[...]` -> `llvm.store <N x T>` with its known alignment."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.StoreOp, rewriter: PatternRewriter, /):
        vtype = op.vector.type
        assert isinstance(vtype, VectorType)
        _check(op, op.base, list(op.indices), vtype)
        ops: list[Operation] = []
        address = element_pointer(op.base, list(op.indices), op, ops)
        (value,) = lowered([op.vector], ops)
        align = access_alignment(op, op.base, list(op.indices), vtype)
        ops.append(llvm.StoreOp(value, address, alignment=align))
        rewriter.replace(op, ops, [])


class ConvertBroadcast(RewritePattern):
    """`vector.broadcast %scalar` -> `insertelement` into lane 0 and a zero-mask shuffle."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.BroadcastOp, rewriter: PatternRewriter, /):
        vtype = op.vector.type
        assert isinstance(vtype, VectorType)
        if isinstance(op.source.type, VectorType) or vtype.get_num_dims() != 1:
            raise fail(op, "only the broadcast of a scalar to a 1-D vector is lowered")
        ops: list[Operation] = []
        (scalar,) = lowered([op.source], ops)
        llvm_type = to_llvm_type(vtype)
        undef = llvm.UndefOp(llvm_type)
        zero = llvm.ConstantOp(IntegerAttr(0, i32), i32)
        first = llvm.InsertElementOp(undef.res, scalar, zero.result)
        lanes = vtype.get_shape()[0]
        mask = DenseArrayBase.from_list(i32, [0] * lanes)
        splat = llvm.ShuffleVectorOp.create(
            operands=[first.res, undef.res], properties={"mask": mask}, result_types=[llvm_type]
        )
        ops += [undef, zero, first, splat]
        replace_with_casts(rewriter, op, ops, splat.results)


def _position(op: vector.ExtractOp | vector.InsertOp, ops: list[Operation]) -> SSAValue:
    """The i64 position of the element a 1-D `vector.extract`/`insert` names."""
    (position,) = op.get_mixed_position()
    if isinstance(position, int):
        ops.append(const := llvm_build.constant(position, i64))
        return const.result
    (value,) = lowered([position], ops)
    return value


def _check_element(op: Operation, vtype: Attribute, element: Attribute) -> None:
    if not isinstance(vtype, VectorType) or vtype.get_num_dims() != 1:
        raise fail(op, f"only the element of a 1-D vector is lowered, got {vtype}")
    if isinstance(element, VectorType):
        raise fail(op, f"only one element is lowered, got {element}")


class ConvertExtract(RewritePattern):
    """`vector.extract %v[i]` of a 1-D vector -> `llvm.extractelement`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.ExtractOp, rewriter: PatternRewriter, /):
        _check_element(op, op.vector.type, op.result.type)
        ops: list[Operation] = []
        (source,) = lowered([op.vector], ops)
        new = upstream_llvm.ExtractElementOp(source, _position(op, ops))
        ops.append(new)
        replace_with_casts(rewriter, op, ops, new.results)


class ConvertInsert(RewritePattern):
    """`vector.insert %s, %v[i]` into a 1-D vector -> `llvm.insertelement`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.InsertOp, rewriter: PatternRewriter, /):
        _check_element(op, op.dest.type, op.source.type)
        ops: list[Operation] = []
        scalar, dest = lowered([op.source, op.dest], ops)
        new = llvm.InsertElementOp(dest, scalar, _position(op, ops))
        ops.append(new)
        replace_with_casts(rewriter, op, ops, new.results)


class ConvertVectorToLLVMPass(ModulePass):
    """Lowers the 1-D `vector` ops (load, store, broadcast, extract, insert)."""

    name = "convert-vector-to-llvm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        apply_patterns(
            op,
            [
                ConvertVectorLoad(),  # vector.load
                ConvertVectorStore(),  # vector.store
                ConvertBroadcast(),  # vector.broadcast
                ConvertExtract(),  # vector.extract
                ConvertInsert(),  # vector.insert
            ],
        )
