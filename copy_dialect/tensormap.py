"""Tensor maps in global memory, rewritten in the kernel: `copy.tensormap_global` (the map
of a GMEM argument as a value, in a slot of a workspace the runtime fills with the
host-encoded map), `copy.tensormap_replace` (re-point it: address, a dim, a stride) and the
tensor-map proxy fences `copy.tensormap_fence_release` / `copy.tensormap_fence_acquire`.

A copy names such a map with `map(%m : !copy.tensormap<...>)` (`copy.async_copy`); it then
issues through the slot's address instead of a `.param` map. This is what grouped and
variable-shape kernels do (CUTLASS's grouped GEMM: `tensormaps_replace_global_address`,
`tensormaps_cp_fence_release`, `tensormaps_fence_acquire`). The protocol analysis checks
the two ways to get it wrong (cutlass#3165): rewriting a map while a copy may still use it,
and using it without the release/acquire pair (rules TU10-TU12).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryAllocEffect, MemoryReadEffect, MemoryWriteEffect

from copy_dialect.attributes import (
    Implementation,
    TensorMapField,
    TensorMapFieldAttr,
    TensorMapType,
)
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import CopyGeometry
from copy_dialect.gmem import check_tma_stride
from copy_dialect.memory import GMEM, bitwidth, memory_space
from copy_dialect.tma import check_kernel_argument
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import (
    constant_int,
    enclosing_target,
    feature_error,
    retarget_note,
    value_name,
)
from facts.target import TENSORMAP_REPLACE

TENSOR_MAP_BYTES = 128
"""A `CUtensorMap`: 128 bytes, 64-byte aligned (a workspace slot is 128 bytes)."""


def check_tensormap_target(op: Operation) -> None:
    """`tensormap.replace` and `fence.proxy.tensormap` are PTX ISA 8.3, arch-specific."""
    target = enclosing_target(op)
    # rule: TU1
    if target is not None and not TENSORMAP_REPLACE.has(target):
        raise feature_error(
            op,
            TENSORMAP_REPLACE,
            target,
            note=f'{retarget_note(TENSORMAP_REPLACE)} (#copy.target<"sm_90a">), or use the '
            "kernel's .param tensor maps (drop map(...) from the copies)",
        )


def check_map_value(value: SSAValue) -> None:
    """A map operand is made in the kernel by `copy.tensormap_global` (the runtime fills its
    slot; the ABI has no other map in global memory)."""
    # rule: TU13
    if not isinstance(value.owner, TensorMapGlobalOp):
        raise Error(
            "Expected the map to be made by copy.tensormap_global, got "
            + (f"%{value.name_hint}" if value.name_hint else "a value")
            + f" of type {value.type}",
            note="make the map in the kernel: %m = copy.tensormap_global %x slot %s of N "
            f": <%x's type> -> {value.type}",
        )


def map_type(value: SSAValue) -> TensorMapType:
    assert isinstance(t := value.type, TensorMapType)
    return t


@copy_op_definition
class TensorMapGlobalOp(IRDLOperation):
    """
    The tensor map of copies of the GMEM argument `source`, as a value in global memory:
    slot `slot` of a workspace of `slots` maps of 128 bytes that the runtime allocates at
    launch and fills with the map it encodes on the host (the map of `source`, with the box,
    swizzle and OOB fill of the result type). Copies name it with `map(%m : ...)`;
    `copy.tensormap_replace` re-points it. Give each block that rewrites its map its own
    slot (the block's index): maps are rewritten in place.

    ```mlir
    %m = copy.tensormap_global %x slot %slot of 4
        : memref<4096x4096xf32> -> !copy.tensormap<64x64xf32>
    ```
    """

    name = "copy.tensormap_global"

    source = operand_def(MemRefType)
    slot = operand_def(IndexType)
    slots = prop_def(IntegerAttr[I64])
    map = result_def(TensorMapType)

    # Each op is its own workspace: two alike are two maps (no CSE merges them).
    traits = traits_def(MemoryAllocEffect())

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$source `slot` $slot `of` $slots attr-dict `:` type($source) `->` type($map)"

    def __init__(
        self,
        source: SSAValue | Operation,
        slot: SSAValue | Operation,
        slots: int,
        map_type: TensorMapType,
    ):
        super().__init__(
            operands=[source, slot],
            properties={"slots": IntegerAttr(slots, i64)},
            result_types=[map_type],
        )

    def verify_(self) -> None:
        check_tensormap_target(self)
        check_kernel_argument(self, self.source)
        assert isinstance(source := self.source.type, MemRefType)
        t = map_type(self.map)
        # rule: TU3
        rank, box = source.get_num_dims(), t.box_shape
        if source.element_type != t.element_type or rank != len(box):
            fixed = TensorMapType(
                ((1,) * rank + box)[-rank:], source.element_type, t.swizzle.data, t.oob.data
            )
            raise Error(
                f"Expected the map's box to have one dim per dim of {source} and its element "
                f"type, got {t}",
                note=f"write the box of the copies through it, with a 1 for each leading dim "
                f"they leave out: {fixed}",
            )
        slots = self.slots.value.data
        slot = constant_int(self.slot)
        # rule: TU4
        if slots < 1 or (slot is not None and not 0 <= slot < slots):
            raise Error(
                f"Expected a workspace of at least one slot and a slot in [0, {slots}), got "
                f"slot {slot} of {slots}",
                note="give the workspace one slot per block that rewrites its map (of "
                f"{max(1, (slot or 0) + 1)} or more here) and index it with the block's index",
            )


@copy_op_definition
class TensorMapReplaceOp(IRDLOperation):
    """
    Rewrites one field of a tensor map in global memory (`tensormap.replace.tile`): its
    `global_address` (to the element `value[indices]` of a GMEM ref), or dim `dim` of its
    `global_dim` (an i32 element count) or `global_stride` (an i64 byte stride; dim `dim`'s,
    outermost dim first as in a memref, the innermost stride being one element). Issued by the
    elected thread; before a copy uses the map again, `copy.tensormap_fence_release` and
    `copy.tensormap_fence_acquire` must make the new map visible to the TMA unit, and no copy
    through the map may still be in flight when it is rewritten.

    ```mlir
    copy.tensormap_replace %m global_dim[0] to %rows : !copy.tensormap<64x64xf32>, i32
    ```
    """

    name = "copy.tensormap_replace"

    map = operand_def(TensorMapType)
    value = operand_def()
    indices = var_operand_def(IndexType)
    field = prop_def(TensorMapFieldAttr)
    dim = opt_prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$map $field (`[` $dim^ `]`)? `to` $value (`[` $indices^ `]`)? attr-dict "
        "`:` type($map) `,` type($value)"
    )

    def __init__(
        self,
        map: SSAValue | Operation,
        field: TensorMapField | str,
        value: SSAValue | Operation,
        *,
        dim: int | None = None,
        indices: Sequence[SSAValue | Operation] = (),
    ):
        super().__init__(
            operands=[map, value, indices],
            properties={
                "field": TensorMapFieldAttr(TensorMapField(field)),
                "dim": None if dim is None else IntegerAttr(dim, i64),
            },
        )

    @property
    def field_kind(self) -> TensorMapField:
        return self.field.data

    @property
    def field_dim(self) -> int | None:
        return None if self.dim is None else self.dim.value.data

    def ptx_ordinal(self) -> int:
        """The field's `ord` in PTX, which counts dims innermost first: global_dim of memref
        dim d is ord rank-1-d; global_stride ord k is the stride of the (k+1)-th dim from
        the innermost, so memref dim d is ord rank-2-d."""
        rank, d = len(map_type(self.map).box_shape), self.field_dim
        assert d is not None
        return rank - 1 - d if self.field_kind == TensorMapField.GLOBAL_DIM else rank - 2 - d

    def verify_(self) -> None:
        check_tensormap_target(self)
        check_map_value(self.map)
        t = map_type(self.map)
        self._verify_dim(t)
        self._verify_value(t)

    def _verify_dim(self, t: TensorMapType) -> None:
        rank, field, d = len(t.box_shape), self.field_kind, self.field_dim
        if field == TensorMapField.GLOBAL_ADDRESS:
            dims, bound = 0, None
        else:
            bound = rank if field == TensorMapField.GLOBAL_DIM else rank - 1
            dims = 1
        # rule: TU5
        if (d is None) != (dims == 0) or (
            d is not None and bound is not None and not 0 <= d < bound
        ):
            what = "no dim" if dims == 0 else f"a dim in [0, {bound})"
            raise Error(
                f"Expected {field} of a rank-{rank} map to take {what}, got "
                f"{'none' if d is None else d}",
                note=f"global_address takes no dim; global_dim[d] takes d in [0, {rank}) "
                f"(outermost first), global_stride[d] d in [0, {rank - 1}) (the innermost "
                "stride is one element)",
            )

    def _verify_value(self, t: TensorMapType) -> None:
        field, value = self.field_kind, self.value
        if field == TensorMapField.GLOBAL_ADDRESS:
            self._verify_address(t)
            return
        width = 32 if field == TensorMapField.GLOBAL_DIM else 64
        # rule: TU6
        if self.indices or not (
            isinstance(value.type, IntegerType) and value.type.width.data == width
        ):
            raise Error(
                f"Expected {field} to be an i{width}, got {value.type}"
                + (" with indices" if self.indices else ""),
                note=f"pass an i{width} (arith.index_cast / arith.trunci / arith.extui)",
            )
        constant = constant_int(value)
        if constant is None:
            return
        if field == TensorMapField.GLOBAL_DIM:
            # rule: TU7
            if not 1 <= constant <= 2**31 - 1:
                raise Error(
                    f"Expected a global dim in [1, 2**31), got {constant}",
                    note="give the dim 1 or more elements (an empty group has no copies: skip "
                    "its copies instead of mapping it)",
                )
            return
        elt = t.element_type
        check_tma_stride(
            self.field_dim or 0,
            constant,
            f"the stride is {constant} bytes: pad the rows to a multiple of 16 bytes, "
            f"{-(-constant // 16) * 16} here ({max(1, 128 // (bitwidth(elt) or 8))} elements "
            f"of {elt})",
        )

    def _verify_address(self, t: TensorMapType) -> None:
        value = self.value
        ref = value.type
        # rule: TU6
        if not (
            isinstance(ref, MemRefType)
            and memory_space(ref) == GMEM
            and ref.element_type == t.element_type
            and len(self.indices) == ref.get_num_dims()
        ):
            raise Error(
                f"Expected global_address to be an element of a GMEM ref of "
                f"{t.element_type}, one index per dim, got {ref} with {len(self.indices)} "
                "indices",
                note=f"pass the group's first element: to %pool[%offset] with %pool a GMEM "
                f"kernel argument of {t.element_type} (memref<?x{t.element_type}>, say)",
            )
        offset = _constant_offset(ref, self.indices)
        bits = bitwidth(t.element_type) or 8
        # rule: TU8
        if offset is not None and (offset * bits // 8) % 16:
            raise Error(
                f"Expected a global address 16-byte aligned for TMA, got element {offset} "
                f"({offset * bits // 8} bytes past the ref's start)",
                note=f"start each group at a multiple of {max(1, 128 // bits)} elements of "
                f"{t.element_type}",
            )


def _constant_offset(ref: MemRefType, indices: Sequence[SSAValue]) -> int | None:
    """The linear element offset of `ref[indices]` (row-major), None unless constant."""
    values = [constant_int(i) for i in indices]
    shape = ref.get_shape()
    if any(v is None for v in values) or any(d < 0 for d in shape[1:]):
        return None
    offset = 0
    for v, d in zip(values, (*shape[1:], 1), strict=True):
        assert v is not None
        offset = (offset + v) * d
    return offset


class _TensorMapFenceOp(IRDLOperation):
    """A proxy fence on a map in global memory, issued by the elected thread."""

    map = operand_def(TensorMapType)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = "$map attr-dict `:` type($map)"

    def __init__(self, map: SSAValue | Operation):
        super().__init__(operands=[map])

    def verify_(self) -> None:
        check_tensormap_target(self)
        check_map_value(self.map)


@copy_op_definition
class TensorMapFenceReleaseOp(_TensorMapFenceOp):
    """
    Releases the elected thread's `copy.tensormap_replace`s of the map to the tensor-map
    proxy (`fence.proxy.tensormap::generic.release.gpu`); a `copy.tensormap_fence_acquire`
    must follow before a copy through the map.
    ```mlir
    copy.tensormap_fence_release %m : !copy.tensormap<64x64xf32>
    ```
    """

    name = "copy.tensormap_fence_release"


@copy_op_definition
class TensorMapFenceAcquireOp(_TensorMapFenceOp):
    """
    Acquires the map for the TMA unit (`fence.proxy.tensormap::generic.acquire.gpu [map],
    128`): copies through it after this see the fields the replaces released. The fence is
    the issuing thread's: it covers the copies of the block or role that runs it (its
    elected thread), so each role that copies through a rewritten map acquires it (TU11).
    ```mlir
    copy.tensormap_fence_acquire %m : !copy.tensormap<64x64xf32>
    ```
    """

    name = "copy.tensormap_fence_acquire"


def check_copy_map(g: CopyGeometry, map_value: SSAValue, impl: Implementation | None) -> None:
    """A copy through a map in global memory: a TMA load or store (not a reduction, whose
    map type may differ) of the map's array whose tensor map (box, element type, swizzle,
    OOB fill) is the map's (TU9)."""
    t = map_type(map_value)
    tma = impl in (Implementation.TMA, None)  # None: no target yet decides it
    owner = map_value.owner
    source = owner.source if isinstance(owner, TensorMapGlobalOp) else None
    want = TensorMapType(g.gmem_box, g.element_type, g.swizzle_bytes, g.tensor_map_oob)
    # rule: TU9
    if not tma or g.reduction is not None or source is not g.gmem or t != want:
        found = [f"{t}"] if t != want else []
        if g.reduction is not None:
            found.append("a reduction")
        if source is not g.gmem:
            found.append("a map of another array")
        if not tma:
            found.append(f"impl {impl}")
        raise Error(
            f"Expected a TMA copy through a map of its GMEM ref with its tensor map {want}, "
            f"got {', '.join(found)}",
            note=f"give the map the copy's type {want} and make it with copy.tensormap_global "
            f"of the copy's GMEM ref {value_name(g.gmem)}, or drop map(...) to use the "
            "kernel's .param map",
        )
