"""The mbarrier ops beyond an arrival and a wait on this CTA's barriers:
`copy.barrier_arrive_drop` (an arrival that lowers the count of every later phase),
`copy.barrier_expect_tx` and `copy.barrier_complete_tx` (the transaction count without an
arrival), and the end and new start of a barrier group's life, `copy.barrier_inval` and
`copy.barrier_reinit`. Their names are upstream NVVM's (`nvvm.mbarrier.arrive_drop`,
`.expect_tx`, `.complete_tx`, `.inval`); `nocomplete` is a property, as Mosaic GPU's
`arrive(can_complete=False)` (docs/design.md, "mbarrier breadth")."""

from __future__ import annotations

from xdsl.dialects.builtin import I32, I64, IndexType, IntegerAttr, UnitAttr, i32, i64
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    traits_def,
)

from copy_dialect.attributes import BarrierType, Issuer, IssuerAttr, enum_attr
from copy_dialect.barriers import (
    MAX_TX_BYTES,
    Reinitializes,
    check_arrival_count,
    check_arrivals,
)
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.roles import check_block_wide
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import check_barrier_index, enclosing_target, feature_error
from facts.target import ARRIVE_COUNTS, TX_COUNTS


def check_tx_target(op: Operation, uses: str = "") -> None:
    """Transaction counts exist from sm_90 on (MB4); `uses` names the option of `op` that
    needs them, where the op itself does not."""
    target = enclosing_target(op)
    # rule: MB4
    if target is not None and not TX_COUNTS.has(target):
        raise feature_error(
            op,
            TX_COUNTS,
            target,
            uses=uses,
            note=f"{target.name} has no transaction counts: arrive with copy.barrier_arrive "
            "once the data is written, or target sm_90+",
        )


def check_tx_bytes(nbytes: int, what: str) -> None:
    """A transaction count operand is in [0, 2**20) (MB5)."""
    # rule: MB5
    if not 0 <= nbytes < MAX_TX_BYTES:
        raise Error(
            f"{what} must be in [0, 2**20) bytes, got {nbytes}",
            note=f"the mbarrier tx-count has 20 bits (2**20 kills the kernel with "
            f"CUDA_ERROR_LAUNCH_FAILED): use at most {MAX_TX_BYTES - 1} bytes, and split "
            "a larger transfer over several phases",
        )


@copy_op_definition
class BarrierArriveDropOp(IRDLOperation):
    """
    Arrives on a barrier and drops out of it (`mbarrier.arrive_drop`): the arrival counts
    `count` toward the current phase, and every later phase expects `count` fewer arrivals
    (for a thread or warp that stops taking part, e.g. a consumer past its last tile).
    `issuer` is barrier_arrive's (each arriving thread, warp or the elected thread drops
    `count`); `nocomplete` promises the arrival does not complete the phase (sm_80);
    `expect_tx` raises the transaction count first (`mbarrier.arrive_drop.expect_tx`,
    sm_90, one arrival). A count other than 1 without `nocomplete` needs sm_90.

    ```mlir
    copy.barrier_arrive_drop %bars[%i] count 1 issuer warps : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_arrive_drop"

    barrier = operand_def(BarrierType)
    index = opt_operand_def(IndexType)

    count = opt_prop_def(IntegerAttr[I32])
    nocomplete = opt_prop_def(UnitAttr)
    expect_tx = opt_prop_def(IntegerAttr[I64])
    issuer = opt_prop_def(IssuerAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$barrier (`[` $index^ `]`)? (`count` $count^)? (`nocomplete` $nocomplete^)? "
        "(`expect_tx` $expect_tx^)? (`issuer` $issuer^)? attr-dict `:` type($barrier)"
    )

    def __init__(
        self,
        barrier: SSAValue | Operation,
        index: SSAValue | Operation | None = None,
        *,
        count: int | None = None,
        nocomplete: bool = False,
        expect_tx: int | None = None,
        issuer: Issuer | str | None = None,
    ):
        super().__init__(
            operands=[barrier, index],
            properties={
                "count": None if count is None else IntegerAttr(count, i32),
                "nocomplete": UnitAttr() if nocomplete else None,
                "expect_tx": None if expect_tx is None else IntegerAttr(expect_tx, i64),
                "issuer": enum_attr(IssuerAttr, Issuer, issuer),
            },
        )

    @property
    def arriving(self) -> Issuer:
        """Who arrives: each thread (the default), one lane per warp, or the elected one."""
        return Issuer.THREADS if self.issuer is None else self.issuer.data

    @property
    def arrivals(self) -> int:
        """Arrivals (and arrivals dropped) per arriving thread, warp or elected thread."""
        return 1 if self.count is None else self.count.value.data

    def verify_(self) -> None:
        check_barrier_index(self.barrier, self.index)
        count = self.arrivals
        # rule: MB1
        if count < 1:
            raise Error(
                f"barrier_arrive_drop count must be at least 1, got {count}",
                note="drop count to arrive and drop once",
            )
        nocomplete = self.nocomplete is not None
        check_arrival_count(count, "barrier_arrive_drop")
        if self.expect_tx is not None:
            self._verify_expect_tx()
            return
        target = enclosing_target(self)
        # rule: MB3
        if target is not None and not ARRIVE_COUNTS.has(target) and count != 1 and not nocomplete:
            raise feature_error(
                self,
                ARRIVE_COUNTS,
                target,
                uses=f"with count {count}",
                note=f"arrive_drop {count} times, add nocomplete (if this arrival must not "
                "complete the phase), or target sm_90+",
            )

    def _verify_expect_tx(self) -> None:
        assert self.expect_tx is not None
        # rule: MB6
        if self.count is not None or self.nocomplete is not None:
            raise Error(
                "barrier_arrive_drop with expect_tx arrives once and may complete the phase: "
                "expected no count and no nocomplete, got "
                + ("a count" if self.count is not None else "nocomplete"),
                note="mbarrier.arrive_drop.expect_tx has neither: drop count and nocomplete, or "
                "raise the tx count with copy.barrier_expect_tx and arrive apart",
            )
        check_tx_target(self, "with expect_tx")
        check_tx_bytes(self.expect_tx.value.data, "expect_tx")


@copy_op_definition
class BarrierExpectTxOp(IRDLOperation):
    """
    Raises the barrier's transaction count by `bytes` without arriving
    (`mbarrier.expect_tx`, sm_90); the elected thread of the block or role issues it. The
    phase then completes only once `bytes` more have landed (copies that complete tx, or
    copy.barrier_complete_tx).

    ```mlir
    copy.barrier_expect_tx %bars[%i], 4096 : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_expect_tx"

    barrier = operand_def(BarrierType)
    index = opt_operand_def(IndexType)

    bytes = prop_def(IntegerAttr[I64])

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$barrier (`[` $index^ `]`)? `,` $bytes attr-dict `:` type($barrier)"

    def __init__(
        self,
        barrier: SSAValue | Operation,
        index: SSAValue | Operation | None = None,
        *,
        bytes: int,
    ):
        super().__init__(operands=[barrier, index], properties={"bytes": IntegerAttr(bytes, i64)})

    def verify_(self) -> None:
        check_barrier_index(self.barrier, self.index)
        check_tx_target(self)
        check_tx_bytes(self.bytes.value.data, "barrier_expect_tx")


@copy_op_definition
class BarrierCompleteTxOp(IRDLOperation):
    """
    Completes `bytes` of the barrier's transaction count without arriving
    (`mbarrier.complete_tx`, sm_90), as a copy's landing would: for data the threads wrote
    themselves. Each thread that reaches it completes `bytes` (`issuer threads`, the
    default), one lane per warp once the warp has synchronized (`issuer warps`), or the
    elected thread only (`issuer elected`). complete_tx is relaxed: the lowering puts a
    `fence.acq_rel.cta` before it, so that the writes it stands for are released to the
    threads that wait on the phase.

    ```mlir
    copy.barrier_complete_tx %bars[%i], 512 issuer warps : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_complete_tx"

    barrier = operand_def(BarrierType)
    index = opt_operand_def(IndexType)

    bytes = prop_def(IntegerAttr[I64])
    issuer = opt_prop_def(IssuerAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$barrier (`[` $index^ `]`)? `,` $bytes (`issuer` $issuer^)? attr-dict `:` type($barrier)"
    )

    def __init__(
        self,
        barrier: SSAValue | Operation,
        index: SSAValue | Operation | None = None,
        *,
        bytes: int,
        issuer: Issuer | str | None = None,
    ):
        super().__init__(
            operands=[barrier, index],
            properties={
                "bytes": IntegerAttr(bytes, i64),
                "issuer": enum_attr(IssuerAttr, Issuer, issuer),
            },
        )

    @property
    def arriving(self) -> Issuer:
        """Who completes the bytes: each thread (the default), one lane per warp, or the
        elected one."""
        return Issuer.THREADS if self.issuer is None else self.issuer.data

    def verify_(self) -> None:
        check_barrier_index(self.barrier, self.index)
        check_tx_target(self)
        check_tx_bytes(self.bytes.value.data, "barrier_complete_tx")


@copy_op_definition
class BarrierInvalOp(IRDLOperation):
    """
    Invalidates every barrier of the group (`mbarrier.inval`, sm_80): a block barrier, then
    the elected thread invalidates them. Until a `copy.barrier_reinit` of the group, any
    other use of its barriers is undefined. The barriers' SMEM is theirs for the whole
    kernel (the arena never lends it to another buffer): inval is what a reinit needs.

    ```mlir
    copy.barrier_inval %bars : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_inval"

    barrier = operand_def(BarrierType)

    assembly_format = "$barrier attr-dict `:` type($barrier)"

    def __init__(self, barrier: SSAValue | Operation):
        super().__init__(operands=[barrier])

    def verify_(self) -> None:
        check_block_wide(self, "barrier_inval")


@copy_op_definition
class BarrierReinitOp(IRDLOperation):
    """
    Initializes every barrier of an invalidated group again, to expect `arrivals` arrivals
    per phase, from phase 0 (`mbarrier.init` on the group's SMEM): the elected thread
    initializes, then the block synchronizes, as copy.barrier_init.

    ```mlir
    copy.barrier_reinit %bars arrivals 2 : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_reinit"

    barrier = operand_def(BarrierType)

    arrivals = prop_def(IntegerAttr[I32])

    traits = traits_def(Reinitializes())

    assembly_format = "$barrier `arrivals` $arrivals attr-dict `:` type($barrier)"

    def __init__(self, barrier: SSAValue | Operation, arrivals: int = 1):
        super().__init__(operands=[barrier], properties={"arrivals": IntegerAttr(arrivals, i32)})

    def verify_(self) -> None:
        check_arrivals(self.arrivals.value.data)
        check_block_wide(self, "barrier_reinit")
