"""Lowers `memref.load` and `memref.store` to address arithmetic and `llvm.load`/`llvm.store`
on the bare pointer the memref lowers to, a `memref.atomic_rmw` whose result is unused to
`nvvm.red.global` (so is a `memref.generic_atomic_rmw` whose body is PTX's wrapping `inc` or
`dec`, `copy_dialect.upstream_memref`), and `memref.dim` to the size. A dynamic-shape GMEM
ref's sizes (and the strides of a row-major one) are the kernel's size parameters
(`convert_copy_to_nvvm.dynamic_shapes`); a view made in the kernel (`memref.reinterpret_cast`
of a GMEM array) has its cast's sizes and strides, and lowers to its source's pointer plus
the cast's offset, after the ops that address it.

A swizzled SMEM buffer (`#copy.smem<swizzle = S>`) is addressed with the layout TMA writes
(`copy_dialect.layout`: rows padded to the span, 16-byte units XOR-permuted); every other
memref with its element strides."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects import builtin, llvm, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter

from copy_dialect import layout
from copy_dialect import ops as copy
from copy_dialect.upstream_memref import GenericAtomicRMWOp, wrapping_kind
from copy_dialect.verify_common import constant_int
from passes import nvvm
from passes.convert_copy_to_nvvm.dynamic_shapes import check_size, ref_layout, ref_sizes, size_value
from passes.convert_copy_to_nvvm.emit import Arith, Emit, fail
from passes.llvm_types import (
    cast,
    lowered,
    replace_with_casts,
    static_memref,
    to_llvm_type,
)
from passes.rewrite import apply_patterns


def element_pointer(
    ref: SSAValue, indices: Sequence[SSAValue], op: Operation, ops: list[Operation]
) -> SSAValue:
    """The address of `ref[indices]`: base + sum(index * stride) elements, or, in swizzled
    SMEM, base + the layout's byte offset. A dynamic-shape ref's strides come from the
    kernel's size parameters (`convert_copy_to_nvvm.dynamic_shapes`)."""
    assert isinstance(t := ref.type, MemRefType)
    e = Emit(ops)
    shape, strides = ref_layout(ref, op, e)
    bits = copy.bitwidth(t.element_type)
    if copy.memory_space(t) == copy.SMEM and (bits is None or bits % 8):
        # SMEM buffers pack sub-byte elements (layout.size_bytes), while an LLVM load or
        # store of an i1/i4 addresses one byte per element: it would run past the buffer.
        raise fail(
            op,
            f"cannot address elements of type {t.element_type} in SMEM from threads: SMEM "
            "buffers pack sub-byte elements, and a thread access addresses whole bytes",
        )
    swizzle = copy.swizzle_of(t)
    if swizzle != layout.UNSWIZZLED:
        return swizzled_pointer(ref, indices, static_memref(t, op)[0], swizzle, op, ops)
    (base,) = lowered([ref], ops)
    offset: SSAValue | None = None
    for index, stride in zip(lowered(indices, ops), strides, strict=True):
        term = e.mul(index, stride)
        offset = term if offset is None else e.add(offset, term)
    if offset is None:
        return base
    element = to_llvm_type(t.element_type)
    assert isinstance(ptr_type := base.type, llvm.LLVMPointerType)
    gep = llvm.GEPOp.from_mixed_indices(base, [offset], element, result_type=ptr_type)
    ops.append(gep)
    return gep.result


def swizzled_pointer(
    ref: SSAValue,
    indices: Sequence[SSAValue],
    shape: Sequence[int],
    swizzle: int,
    op: Operation,
    ops: list[Operation],
) -> SSAValue:
    assert isinstance(t := ref.type, MemRefType)
    bits = copy.bitwidth(t.element_type)
    if bits is None or bits % 8:
        raise fail(
            op,
            f"cannot address elements of type {t.element_type} in swizzled SMEM: the swizzled "
            "layout places whole bytes",
        )
    if not isinstance(t.layout, builtin.NoneAttr):
        raise fail(op, f"swizzled SMEM is row-major, got the layout {t.layout}")
    e = Emit(ops)
    (base,) = lowered([ref], ops)
    offset = layout.element_offset(
        [Arith(e, i) for i in lowered(indices, ops)], shape, bits, swizzle
    )
    return e.byte_offset(base, offset if isinstance(offset, int) else offset.value)


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


ATOMIC_RMW_RED = {0: "add", 1: "add", 2: "and", 6: "max", 7: "max", 10: "min", 11: "min"}
ATOMIC_RMW_RED |= {14: "or", 15: "xor"}
"""memref.atomic_rmw's kinds (upstream's AtomicRMWKind numbers) that a `red.global` does."""

SIGNED_KINDS = (6, 10)
"""maxs, mins: compare signed (the others of ATOMIC_RMW_RED unsigned, or bitwise)."""


def red_type(kind: int, element: Attribute) -> str | None:
    """The `red.global` type of a `memref.atomic_rmw` of `kind` on `element`, if any."""
    if isinstance(element, Float32Type | Float64Type | Float16Type):
        if kind != 0:
            return None
        return {16: "noftz.f16", 32: "f32", 64: "f64"}[element.bitwidth]
    if not isinstance(element, IntegerType) or element.width.data not in (32, 64) or kind == 0:
        return None
    width = element.width.data
    if kind in (2, 14, 15):
        return f"b{width}"
    return f"{'s' if kind in SIGNED_KINDS else 'u'}{width}"


class ConvertDim(RewritePattern):
    """`memref.dim %m, %c` -> the size: a constant where it is static, else the kernel's
    size parameter (`convert_copy_to_nvvm.dynamic_shapes`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DimOp, rewriter: PatternRewriter, /):
        t = op.source.type
        dim = constant_int(op.index)
        if not isinstance(t, MemRefType):
            raise fail(op, f"expected a ranked memref, got {t}")
        if dim is None or not 0 <= dim < t.get_num_dims():
            found = "an index computed at run time" if dim is None else str(dim)
            raise fail(
                op,
                f"expected a constant dim index below the rank {t.get_num_dims()} of {t}, got "
                f"{found}: each size is a parameter of its own; take the dim from an "
                "arith.constant",
            )
        ops: list[Operation] = []
        e = Emit(ops)
        sizes = ref_sizes(op.source, op, e)
        check_size(sizes[dim], dim, t, op)
        value = size_value(sizes, dim, e)
        replace_with_casts(rewriter, op, ops, [value])


class ConvertAssumeAlignment(RewritePattern):
    """`memref.assume_alignment %m, N` -> `%m`: the same pointer. The promise was read
    before: the kernel's ABI asks the runtime for the alignment (`dynamic_shapes.
    kernel_shapes`) and convert-vector-to-llvm gives it to the wide accesses."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AssumeAlignmentOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, [], [op.memref])


def _red(ref: SSAValue) -> type[nvvm.RedGlobalOp | nvvm.RedSharedOp]:
    """The thread reduction into `ref`'s memory: `red.shared` into SMEM, else `red.global`."""
    assert isinstance(t := ref.type, MemRefType)
    return nvvm.RedSharedOp if copy.memory_space(t) == copy.SMEM else nvvm.RedGlobalOp


class ConvertAtomicRMW(RewritePattern):
    """`memref.atomic_rmw` whose result is unused -> `red.global.<op>.<type>` (into SMEM:
    `red.shared`) at the element's address (the thread atomics that stand in for a TMA
    reduction, or for a reduction into a peer CTA's SMEM)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AtomicRMWOp, rewriter: PatternRewriter, /):
        kind = op.kind.value.data
        red = ATOMIC_RMW_RED.get(kind)
        rtype = None if red is None else red_type(kind, op.value.type)
        if red is None or rtype is None:
            raise fail(op, f"no red.global for atomic_rmw kind {kind} on {op.value.type}")
        if op.result.uses:
            raise fail(op, "only an atomic_rmw whose result is unused is lowered (red.global)")
        ops: list[Operation] = []
        ptr = element_pointer(op.memref, op.indices, op, ops)
        (value,) = lowered([op.value], ops)
        ops.append(_red(op.memref)(red, rtype, ptr, value))
        rewriter.replace(op, ops, [None])


class ConvertGenericAtomicRMW(RewritePattern):
    """`memref.generic_atomic_rmw` whose result is unused and whose body is PTX's wrapping
    increment (`upstream_memref.wrapping_kind`: what copy-legalize writes for a TMA `inc` or
    `dec` reduction) -> `red.global.{inc,dec}.u32` at the element's address."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericAtomicRMWOp, rewriter: PatternRewriter, /):
        found = wrapping_kind(op)
        if found is None:
            raise fail(
                op,
                "only a generic_atomic_rmw whose body is the wrapping increment of an i32 "
                "(red.global.inc.u32 / red.global.dec.u32) is lowered",
            )
        if op.result.uses:
            raise fail(op, "only a generic_atomic_rmw whose result is unused is lowered (red)")
        kind, value = found
        ops: list[Operation] = []
        ptr = element_pointer(op.memref, op.indices, op, ops)
        (lowered_value,) = lowered([value], ops)
        ops.append(_red(op.memref)(kind, "u32", ptr, lowered_value))
        rewriter.replace(op, ops, [None])


class CollectViews(RewritePattern):
    """Notes each `memref.reinterpret_cast` the walk meets, for `lower_view` after it: the ops
    that address a view read its sizes and strides from its cast, so the cast goes last."""

    def __init__(self) -> None:
        self.views: list[memref.ReinterpretCastOp] = []

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.ReinterpretCastOp, rewriter: PatternRewriter, /):
        self.views.append(op)


def lower_view(op: memref.ReinterpretCastOp) -> None:
    """`memref.reinterpret_cast` of a GMEM array (a view made in the kernel,
    `copy_dialect.memory.gmem_view`) -> its base: `llvm.getelementptr` of the source's
    pointer by the cast's offset in elements. Its sizes and strides are the cast's operands,
    which the lowerings of the ops that address the view read (`dynamic_shapes.ref_layout`)."""
    if copy.gmem_view(op.result) is None:
        raise fail(
            op,
            f"expected a view of a GMEM array, got a cast to {op.result.type}: only GMEM "
            "views are lowered (a bare pointer plus the offset); address SMEM buffers "
            "themselves",
        )
    ops: list[Operation] = []
    (base,) = lowered([op.source], ops)
    (offset,) = op.static_offsets.get_values()
    if offset == DYNAMIC_INDEX:
        (offset,) = lowered(op.offsets, ops)
    if offset != 0:
        assert isinstance(t := op.result.type, MemRefType)
        element = to_llvm_type(t.element_type)
        gep = llvm.GEPOp.from_mixed_indices(base, [offset], element, result_type=base.type)
        ops.append(gep)
        base = gep.result
    Rewriter.replace_op(op, ops, [cast(base, op.result.type, ops)])


class ConvertMemrefToLLVMPass(ModulePass):
    """Lowers `memref.load`/`memref.store` (and unused `memref.atomic_rmw`, `memref.dim`)
    to `llvm` (and `nvvm.red.global`), drops `memref.assume_alignment`, then the GMEM views
    (`memref.reinterpret_cast`)."""

    name = "convert-memref-to-llvm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        views = CollectViews()
        apply_patterns(
            op,
            [
                ConvertLoad(),  # memref.load
                ConvertStore(),  # memref.store
                ConvertAtomicRMW(),  # memref.atomic_rmw (result unused)
                ConvertDim(),  # memref.dim
                ConvertAssumeAlignment(),  # memref.assume_alignment
                ConvertGenericAtomicRMW(),  # memref.generic_atomic_rmw inc/dec (result unused)
                views,  # memref.reinterpret_cast: lowered after the walk
            ],
        )
        for view in views.views:
            lower_view(view)
