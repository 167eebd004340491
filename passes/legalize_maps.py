"""copy-legalize's TMA loads through a tensor map rewritten in the kernel
(`copy.tensormap_global`, `copy.tensormap_replace`), on a target without TMA
(passes/legalize.py): the map's value at a load is derived from the IR (`map_value`: the
rewrites before the load in its block, the host-encoded map's fields elsewhere), and the
load's cp.async form reads a view of the array the map points at there (`map_view`:
`memref.reinterpret_cast` with the base, sizes and row pitch); the map, its rewrites and
fences then go (`erase_map`). A rewrite that may run between those and the load, or a TMA
store through such a map, is reported (`check_map_uses`, rule LG3).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType, StridedLayoutAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import Rewriter

from copy_dialect import ops as copy
from copy_dialect import portability
from copy_dialect.memory import static_strides
from facts.target import Target
from passes.legalize_common import appender
from passes.legalize_common import index_constant as _index

MAP_OPS = (copy.TensorMapReplaceOp, copy.TensorMapFenceReleaseOp, copy.TensorMapFenceAcquireOp)
"""What may use a tensor map in global memory besides the TMA loads through it: removed with
the map once the loads read views instead."""


@dataclass(frozen=True)
class MapValue:
    """The tensor map a load reads through, as the `copy.tensormap_replace`s before it in its
    block leave it: the fields they rewrite; the others are the host-encoded map's, made
    from the `copy.tensormap_global`'s source (its base, sizes and row-major strides)."""

    init: copy.TensorMapGlobalOp
    address: copy.TensorMapReplaceOp | None
    """The last rewrite of the base (`value[indices]`), None for the source's base."""
    dims: dict[int, SSAValue]
    """The i32 element count of each rewritten dim (outermost first)."""
    strides: dict[int, SSAValue]
    """The i64 byte stride of each rewritten dim (outermost first, all but the innermost)."""


def check_map_uses(init: copy.TensorMapGlobalOp, target: Target) -> None:
    """A tensor map in global memory has a pre-Hopper form where it is only rewritten,
    fenced and loaded through: the loads read views (`map_value`); a TMA store or
    reduction through it, or any other use, has none (LG3)."""
    for use in init.map.uses:
        user = use.operation
        if isinstance(user, MAP_OPS):
            continue
        if isinstance(user, copy.AsyncCopyOp) and user.is_load:
            continue
        what = (
            "a TMA store through a tensor map in global memory"
            if isinstance(user, copy.AsyncCopyOp)
            else f"a use of a tensor map in global memory by {user.name}"
        )
        portability.check_no_form(user, what, target)


def map_value(load: copy.AsyncCopyOp, target: Target) -> MapValue:
    """The value of the map `load` reads through, at the load, derived from the IR: the
    `copy.tensormap_replace`s of the map before it in its block (the last of each field
    wins). Every other rewrite of the map must follow the load in the kernel's body (run
    once, after it), so that no path reaches the load with another value; a base must be
    rewritten to an element of a GMEM array of static strides. Else LG3 at the op."""
    m = load.map
    assert m is not None
    init = m.owner
    if not isinstance(init, copy.TensorMapGlobalOp):
        portability.check_no_form(
            load, "a TMA load through a tensor map that no copy.tensormap_global makes", target
        )
    assert isinstance(init, copy.TensorMapGlobalOp)
    before = _ops_before(load)
    seen = set(before)
    block = load.parent_block()
    once = block is not None and isinstance(block.parent_op(), func.FuncOp)
    for use in m.uses:
        user = use.operation
        if not isinstance(user, copy.TensorMapReplaceOp) or user in seen:
            continue
        if once and user.parent_block() is block:
            continue  # after the load, in the kernel's body: run once, after it
        portability.check_no_form(
            user,
            "a tensor-map rewrite that may run between the rewrites before a load through "
            "the map and the load (the pass reads the map's value at a load from the "
            "rewrites before it in its block)",
            target,
            note="rewrite the map in the block of the loads through it, before them",
        )
    address: copy.TensorMapReplaceOp | None = None
    dims: dict[int, SSAValue] = {}
    strides: dict[int, SSAValue] = {}
    for op in before:
        if not isinstance(op, copy.TensorMapReplaceOp) or op.map is not m:
            continue
        kind, dim = op.field_kind, op.field_dim
        if kind == copy.TensorMapField.GLOBAL_ADDRESS:
            address = op
        elif kind == copy.TensorMapField.GLOBAL_DIM:
            assert dim is not None
            dims[dim] = op.value
        else:
            assert dim is not None
            strides[dim] = op.value
    if address is not None:
        t = address.value.type
        assert isinstance(t, MemRefType)
        if static_strides(t) is None:
            portability.check_no_form(
                address,
                f"a tensor-map base in a GMEM array of dynamic strides ({t})",
                target,
                note="rewrite the base to an element of a row-major array of static shape "
                "(a pool), whose strides the view's offset is computed from",
            )
    return MapValue(init, address, dims, strides)


def _ops_before(op: Operation) -> list[Operation]:
    """The ops before `op` in its block, in order."""
    found = []
    prev = op.prev_op
    while prev is not None:
        found.append(prev)
        prev = prev.prev_op
    return found[::-1]


def map_view(value: MapValue, element: Attribute) -> list[Operation]:
    """The ops that view the array the map points at as the map does, the last making the
    view: `memref.reinterpret_cast` of the rewritten base's array at the base's offset (or
    of the map's source), with the rewritten sizes (i32 element counts) and row pitches
    (i64 bytes, in elements), the source's where a field is not rewritten."""
    ops: list[Operation] = []
    emit = appender(ops)
    source = value.init.source
    assert isinstance(source_type := source.type, MemRefType)
    rank = source_type.get_num_dims()
    shape = source_type.get_shape()

    made: dict[int, SSAValue] = {}

    def source_size(d: int) -> SSAValue:  # made once, and only where a field is not rewritten
        if d not in made:
            made[d] = emit(
                _index(shape[d]) if shape[d] >= 0 else memref.DimOp(source, emit(_index(d)))
            )
        return made[d]

    if value.address is None:
        base, offset = source, emit(_index(0))
    else:
        base = value.address.value
        assert isinstance(base_type := base.type, MemRefType)
        strides = static_strides(base_type)
        assert strides is not None  # checked: `map_value`
        terms = [
            index if stride == 1 else emit(arith.MuliOp(index, emit(_index(stride))))
            for index, stride in zip(value.address.indices, strides, strict=True)
        ]
        offset = terms[0] if terms else emit(_index(0))
        for term in terms[1:]:
            offset = emit(arith.AddiOp(offset, term))
    sizes = [
        emit(arith.IndexCastOp(value.dims[d], IndexType())) if d in value.dims else source_size(d)
        for d in range(rank)
    ]
    bits = copy.bitwidth(element) or 8
    pitches: list[SSAValue] = []
    for d in range(rank - 1):
        if d in value.strides:  # bytes -> elements (sub-byte ones too: bytes * 8 / bits)
            stride = emit(arith.IndexCastOp(value.strides[d], IndexType()))
            if bits % 8:
                stride = emit(arith.MuliOp(stride, emit(_index(8))))
            per = bits // 8 if bits % 8 == 0 else bits
            pitches.append(emit(arith.DivUIOp(stride, emit(_index(per)))))
        else:  # the source's row-major stride: the product of its sizes inside dim d
            pitch = source_size(rank - 1)
            for inner in reversed(range(d + 1, rank - 1)):
                pitch = emit(arith.MuliOp(pitch, source_size(inner)))
            pitches.append(pitch)
    view = MemRefType(
        element, [DYNAMIC_INDEX] * rank, StridedLayoutAttr([*([None] * (rank - 1)), 1], None)
    )
    emit(memref.ReinterpretCastOp.from_dynamic(base, [offset], sizes, [*pitches, 1], view))
    return ops


def erase_map(init: copy.TensorMapGlobalOp) -> None:
    """Removes a map whose loads read views now: its rewrites and fences, then the map."""
    for use in list(init.map.uses):
        Rewriter.erase_op(use.operation)
    Rewriter.erase_op(init)
