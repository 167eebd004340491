"""mbarrier: init, arrive, arrive with an expected transaction count, and the parity waits
(upstream NVVMOps.td's `NVVM_MBarrier*` ops, and an sm_80 `test_wait` of ours)."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I1, I32, I64, i64
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_operand_def, result_def

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import SHARED_PTR
from passes.nvvm.emit import arg, asm, call, call_bound, predicated


class _CountOp(IRDLOperation):
    """An mbarrier op on `[addr]` with a count, predicated when `predicate` is given: a call
    of `INTRINSIC` (returning `RET`, which the op drops) without a predicate, inline `PTX`
    (`$0` the address, `$1` the count) with one."""

    INTRINSIC: ClassVar[str]
    RET: ClassVar[str] = "void"
    PTX: ClassVar[str]

    addr = operand_def(SHARED_PTR)
    count = operand_def(I32)
    predicate = opt_operand_def(I1)

    assembly_format = (
        "$addr `,` $count (`,` `predicate` `=` $predicate^)? attr-dict `:` type(operands)"
    )

    def __init__(
        self,
        addr: SSAValue | Operation,
        count: SSAValue | Operation,
        predicate: SSAValue | Operation | None = None,
    ):
        super().__init__(operands=[addr, count, predicate])

    def to_llvm_ir(self, e: IREmitter) -> None:
        if self.predicate is None:
            call(e, self.INTRINSIC, [arg(e, self.addr), arg(e, self.count)], ret=self.RET)
            return
        asm(e, predicated(self.PTX, self.predicate, 2), [self.addr, self.count, self.predicate])


@irdl_op_definition
class MBarrierInitSharedOp(_CountOp):
    """`mbarrier.init.shared.b64 [addr], count` (sm_80), predicated when `predicate` is given.

    ```mlir
    nvvm.mbarrier.init.shared %bar, %count : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.mbarrier.init.shared"

    INTRINSIC: ClassVar[str] = "llvm.nvvm.mbarrier.init.shared"
    PTX: ClassVar[str] = "mbarrier.init.shared.b64 [$0], $1;"


@irdl_op_definition
class MBarrierArriveSharedOp(IRDLOperation):
    """`mbarrier.arrive.shared.b64 state, [addr]` (sm_80): arrives once, returns the phase
    state.

    ```mlir
    %state = nvvm.mbarrier.arrive.shared %bar : !llvm.ptr<3> -> i64
    ```
    """

    name = "nvvm.mbarrier.arrive.shared"

    addr = operand_def(SHARED_PTR)
    res = result_def(I64)

    assembly_format = "$addr attr-dict `:` type($addr) `->` type($res)"

    def __init__(self, addr: SSAValue | Operation):
        super().__init__(operands=[addr], result_types=[i64])

    def to_llvm_ir(self, e: IREmitter) -> None:
        call_bound(e, self.res, "llvm.nvvm.mbarrier.arrive.shared", [arg(e, self.addr)])


@irdl_op_definition
class MBarrierArriveExpectTxSharedOp(_CountOp):
    """`mbarrier.arrive.expect_tx.shared.b64 _, [addr], txcount` (sm_90): expects `count`
    (upstream's `txcount`) more transaction bytes, then arrives once.

    ```mlir
    nvvm.mbarrier.arrive.expect_tx.shared %bar, %bytes : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.mbarrier.arrive.expect_tx.shared"

    # The intrinsic returns the phase state, which the op drops (PTX's `_`).
    INTRINSIC: ClassVar[str] = "llvm.nvvm.mbarrier.arrive.expect.tx.scope.cta.space.cta"
    RET: ClassVar[str] = "i64"
    PTX: ClassVar[str] = "mbarrier.arrive.expect_tx.shared.b64 _, [$0], $1;"


# The waits loop in one asm block: the emitter has no basic blocks of its own. Braces scope
# the predicate and the labels, ${:uid} keeps copies of the asm distinct.
_WAIT_LOOP = (
    "{{ .reg .pred P1; LAB_WAIT_${{:uid}}: {test} P1, [$0], {operands}; "
    "@P1 bra DONE_${{:uid}}; bra LAB_WAIT_${{:uid}}; DONE_${{:uid}}: }}"
)


@irdl_op_definition
class MBarrierTryWaitParitySharedOp(IRDLOperation):
    """Waits until the phase with parity `phase` of the mbarrier completes (sm_90): loops
    on `mbarrier.try_wait.parity.shared::cta.b64`, with `ticks` as its suspend-time hint,
    like upstream's lowering.

    ```mlir
    nvvm.mbarrier.try_wait.parity.shared %bar, %phase, %ticks : !llvm.ptr<3>, i32, i32
    ```
    """

    name = "nvvm.mbarrier.try_wait.parity.shared"

    addr = operand_def(SHARED_PTR)
    phase = operand_def(I32)
    ticks = operand_def(I32)

    assembly_format = "$addr `,` $phase `,` $ticks attr-dict `:` type(operands)"

    def __init__(
        self, addr: SSAValue | Operation, phase: SSAValue | Operation, ticks: SSAValue | Operation
    ):
        super().__init__(operands=[addr, phase, ticks])

    def to_llvm_ir(self, e: IREmitter) -> None:
        test = "mbarrier.try_wait.parity.shared::cta.b64"
        asm(e, _WAIT_LOOP.format(test=test, operands="$1, $2"), [self.addr, self.phase, self.ticks])


@irdl_op_definition
class MBarrierTestWaitParitySharedOp(IRDLOperation):
    """Waits until the phase with parity `phase` of the mbarrier completes, on sm_80: loops
    on `mbarrier.test_wait.parity.shared.b64` (PTX 7.1). Not upstream: NVVM has no parity
    test_wait op, and `try_wait` needs sm_90.

    ```mlir
    nvvm.mbarrier.test_wait.parity.shared %bar, %phase : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.mbarrier.test_wait.parity.shared"

    addr = operand_def(SHARED_PTR)
    phase = operand_def(I32)

    assembly_format = "$addr `,` $phase attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue | Operation, phase: SSAValue | Operation):
        super().__init__(operands=[addr, phase])

    def to_llvm_ir(self, e: IREmitter) -> None:
        test = "mbarrier.test_wait.parity.shared.b64"
        asm(e, _WAIT_LOOP.format(test=test, operands="$1"), [self.addr, self.phase])


class _PtxOp(IRDLOperation):
    """An mbarrier op on `[addr]` with an i32 operand (`count` or `txcount`, when `PTX` has
    `$1`): inline `PTX` (`$0` the address). The arrivals' state results are dropped (PTX's
    `_`): no lowering reads them."""

    PTX: ClassVar[str]

    addr = operand_def(SHARED_PTR)

    def to_llvm_ir(self, e: IREmitter) -> None:
        asm(e, self.PTX, self.operands)


class _PtxCountOp(_PtxOp):
    addr = operand_def(SHARED_PTR)
    count = operand_def(I32)

    assembly_format = "$addr `,` $count attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue | Operation, count: SSAValue | Operation):
        super().__init__(operands=[addr, count])


@irdl_op_definition
class MBarrierArriveNocompleteSharedOp(_PtxCountOp):
    """`mbarrier.arrive.noComplete.shared::cta.b64 _, [addr], count` (sm_80): `count`
    arrivals that must not complete the phase.

    ```mlir
    nvvm.mbarrier.arrive.nocomplete.shared %bar, %count : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.mbarrier.arrive.nocomplete.shared"

    PTX: ClassVar[str] = "mbarrier.arrive.noComplete.shared::cta.b64 _, [$0], $1;"


@irdl_op_definition
class MBarrierArriveDropOp(_PtxOp):
    """`mbarrier.arrive_drop.shared::cta.b64 _, [addr]{, count}`: arrives (`count` times,
    sm_90; once, sm_80) and lowers the expected arrival count of every later phase as much.

    ```mlir
    nvvm.mbarrier.arrive_drop %bar, %count : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.mbarrier.arrive_drop"

    addr = operand_def(SHARED_PTR)
    count = opt_operand_def(I32)

    assembly_format = "$addr (`,` $count^)? attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue | Operation, count: SSAValue | Operation | None = None):
        super().__init__(operands=[addr, count])

    def to_llvm_ir(self, e: IREmitter) -> None:
        tail = "" if self.count is None else ", $1"
        asm(e, f"mbarrier.arrive_drop.shared::cta.b64 _, [$0]{tail};", self.operands)


@irdl_op_definition
class MBarrierArriveDropNocompleteOp(_PtxCountOp):
    """`mbarrier.arrive_drop.noComplete.shared::cta.b64 _, [addr], count` (sm_80).

    ```mlir
    nvvm.mbarrier.arrive_drop.nocomplete %bar, %count : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.mbarrier.arrive_drop.nocomplete"

    PTX: ClassVar[str] = "mbarrier.arrive_drop.noComplete.shared::cta.b64 _, [$0], $1;"


@irdl_op_definition
class MBarrierArriveDropExpectTxOp(_PtxCountOp):
    """`mbarrier.arrive_drop.expect_tx.shared::cta.b64 _, [addr], txcount` (sm_90): expects
    `count` (upstream's `txcount`) more bytes, then arrives once and drops out.

    ```mlir
    nvvm.mbarrier.arrive_drop.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.mbarrier.arrive_drop.expect_tx"

    PTX: ClassVar[str] = "mbarrier.arrive_drop.expect_tx.shared::cta.b64 _, [$0], $1;"


@irdl_op_definition
class MBarrierExpectTxOp(_PtxCountOp):
    """`mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [addr], txcount` (sm_90): raises the
    transaction count without arriving.

    ```mlir
    nvvm.mbarrier.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.mbarrier.expect_tx"

    PTX: ClassVar[str] = "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$0], $1;"


@irdl_op_definition
class MBarrierCompleteTxOp(_PtxCountOp):
    """`mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [addr], txcount` (sm_90):
    completes `txcount` bytes of the transaction count without arriving.

    ```mlir
    nvvm.mbarrier.complete_tx %bar, %bytes : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.mbarrier.complete_tx"

    PTX: ClassVar[str] = "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [$0], $1;"


@irdl_op_definition
class MBarrierInvalSharedOp(_PtxOp):
    """`mbarrier.inval.shared::cta.b64 [addr]` (sm_80): invalidates the mbarrier.

    ```mlir
    nvvm.mbarrier.inval.shared %bar : !llvm.ptr<3>
    ```
    """

    name = "nvvm.mbarrier.inval.shared"

    PTX: ClassVar[str] = "mbarrier.inval.shared::cta.b64 [$0];"

    assembly_format = "$addr attr-dict `:` type($addr)"

    def __init__(self, addr: SSAValue | Operation):
        super().__init__(operands=[addr])
