"""Cluster launch control (CLC), the persistent kernels' work stealing on sm_100 and newer:
`copy.try_cancel` and `copy.query_cancel`, PTX's `clusterlaunchcontrol.try_cancel` and
`clusterlaunchcontrol.query_cancel` (PTX ISA 8.6, "Parallel Synchronization and
Communication Instructions: clusterlaunchcontrol").

A CTA that has finished its tile asks the hardware to cancel the launch of a cluster that has
not started yet and takes over that cluster's work. The PTX ISA:

- `clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128
  [addr], [mbar]` writes an opaque 16-byte response into the CTA's SMEM at `addr` (16-byte
  aligned) asynchronously and, once written, performs complete-tx of its 16 bytes on `mbar`:
  like a TMA load of 16 bytes that does not arrive (the CTA arrives on the barrier expecting
  them, `copy.barrier_arrive_expect_tx %b[%k], 16`, as CUTLASS's CLC pipeline does). With
  `.multicast::cluster::all` the response is written to the same SMEM offset of every CTA
  of the cluster, each completing on its own barrier at `mbar`'s offset (each CTA expects
  the 16 bytes on its own barrier). Issued by one thread (the group's elected thread).
- `clusterlaunchcontrol.query_cancel.is_canceled.pred.b128` and
  `.get_first_ctaid{::x,::y,::z}.b32.b128` decode a response, read from SMEM once the
  barrier's phase is observed: whether a cluster was canceled and, if so, the ctaid of its
  first CTA (undefined otherwise).

The ISA's one hazard beyond the response's lifetime: a try_cancel issued after the CTA has
observed a failed one is undefined behaviour (the grid has no clusters left to cancel), so a
persistent loop ends at the first failed response.

The response slot is SMEM written by the async proxy: a `#copy.smem` memref, unswizzled and
row-major, indexed down to a 16-byte slot (`memref<2x16xi8, #copy.smem>[%s]`,
`memref<2x2xi64, #copy.smem>[%s]`, `memref<16xi8, #copy.smem>`); the protocol analysis
follows the write as a fill of that slot on the barrier's phase (observed before the query
reads it, rewritten only after every reader has read it).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects.builtin import I32, IndexType, MemRefType, NoneAttr, UnitAttr, i1, i32
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect

from copy_dialect.attributes import BarrierType
from copy_dialect.dsmem import TxDelivery
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.memory import SMEM, bitwidth, memory_space, swizzle_of
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import (
    check_barrier_index,
    enclosing_target,
    feature_error,
    retarget_note,
)
from facts.target import Feature

RESPONSE_BYTES = 16
"""The response a try_cancel writes: an opaque 16-byte value (`.b128`), 16-byte aligned."""

CLUSTER_LAUNCH_CONTROL = Feature("cluster launch control", lambda t: t.sm >= 100)
"""`clusterlaunchcontrol.try_cancel` / `query_cancel`: PTX ISA 8.6, "requires sm_100 or
higher" (ptxas 13.0 assembles them for sm_100a/f, sm_103a, sm_110a/f, sm_120 and sm_120a)."""
CLC_MULTICAST = Feature(
    "clusterlaunchcontrol .multicast::cluster::all",
    lambda t: t.sm >= 100 and t.suffix in ("a", "f"),
)
"""`.multicast::cluster::all`: the arch- and family-specific targets sm_100a/f, sm_103a,
sm_110a/f, sm_120a (ptxas 13.0: "not supported on .target 'sm_120'", nor sm_100)."""


def response_slot_problem(t: MemRefType, indices: int) -> str | None:
    """Why `t` indexed by `indices` leading indices is no response slot, or None."""
    if memory_space(t) != SMEM:
        return f"the response buffer must be SMEM (#copy.smem), got {t}"
    if swizzle_of(t) != 16:
        return f"the response buffer must not be swizzled, got {t}"
    if not isinstance(t.layout, NoneAttr) or any(d < 0 for d in t.get_shape()):
        return f"the response buffer must be a static row-major buffer, got {t}"
    shape = t.get_shape()
    if indices > len(shape):
        return f"{indices} indices for the {len(shape)}-d response buffer {t}"
    bits = bitwidth(t.get_element_type())
    slot = prod(shape[indices:]) * (bits or 0) // 8
    if slot != RESPONSE_BYTES:
        return (
            f"a response slot holds {RESPONSE_BYTES} bytes, but {t} indexed by {indices} "
            f"{'index' if indices == 1 else 'indices'} leaves {slot}"
        )
    return None


def _verify_response(op: Operation, t: MemRefType, indices: int) -> None:
    problem = response_slot_problem(t, indices)
    # rule: LC3
    if problem is not None:
        slots = "".join(f"{d}x" for d in t.get_shape()[:indices] if d >= 0)
        raise Error(
            problem,
            note=f"allocate the responses as copy.alloc_smem : memref<{slots}16xi8, #copy.smem> "
            "(no swizzle, one 16-byte slot per index) and index one slot",
        )


def _verify_target(op: Operation) -> None:
    target = enclosing_target(op)
    # rule: LC1
    if target is not None and not CLUSTER_LAUNCH_CONTROL.has(target):
        raise feature_error(
            op,
            CLUSTER_LAUNCH_CONTROL,
            target,
            note=f"{retarget_note(CLUSTER_LAUNCH_CONTROL)}, or launch one CTA per tile "
            "instead of a persistent loop",
        )


class ResponseDelivery(TxDelivery):
    """A try_cancel completes its response's 16 bytes on its barrier (a multicast one on
    the barrier at the same offset in every CTA of the cluster): what the kernel rules' phase
    sums (TR16, D10) count for it."""

    def delivery(self, op: Operation) -> tuple[SSAValue, SSAValue | None, int | None]:
        assert isinstance(op, TryCancelOp)
        return op.barrier, op.barrier_index, RESPONSE_BYTES


@copy_op_definition
class TryCancelOp(IRDLOperation):
    """
    Asks to cancel the launch of a cluster that has not started running (one request, by the
    group's elected thread): `clusterlaunchcontrol.try_cancel`. Its 16-byte response lands in
    the SMEM slot `%resp[...]` and completes 16 transaction bytes on `barrier` (it does not
    arrive: the CTA arrives expecting 16 bytes). `multicast` writes the response to the same
    slot of every CTA of the cluster, each completing on its own barrier (sm_100a/f, sm_103a,
    sm_110a/f, sm_120a). Read it with copy.query_cancel once the barrier's phase has completed.

    ```mlir
    copy.barrier_arrive_expect_tx %bars[%slot], 16 : !copy.barrier<2>
    copy.try_cancel %resp[%slot] barrier %bars[%slot]
        : memref<2x16xi8, #copy.smem>, !copy.barrier<2>
    ```
    """

    name = "copy.try_cancel"

    response = operand_def(MemRefType)
    response_indices = var_operand_def(IndexType)
    barrier = operand_def(BarrierType)
    barrier_index = opt_operand_def(IndexType)
    multicast = opt_prop_def(UnitAttr)

    traits = traits_def(MemoryWriteEffect(), ResponseDelivery())

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$response (`[` $response_indices^ `]`)? `barrier` $barrier (`[` $barrier_index^ `]`)? "
        "(`multicast` $multicast^)? attr-dict `:` type($response) `,` type($barrier)"
    )

    def __init__(
        self,
        response: SSAValue | Operation,
        barrier: SSAValue | Operation,
        *,
        response_indices: Sequence[SSAValue | Operation] = (),
        barrier_index: SSAValue | Operation | None = None,
        multicast: bool = False,
    ):
        super().__init__(
            operands=[response, response_indices, barrier, barrier_index],
            properties={"multicast": UnitAttr() if multicast else None},
        )

    @property
    def is_multicast(self) -> bool:
        return self.multicast is not None

    def verify_(self) -> None:
        assert isinstance(self.response.type, MemRefType)
        _verify_target(self)
        target = enclosing_target(self)
        # rule: LC2
        if self.is_multicast and target is not None and not CLC_MULTICAST.has(target):
            raise feature_error(
                self,
                CLC_MULTICAST,
                target,
                uses="with multicast",
                note=f"{retarget_note(CLC_MULTICAST)}, or drop multicast and let each CTA "
                "request its own cluster",
            )
        _verify_response(self, self.response.type, len(self.response_indices))
        check_barrier_index(self.barrier, self.barrier_index)


@copy_op_definition
class QueryCancelOp(IRDLOperation):
    """
    Decodes the response of a copy.try_cancel from its SMEM slot (read by every thread that
    reaches it, after the barrier's phase completed): whether a cluster was canceled and the
    ctaid (x, y, z) of its first CTA, undefined where none was
    (`clusterlaunchcontrol.query_cancel.is_canceled` / `.get_first_ctaid::{x,y,z}`).

    ```mlir
    copy.barrier_wait %bars[%slot], %parity : !copy.barrier<2>
    %canceled, %cx, %cy, %cz = copy.query_cancel %resp[%slot] : memref<2x16xi8, #copy.smem>
    ```
    """

    name = "copy.query_cancel"

    response = operand_def(MemRefType)
    response_indices = var_operand_def(IndexType)
    canceled = result_def(i1)
    first_x = result_def(I32)
    first_y = result_def(I32)
    first_z = result_def(I32)

    traits = traits_def(MemoryReadEffect())

    assembly_format = "$response (`[` $response_indices^ `]`)? attr-dict `:` type($response)"

    def __init__(
        self,
        response: SSAValue | Operation,
        response_indices: Sequence[SSAValue | Operation] = (),
    ):
        super().__init__(operands=[response, response_indices], result_types=[i1, i32, i32, i32])

    def verify_(self) -> None:
        assert isinstance(self.response.type, MemRefType)
        _verify_target(self)
        _verify_response(self, self.response.type, len(self.response_indices))
