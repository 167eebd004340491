"""Lowers the tensor maps in global memory (`copy.tensormap_*`).

- `tensormap_global`: the address of its slot in its workspace, a generic `!llvm.ptr`
  parameter appended to the kernel (the ABI's `tensor_map_workspace`, which the runtime
  allocates and fills with the host-encoded map); copies through the map pass this address
  to `cp.async.bulk.tensor` instead of a `.param` map.
- `tensormap_replace`: `tensormap.replace.tile.<field>.global.b1024` on the map in global
  memory, by the elected thread (of the block or of the role). In place, not in an SMEM copy
  that `tensormap.cp_fenceproxy` writes back as CUTLASS does: ptxas accepts the `.global`
  form on sm_90a, it needs no SMEM scratch and no whole warp (`cp_fenceproxy` is
  `.sync.aligned`), and the thread that rewrites the map is the one that issues its copies.
- `tensormap_fence_release` / `_acquire`: `fence.proxy.tensormap::generic.release.gpu`, and
  `fence.proxy.tensormap::generic.acquire.gpu [map], 128`, by the elected thread.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import MemRefType, NoneAttr, i32, i64
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from copy_dialect import ops as copy
from facts.abi import TensorMapWorkspaceParam
from passes.convert_copy_to_nvvm.emit import Emit, fail
from passes.convert_copy_to_nvvm.kernel import KernelPattern
from passes.llvm_types import cast, lowered

REPLACE_TYPES = {
    copy.TensorMapField.GLOBAL_ADDRESS: ("b64", "l"),
    copy.TensorMapField.GLOBAL_DIM: ("b32", "r"),
    copy.TensorMapField.GLOBAL_STRIDE: ("b64", "l"),
}
"""Each field's PTX operand type and inline-asm constraint."""


def workspace_param(op: copy.TensorMapGlobalOp) -> TensorMapWorkspaceParam:
    """The ABI record of the map's workspace: the map the runtime encodes, and its slots."""
    t = op.map.type
    assert isinstance(t, copy.TensorMapType)
    assert isinstance(source := op.source.type, MemRefType)
    dtype = copy.tensor_map_type(source.element_type)
    assert dtype is not None  # a copy through the map verified it (C11)
    index = op.source.index  # type: ignore[attr-defined]  # a kernel argument (B11)
    return TensorMapWorkspaceParam(
        index, t.box_shape, t.swizzle.data, t.oob.data, dtype, False, op.slots.value.data
    )


class LowerTensorMapGlobal(KernelPattern):
    """`copy.tensormap_global` -> the address of its workspace slot (`ws + 128 * slot`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.TensorMapGlobalOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        e = Emit()
        workspace = kernel.workspace(op, workspace_param(op))
        (slot,) = lowered([op.slot], e.ops)
        address = e.byte_offset(workspace, e.mul(slot, copy.TENSOR_MAP_BYTES))
        rewriter.replace(op, e.ops, [cast(address, op.map.type, e.ops)])


def element_address(e: Emit, op: copy.TensorMapReplaceOp) -> SSAValue:
    """The i64 global address of `value[indices]` (row-major, static inner dims)."""
    t = op.value.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    if not isinstance(t.layout, NoneAttr) or any(d < 0 for d in shape[1:]):
        raise fail(op, f"global_address of {t} is not lowered: use a row-major ref whose dims "
                   "after the first are static (a flat pool, memref<?xf32>)")  # fmt: skip
    (base,) = lowered([op.value], e.ops)
    offset: SSAValue | None = None
    for index, inner in zip(lowered(op.indices, e.ops), (*shape[1:], 1), strict=True):
        offset = index if offset is None else e.add(offset, index)
        offset = e.mul(offset, inner)
    bits = copy.bitwidth(t.element_type) or 8
    address = base if offset is None else e.byte_offset(base, e.mul(offset, bits // 8))
    return e.ptrtoint(address)


class LowerTensorMapReplace(KernelPattern):
    """`copy.tensormap_replace` -> `tensormap.replace.tile.<field>.global.b1024` (elected)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.TensorMapReplaceOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        body = Emit()
        (tensor_map,) = lowered([op.map], body.ops)
        field = op.field_kind
        if field == copy.TensorMapField.GLOBAL_ADDRESS:
            value = element_address(body, op)
            ordinal = ""
        else:
            (value,) = lowered([op.value], body.ops)
            value = body.resize(value, i32 if field == copy.TensorMapField.GLOBAL_DIM else i64)
            ordinal = f"{op.ptx_ordinal()}, "
        kind, constraint = REPLACE_TYPES[field]
        body(
            llvm.InlineAsmOp(
                "{ .reg .b64 %tm; cvta.to.global.u64 %tm, $0; "
                f"tensormap.replace.tile.{field}.global.b1024.{kind} [%tm], {ordinal}$1; }}",
                f"l,{constraint},~{{memory}}",
                [tensor_map, value],
                has_side_effects=True,
            )
        )
        e = Emit()
        kernel.group(op).elected(e, body.ops)
        rewriter.replace(op, e.ops, [])


class LowerTensorMapFenceRelease(KernelPattern):
    """`copy.tensormap_fence_release` -> `fence.proxy.tensormap::generic.release.gpu`
    (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.TensorMapFenceReleaseOp, rewriter: PatternRewriter, /):
        body = Emit()
        body(
            llvm.InlineAsmOp(
                "fence.proxy.tensormap::generic.release.gpu;", "~{memory}", [],
                has_side_effects=True,
            )
        )  # fmt: skip
        e = Emit()
        self.kernel(op).group(op).elected(e, body.ops)
        rewriter.replace(op, e.ops, [])


class LowerTensorMapFenceAcquire(KernelPattern):
    """`copy.tensormap_fence_acquire %m` -> `fence.proxy.tensormap::generic.acquire.gpu [m],
    128` (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.TensorMapFenceAcquireOp, rewriter: PatternRewriter, /):
        body = Emit()
        (tensor_map,) = lowered([op.map], body.ops)
        body(
            llvm.InlineAsmOp(
                f"fence.proxy.tensormap::generic.acquire.gpu [$0], {copy.TENSOR_MAP_BYTES};",
                "l,~{memory}",
                [tensor_map],
                has_side_effects=True,
            )
        )
        e = Emit()
        self.kernel(op).group(op).elected(e, body.ops)
        rewriter.replace(op, e.ops, [])
