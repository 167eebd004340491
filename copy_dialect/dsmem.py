"""Distributed shared memory inside a cluster: `copy.peer_store` (`st.async`, or
`red.async` with `reduce`), `copy.peer_copy` (the bulk SMEM -> peer SMEM copy) and
`copy.peer_arrive` (an arrival, optionally with `expect_tx`, on a peer CTA's mbarrier).

Each op names a local SMEM ref (or barrier) and the rank of a peer CTA in the cluster; the
lowering maps both the data and the barrier address to the peer with
`mapa.shared::cluster`, so the peer is written at the same offsets of its own SMEM arena
(every CTA of a cluster runs the same kernel, so its buffers and barriers lie at the same
offsets). The writes complete transaction bytes on the peer's barrier
(`mbarrier::complete_tx::bytes`): the peer expects them with its own
`copy.barrier_arrive_expect_tx` and waits on its barrier, as for a TMA load.

There is no multicast form here: `cp.async.bulk.shared::cluster.shared::cta` and `st.async`
name one destination CTA, so no op of this module takes a CTA mask.

`copy.cluster_sync` is the cluster's barrier (`barrier.cluster.arrive` and `wait`): every
thread of every CTA of the cluster arrives, and a wait returns once they all have, knowing
what they did before a (non-relaxed) arrive.
"""

from __future__ import annotations

from math import prod

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    Signedness,
    UnitAttr,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import OpTrait

from copy_dialect.attributes import (
    BarrierType,
    ReductionKind,
    ReductionKindAttr,
    enum_attr,
)
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.memory import SMEM, bitwidth, memory_space, smem_bytes, swizzle_of
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import (
    check_barrier_index,
    cluster_shape,
    constant_int,
    enclosing_kernel,
    enclosing_target,
    feature_error,
    retarget_note,
)
from facts import hardware
from facts.target import CLUSTERS, DSMEM

BULK_UNIT = 16
"""cp.async.bulk moves a multiple of 16 bytes between 16-byte aligned addresses."""

MAX_STORE_BYTES = 16
"""st.async stores at most 128 bits (ptxas: "Vector type too large, exceeds 128 bit
limit" for .v4 of 64-bit elements)."""

STORE_WIDTHS = (1, 2, 4)
"""The vector widths of st.async: a scalar, .v2, .v4."""

MAX_TX_BYTES = hardware.MAX_TX_COUNT
"""The mbarrier tx-count is below 2**20 (as copy.barrier_arrive_expect_tx, rule TR17)."""


class TxDelivery(OpTrait):
    """An op that completes transaction bytes on a barrier of its own CTA's group, as the
    kernel rules' phase sums see it (rules TR16, D10: `analysis.kernel.barriers`): every
    CTA of the cluster runs the same program, so what it sends to its peer's barrier is what
    its own barrier receives."""

    def delivery(self, op: Operation) -> tuple[SSAValue, SSAValue | None, int | None]:
        """The barrier group, the index in it, and the bytes one execution delivers (None
        when the op's bytes cannot be told statically)."""
        assert isinstance(op, PeerStoreOp | PeerCopyOp | PeerArriveOp)
        return op.barrier, op.barrier_index, op.delivered_bytes


def check_peer(op: Operation, peer: SSAValue) -> None:
    """What every DSMEM op needs: a target with clusters, a clustered kernel, a peer rank
    inside the cluster."""
    target = enclosing_target(op)
    # rule: DS3
    if target is not None and not DSMEM.has(target):
        raise feature_error(op, DSMEM, target, note=retarget_note(DSMEM))
    if enclosing_kernel(op) is None:
        return
    shape = cluster_shape(op)
    size = prod(shape)
    # rule: DS2
    if size < 2:
        raise Error(
            f"'{op.name}' writes a peer CTA's SMEM: expected a kernel with a cluster of 2 or "
            f"more CTAs, got the cluster {list(shape)}",
            note="give the kernel copy.cluster = array<i32: 2, 1, 1> (and launch it with "
            "that cluster)",
        )
    rank = constant_int(peer)
    # rule: DS1
    if rank is not None and not 0 <= rank < size:
        raise Error(
            f"peer rank {rank} is outside the cluster: expected a rank in [0, {size}), "
            f"the cluster being {list(shape)}",
            note=f"use a rank below {size} (the peer of rank r is r ^ 1 in a pair, "
            f"(r + 1) % {size} in a ring)",
        )


def check_smem_ref(op: Operation, ref: SSAValue, what: str) -> MemRefType:
    assert isinstance(t := ref.type, MemRefType)
    # rule: DS9
    if memory_space(t) != SMEM:
        raise Error(
            f"'{op.name}' {what}: expected an SMEM ref, got {t}",
            note="pass a buffer of copy.alloc_smem (memory space #copy.smem): the peer is "
            "written at the same offset of its own SMEM",
        )
    # rule: DS9
    if any(d < 0 for d in t.get_shape()):
        raise Error(
            f"'{op.name}' {what}: expected a static shape, got {t}",
            note="allocate SMEM buffers with copy.alloc_smem and a static shape",
        )
    return t


def red_async_type(kind: ReductionKind, element: Attribute) -> str | None:
    """The PTX type of `red.async.<kind>` on elements of type `element`, None when the PTX
    ISA has no such pair: .add on .u32, .s32, .u64; .min/.max on .u32, .s32; .inc/.dec on
    .u32; .and/.or/.xor on .b32. The signedness of the element type picks .s32 or .u32 for
    add, min and max (umin/smin and umax/smax pick it themselves)."""
    if not isinstance(element, IntegerType):
        return None
    width = element.width.data
    signed = element.signedness.data == Signedness.SIGNED
    unsigned = element.signedness.data == Signedness.UNSIGNED
    if width == 64:
        return "u64" if kind is ReductionKind.ADD and not signed else None
    if width != 32:
        return None
    if kind in (ReductionKind.ADD, ReductionKind.MIN, ReductionKind.MAX):
        return "s32" if signed else "u32"
    if kind in (ReductionKind.SMIN, ReductionKind.SMAX):
        return None if unsigned else "s32"
    if kind in (ReductionKind.UMIN, ReductionKind.UMAX):
        return None if signed else "u32"
    if kind in (ReductionKind.INC, ReductionKind.DEC):
        return None if signed else "u32"
    return "b32"


RED_ASYNC_TABLE = (
    "add: i32, ui32, si32, i64, ui64; min, max: i32, ui32, si32; inc, dec: i32, ui32; "
    "and, or, xor: 32-bit integers"
)


def st_async_type(element: Attribute) -> str | None:
    """The PTX type of st.async on `element` (.b32, .b64, .f32, .f64), None for others."""
    if isinstance(element, Float32Type):
        return "f32"
    if isinstance(element, Float64Type):
        return "f64"
    if isinstance(element, IntegerType) and element.width.data in (32, 64):
        return f"b{element.width.data}"
    return None


@copy_op_definition
class PeerStoreOp(IRDLOperation):
    """
    Stores `value` (an element, or a vector of 2 or 4) at `ref[indices]` in the SMEM of
    the cluster's CTA `peer` (`st.async`), or reduces it into that element with `reduce`
    (`red.async`); the store completes its bytes on the peer's barrier (the barrier at
    the local `barrier[index]`'s offset in the peer). Every thread that reaches it stores
    its own value.

    ```mlir
    copy.peer_store %v, %buf[%slot, %i, %j] peer %peer, %bars[%slot]
        : vector<4xf32>, memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
    ```
    """

    name = "copy.peer_store"

    value = operand_def(AnyAttr())
    ref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    peer = operand_def(IndexType)
    barrier = operand_def(BarrierType)
    barrier_index = opt_operand_def(IndexType)

    reduction = opt_prop_def(ReductionKindAttr)

    traits = traits_def(TxDelivery())

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "(`reduce` $reduction^)? $value `,` $ref `[` $indices `]` `peer` $peer `,` $barrier "
        "(`[` $barrier_index^ `]`)? attr-dict `:` type($value) `,` type($ref) `,` "
        "type($barrier)"
    )

    def __init__(
        self,
        value: SSAValue | Operation,
        ref: SSAValue | Operation,
        indices: list[SSAValue | Operation],
        peer: SSAValue | Operation,
        barrier: SSAValue | Operation,
        barrier_index: SSAValue | Operation | None = None,
        *,
        reduction: ReductionKind | str | None = None,
    ):
        super().__init__(
            operands=[value, ref, indices, peer, barrier, barrier_index],
            properties={"reduction": enum_attr(ReductionKindAttr, ReductionKind, reduction)},
        )

    @property
    def width(self) -> int:
        """The elements one thread stores: the value's vector width (1 for a scalar)."""
        t = self.value.type
        return prod(t.get_shape()) if isinstance(t, VectorType) else 1

    @property
    def value_bytes(self) -> int:
        """The bytes one thread stores."""
        assert isinstance(t := self.ref.type, MemRefType)
        return self.width * (bitwidth(t.element_type) or 8) // 8

    @property
    def delivered_bytes(self) -> int | None:
        # Every thread that reaches the op stores: the count depends on the threads.
        return None

    def verify_(self) -> None:
        t = check_smem_ref(self, self.ref, "stores into the peer's copy of its ref")
        check_peer(self, self.peer)
        check_barrier_index(self.barrier, self.barrier_index)
        # rule: DS9
        if len(self.indices) != t.get_num_dims():
            raise Error(
                f"expected {t.get_num_dims()} indices for {t}, got {len(self.indices)}",
                note="index every dim of the ref: the op stores one element (or one vector "
                "along the innermost dim)",
            )
        if self.reduction is not None:
            self._verify_reduction(t)
        else:
            self._verify_store(t)

    def _verify_store(self, t: MemRefType) -> None:
        element, value = t.element_type, self.value.type
        vector = isinstance(value, VectorType) and value.get_num_dims() == 1
        # rule: DS4
        if value != element and not (vector and value.element_type == element):
            raise Error(
                f"expected the value to be {element} or a vector of {element}, got {value}",
                note=f"store elements of the ref's type: {element}, vector<2x{element}> or "
                f"vector<4x{element}>",
            )
        # rule: DS4
        if st_async_type(element) is None:
            raise Error(
                f"st.async stores 32- or 64-bit elements (b32, b64, f32, f64), got {element}",
                note="store i32, i64, f32 or f64 elements (pack narrower ones into i32)",
            )
        width, nbytes = self.width, self.value_bytes
        # rule: DS4
        if width not in STORE_WIDTHS or nbytes > MAX_STORE_BYTES:
            raise Error(
                f"st.async stores 1, 2 or 4 elements of at most {MAX_STORE_BYTES} bytes in "
                f"all, got {width} x {element} ({nbytes} bytes)",
                note=f"store at most vector<{MAX_STORE_BYTES * 8 // (bitwidth(element) or 8)}"
                f"x{element}> per op",
            )
        inner = constant_int(self.indices[-1]) if self.indices else None
        # rule: DS8
        if width > 1 and (t.get_shape()[-1] % width or (inner is not None and inner % width)):
            raise Error(
                f"a vector of {width} elements must start at a multiple of {width} in a row "
                f"whose size is a multiple of {width}: got row {t.get_shape()[-1]}, index "
                f"{'?' if inner is None else inner}",
                note=f"store scalars, or align the innermost index to {width} (st.async needs "
                f"its {nbytes}-byte address aligned to {nbytes})",
            )

    def _verify_reduction(self, t: MemRefType) -> None:
        assert self.reduction is not None
        kind, element = self.reduction.data, t.element_type
        # rule: DS6
        if self.value.type != element:
            raise Error(
                f"red.async reduces one element: expected a value of type {element}, got "
                f"{self.value.type}",
                note=f"reduce element by element: pass one {element} per copy.peer_store reduce",
            )
        # rule: DS5
        if red_async_type(kind, element) is None:
            raise Error(
                f"red.async has no .{kind.value} on {element}: expected one of {RED_ASYNC_TABLE}",
                note="reduce an integer type the PTX ISA lists for this op (add on ui32, say), "
                "or use another reduction",
            )


@copy_op_definition
class PeerCopyOp(IRDLOperation):
    """
    Copies the slot `src[src_indices]` of this CTA's SMEM to the slot `dst[dst_indices]`
    of the cluster's CTA `peer` (`cp.async.bulk.shared::cluster.shared::cta`), issued by
    the elected thread; the copy completes its bytes on the peer's barrier. Indices pick a
    slot along leading dims; the remaining dims are what is copied (a multiple of 16
    bytes, 16-byte aligned).

    ```mlir
    copy.peer_copy %buf[%slot] to %buf[%slot] peer %peer, %bars[%slot]
        : memref<2x64x64xf32, #copy.smem> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
    ```
    """

    name = "copy.peer_copy"

    src = operand_def(MemRefType)
    src_indices = var_operand_def(IndexType)
    dst = operand_def(MemRefType)
    dst_indices = var_operand_def(IndexType)
    peer = operand_def(IndexType)
    barrier = operand_def(BarrierType)
    barrier_index = opt_operand_def(IndexType)

    traits = traits_def(TxDelivery())

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$src (`[` $src_indices^ `]`)? `to` $dst (`[` $dst_indices^ `]`)? `peer` $peer `,` "
        "$barrier (`[` $barrier_index^ `]`)? attr-dict `:` type($src) `to` type($dst) `,` "
        "type($barrier)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        dst: SSAValue | Operation,
        peer: SSAValue | Operation,
        barrier: SSAValue | Operation,
        barrier_index: SSAValue | Operation | None = None,
        *,
        src_indices: list[SSAValue | Operation] | None = None,
        dst_indices: list[SSAValue | Operation] | None = None,
    ):
        super().__init__(
            operands=[src, src_indices or [], dst, dst_indices or [], peer, barrier, barrier_index],
        )

    @staticmethod
    def slot_shape(t: MemRefType, indices: int) -> tuple[int, ...]:
        return tuple(t.get_shape()[indices:])

    @property
    def delivered_bytes(self) -> int:
        assert isinstance(t := self.src.type, MemRefType)
        return smem_bytes(self.slot_shape(t, len(self.src_indices)), t.element_type, swizzle_of(t))

    def verify_(self) -> None:
        src = check_smem_ref(self, self.src, "copies from this CTA's SMEM")
        dst = check_smem_ref(self, self.dst, "copies into the peer's copy of its ref")
        check_peer(self, self.peer)
        check_barrier_index(self.barrier, self.barrier_index)
        shapes = []
        for t, indices, what in (
            (src, self.src_indices, "source"),
            (dst, self.dst_indices, "destination"),
        ):
            # rule: DS9
            if len(indices) >= t.get_num_dims():
                raise Error(
                    f"the {what} indices pick a slot along leading dims: expected fewer than "
                    f"{t.get_num_dims()} indices for {t}, got {len(indices)}",
                    note="drop the innermost indices: the op copies the slot's remaining dims",
                )
            shapes.append((self.slot_shape(t, len(indices)), t.element_type, swizzle_of(t)))
        # rule: DS10
        if shapes[0] != shapes[1]:
            raise Error(
                "expected the source and destination slots to have the same shape, element "
                f"type and swizzle, got {shapes[0][0]}x{shapes[0][1]} (swizzle {shapes[0][2]}) "
                f"and {shapes[1][0]}x{shapes[1][1]} (swizzle {shapes[1][2]})",
                note="copy between slots of the same type (the source's is "
                f"{'x'.join(map(str, shapes[0][0]))}x{shapes[0][1]}): the bulk copy moves "
                "bytes, it does not convert or re-layout them",
            )
        nbytes = self.delivered_bytes
        padded = -(-nbytes // BULK_UNIT) * BULK_UNIT
        # rule: DS7
        if nbytes % BULK_UNIT:
            raise Error(
                f"a bulk copy moves a multiple of {BULK_UNIT} bytes, got {nbytes} bytes",
                note=f"make the slot a multiple of {BULK_UNIT} bytes, {padded} "
                "here (pad its rows), or store the tail with copy.peer_store",
            )
        # rule: DS7
        if nbytes >= MAX_TX_BYTES:
            raise Error(
                f"a bulk copy's bytes must be below 2**20 (the peer's tx-count), got {nbytes}",
                note="split the copy into slots below 1 MiB",
            )
        # Alignment follows: a slot's byte stride is its size (a multiple of 16), and
        # copy.alloc_smem aligns the buffer to 128.


@copy_op_definition
class PeerArriveOp(IRDLOperation):
    """
    Arrives once on the barrier of the cluster's CTA `peer` at the local `barrier[index]`'s
    offset (`mbarrier.arrive.release.cluster.shared::cluster`), raising its transaction
    count by `expect_tx` bytes when given (`mbarrier.arrive.expect_tx`): issued by the
    elected thread of the block or role. The release orders everything the arriving
    threads did before it for the peer that waits (on an H100 a `MEMBAR.ALL.GPU` and an
    error barrier ahead of the arrival). `relaxed` (`.relaxed.cluster`, PTX ISA 8.6) orders
    only what had completed before it: the copies and phases its threads waited for, the
    tensor-core reads a `wgmma` wait retired; not the threads' own loads and stores. It is
    the form for a consumer that releases a peer's multicast slot after its
    `wgmma.wait_group`, as CUTLASS's cluster pipelines do (their `ClusterBarrier::arrive`
    carries no cluster-scope release).

    ```mlir
    copy.peer_arrive %bars[%slot] peer %peer expect_tx 16384 : !copy.barrier<2>
    copy.peer_arrive %bars[%slot] peer %peer relaxed : !copy.barrier<2>
    ```
    """

    name = "copy.peer_arrive"

    barrier = operand_def(BarrierType)
    barrier_index = opt_operand_def(IndexType)
    peer = operand_def(IndexType)

    expect_tx = opt_prop_def(IntegerAttr[I64])
    relaxed = opt_prop_def(UnitAttr)

    traits = traits_def(TxDelivery())

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$barrier (`[` $barrier_index^ `]`)? `peer` $peer (`expect_tx` $expect_tx^)? "
        "(`relaxed` $relaxed^)? attr-dict `:` type($barrier)"
    )

    def __init__(
        self,
        barrier: SSAValue | Operation,
        barrier_index: SSAValue | Operation | None,
        peer: SSAValue | Operation,
        *,
        expect_tx: int | None = None,
        relaxed: bool = False,
    ):
        super().__init__(
            operands=[barrier, barrier_index, peer],
            properties={
                "expect_tx": None if expect_tx is None else IntegerAttr(expect_tx, i64),
                "relaxed": UnitAttr() if relaxed else None,
            },
        )

    @property
    def is_relaxed(self) -> bool:
        """Whether the arrival orders only retired tensor-core reads (`.relaxed.cluster`)."""
        return self.relaxed is not None

    @property
    def tx_bytes(self) -> int:
        return 0 if self.expect_tx is None else self.expect_tx.value.data

    @property
    def delivered_bytes(self) -> int | None:
        # An arrival with expect_tx changes what the phase expects: the sums are unknown.
        return 0 if self.expect_tx is None else None

    def verify_(self) -> None:
        check_peer(self, self.peer)
        check_barrier_index(self.barrier, self.barrier_index)
        tx = self.tx_bytes
        # rule: TR17
        if not 0 <= tx < MAX_TX_BYTES:
            raise Error(
                f"expect_tx must be in [0, 2**20), got {tx} bytes",
                note="the mbarrier tx-count has 20 bits: split the transfer over several phases "
                f"(expect_tx {MAX_TX_BYTES // 1024} or less each, say 1024)",
            )


@copy_op_definition
class ClusterSyncOp(IRDLOperation):
    """
    The cluster's barrier: every thread of every CTA of the cluster arrives
    (`barrier.cluster.arrive`), then waits until all have (`barrier.cluster.wait`); after the
    wait a thread knows what every thread of the cluster did before its arrive (release and
    acquire at cluster scope). `arrive` or `wait` alone is half of it (a thread arrives,
    does other work, then waits); `relaxed` arrives without the release
    (`.relaxed`: the wait learns nothing of the arriver's memory ops); `aligned`
    (`.aligned`) promises that every thread of each warp executes the same instruction.

    ```mlir
    copy.cluster_sync
    copy.cluster_sync arrive relaxed aligned
    copy.cluster_sync wait aligned
    ```
    """

    name = "copy.cluster_sync"

    arrive = opt_prop_def(UnitAttr)
    wait = opt_prop_def(UnitAttr)
    relaxed = opt_prop_def(UnitAttr)
    aligned = opt_prop_def(UnitAttr)

    assembly_format = (
        "(`arrive` $arrive^)? (`wait` $wait^)? (`relaxed` $relaxed^)? (`aligned` $aligned^)? "
        "attr-dict"
    )

    def __init__(
        self, *, arrive: bool = False, wait: bool = False, relaxed: bool = False,
        aligned: bool = False,
    ):  # fmt: skip
        flags = {"arrive": arrive, "wait": wait, "relaxed": relaxed, "aligned": aligned}
        super().__init__(properties={k: UnitAttr() for k, on in flags.items() if on})

    @property
    def arrives(self) -> bool:
        return self.wait is None or self.arrive is not None

    @property
    def waits(self) -> bool:
        return self.arrive is None or self.wait is not None

    def verify_(self) -> None:
        target = enclosing_target(self)
        # rule: CL2
        if target is not None and not CLUSTERS.has(target):
            raise feature_error(self, CLUSTERS, target, note=retarget_note(CLUSTERS))
        # rule: CL1
        if self.arrive is not None and self.wait is not None:
            raise Error(
                "expected 'arrive', 'wait' or neither (both halves), got 'arrive wait'",
                note="drop 'arrive wait': copy.cluster_sync alone is the whole barrier "
                "(barrier.cluster.arrive, then barrier.cluster.wait)",
            )
        # rule: CL1
        if self.relaxed is not None and not self.arrives:
            raise Error(
                "'relaxed' qualifies the arrive, but this op only waits: "
                "barrier.cluster.wait has no relaxed form",
                note="drop 'relaxed' (copy.cluster_sync wait), or make it the arrive "
                "(copy.cluster_sync arrive relaxed)",
            )
