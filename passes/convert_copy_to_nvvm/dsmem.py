"""Lowers the distributed-shared-memory ops (`copy_dialect.dsmem`).

Each op maps its local SMEM address and its local barrier's address to the peer CTA with
`nvvm.mapa` (`mapa.shared::cluster`: the same offset in the peer's SMEM, which holds the
same arena since every CTA runs the same kernel) and issues inline PTX (no NVVM op has
st.async, red.async or the shared::cluster arrive), with 32-bit shared::cluster addresses
as CUTLASS passes them:

- `peer_store` -> `st.async.weak.shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.bN`,
  by every thread that reaches it; the value goes as N-bit integers (a float or a vector is
  bit-cast, then split lane by lane: lane 0 is the low bits), so one `.bN` form serves every
  element type;
- `peer_store reduce` -> `red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::
  bytes.<op>.<type>`, by every thread that reaches it;
- `peer_copy` -> `cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes`
  (elected thread);
- `peer_arrive` -> `mbarrier.arrive{.expect_tx}.release.cluster.shared::cluster.b64`
  (`.relaxed.cluster` with `relaxed`; elected thread).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerType, MemRefType, i32
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from copy_dialect import layout
from copy_dialect import ops as copy
from passes import nvvm
from passes.convert_copy_to_nvvm.barriers import barrier_pointer
from passes.convert_copy_to_nvvm.emit import Arith, Emit
from passes.convert_copy_to_nvvm.kernel import KernelPattern
from passes.llvm_types import lowered

RED_OPS = {"umin": "min", "smin": "min", "umax": "max", "smax": "max"}
"""The PTX op of a reduction kind whose signedness the type carries."""


def peer_address(e: Emit, local: SSAValue, peer: SSAValue) -> SSAValue:
    """The i32 shared::cluster address of `local` (`!llvm.ptr<3>`) in CTA `peer` (i64)."""
    mapped = e(nvvm.MapaSharedClusterOp(local, e.resize(peer, i32))).results[0]
    return e.resize(e.ptrtoint(mapped), i32)


def element_address(e: Emit, ref: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
    """The `!llvm.ptr<3>` of `ref[indices]` (the SMEM layout, swizzled or not)."""
    assert isinstance(t := ref.type, MemRefType)
    (base,) = lowered([ref], e.ops)
    bits = copy.bitwidth(t.element_type) or 8
    offset = layout.element_offset(
        [Arith(e, i) for i in lowered(indices, e.ops)], t.get_shape(), bits, copy.swizzle_of(t)
    )
    return e.byte_offset(base, offset if isinstance(offset, int) else offset.value)


def slot_address(e: Emit, ref: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
    """The `!llvm.ptr<3>` of the slot `ref[indices]` picks along leading dims."""
    assert isinstance(t := ref.type, MemRefType)
    (base,) = lowered([ref], e.ops)
    strides = copy.smem_strides(t.get_shape(), t.element_type, copy.swizzle_of(t))
    offset: Arith | int = 0
    for index, stride in zip(lowered(indices, e.ops), strides, strict=False):
        offset = Arith(e, index) * stride + offset
    return e.byte_offset(base, offset if isinstance(offset, int) else offset.value)


def lanes(e: Emit, value: SSAValue, width: int, bits: int) -> list[SSAValue]:
    """`value` (an element or a vector of `width`) as `width` integers of `bits` bits."""
    (value,) = lowered([value], e.ops)
    whole = IntegerType(width * bits)
    if value.type != whole:
        value = e.bitcast(value, whole)
    lane_type = IntegerType(bits)
    return [
        e.resize(value if k == 0 else e.binary(llvm.LShrOp, value, k * bits), lane_type)
        for k in range(width)
    ]


class LowerPeerStore(KernelPattern):
    """`copy.peer_store` -> `mapa` + `st.async` (or `red.async` with `reduce`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.PeerStoreOp, rewriter: PatternRewriter, /):
        e = Emit()
        assert isinstance(t := op.ref.type, MemRefType)
        bits = copy.bitwidth(t.element_type) or 32
        (peer,) = lowered([op.peer], e.ops)
        data = peer_address(e, element_address(e, op.ref, op.indices), peer)
        bar = peer_address(e, barrier_pointer(e, op.barrier, op.barrier_index), peer)
        reg = "r" if bits == 32 else "l"
        if op.reduction is None:
            values = lanes(e, op.value, op.width, bits)
            vec = "" if op.width == 1 else f".v{op.width}"
            regs = ", ".join(f"${2 + k}" for k in range(op.width))
            regs = regs if op.width == 1 else f"{{{regs}}}"
            asm = (
                f"st.async.weak.shared::cluster.mbarrier::complete_tx::bytes{vec}.b{bits} "
                f"[$0], {regs}, [$1];"
            )
        else:
            kind = op.reduction.data
            ptx_type = copy.red_async_type(kind, t.element_type)
            (value,) = lowered([op.value], e.ops)
            values = [value]
            asm = (
                "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes."
                f"{RED_OPS.get(kind.value, kind.value)}.{ptx_type} [$0], $2, [$1];"
            )
        constraints = ",".join(["r", "r", *[reg] * len(values), "~{memory}"])
        e(llvm.InlineAsmOp(asm, constraints, [data, bar, *values], has_side_effects=True))
        rewriter.replace(op, e.ops, [])


class LowerPeerCopy(KernelPattern):
    """`copy.peer_copy` -> `mapa` + `cp.async.bulk.shared::cluster.shared::cta` (elected)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.PeerCopyOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        body = Emit()
        (peer,) = lowered([op.peer], body.ops)
        src = body.resize(body.ptrtoint(slot_address(body, op.src, op.src_indices)), i32)
        dst = peer_address(body, slot_address(body, op.dst, op.dst_indices), peer)
        bar = peer_address(body, barrier_pointer(body, op.barrier, op.barrier_index), peer)
        size = body.const(op.delivered_bytes, i32)
        body(
            llvm.InlineAsmOp(
                "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes "
                "[$0], [$1], $2, [$3];",
                "r,r,r,r,~{memory}",
                [dst, src, size, bar],
                has_side_effects=True,
            )
        )
        e = Emit()
        kernel.group(op).elected(e, body.ops)
        rewriter.replace(op, e.ops, [])


class LowerPeerArrive(KernelPattern):
    """`copy.peer_arrive` -> `mapa` + `mbarrier.arrive{.expect_tx}.{release|relaxed}.cluster.
    shared::cluster` (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.PeerArriveOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        body = Emit()
        (peer,) = lowered([op.peer], body.ops)
        bar = peer_address(body, barrier_pointer(body, op.barrier, op.barrier_index), peer)
        sem = "relaxed" if op.is_relaxed else "release"
        if op.expect_tx is None:
            asm, operands = f"mbarrier.arrive.{sem}.cluster.shared::cluster.b64 _, [$0];", [bar]
        else:
            asm = f"mbarrier.arrive.expect_tx.{sem}.cluster.shared::cluster.b64 _, [$0], $1;"
            operands = [bar, body.const(op.tx_bytes, i32)]
        constraints = ",".join([*["r"] * len(operands), "~{memory}"])
        body(llvm.InlineAsmOp(asm, constraints, operands, has_side_effects=True))
        e = Emit()
        kernel.group(op).elected(e, body.ops)
        rewriter.replace(op, e.ops, [])


class LowerClusterSync(RewritePattern):
    """`copy.cluster_sync` -> `barrier.cluster.arrive{.relaxed}{.aligned}` and/or
    `barrier.cluster.wait{.aligned}`, executed by every thread that reaches it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.ClusterSyncOp, rewriter: PatternRewriter, /):
        aligned = op.aligned is not None
        ops: list[Operation] = []
        if op.arrives:
            arrive = nvvm.ClusterArriveRelaxedOp if op.relaxed is not None else nvvm.ClusterArriveOp
            ops.append(arrive(aligned=aligned))
        if op.waits:
            ops.append(nvvm.ClusterWaitOp(aligned=aligned))
        rewriter.replace(op, ops, [])
