"""mbarriers: `copy.barrier_init`, `copy.barrier_arrive`, `copy.barrier_arrive_expect_tx`,
`copy.barrier_wait` and `copy.barrier_test`."""

from __future__ import annotations

from math import prod

from xdsl.dialects.builtin import (
    I1,
    I32,
    I64,
    IndexType,
    IntegerAttr,
    UnitAttr,
    i1,
    i32,
    i64,
)
from xdsl.ir import (
    Operation,
    SSAValue,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import OpTrait

from copy_dialect.attributes import (
    BarrierScope,
    BarrierScopeAttr,
    BarrierType,
    Issuer,
    IssuerAttr,
    enum_attr,
)
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.roles import check_block_wide
from copy_dialect.smem import SmemAllocation
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import (
    check_barrier_index,
    enclosing_kernel,
    enclosing_target,
    feature_error,
    kernel_cluster_shape,
    retarget_note,
)
from facts import hardware
from facts.target import ARRIVE_COUNTS, CLUSTERS, TRY_WAIT, TX_COUNTS

BARRIER_BYTES = 8
"""An mbarrier is one 8-byte, 8-byte aligned word of SMEM."""


MAX_TX_BYTES = hardware.MAX_TX_COUNT
"""The mbarrier tx-count is below 2**20 (an H200 faults at 2**20: TR17, docs/hardware.md)."""


MAX_ARRIVALS = 1 << 20
"""The mbarrier arrival count is below 2**20 (PTX: mbarrier.init's count is 20 bits)."""


class Reinitializes(OpTrait):
    """An op that initializes its barrier group again (`copy.barrier_reinit`), with the
    arrival count of its `arrivals` property."""


def check_arrival_count(count: int, what: str) -> None:
    """An arrival of `count` (barrier_arrive, barrier_arrive_drop) fits the mbarrier's 20-bit
    counts (MB1). That a nocomplete one leaves the phase an arrival to go (MB2) is a kernel
    rule (`analysis.kernel.barriers`): it reads the group's init and reinits."""
    # rule: MB1
    if count >= MAX_ARRIVALS:
        raise Error(
            f"{what} count must be below 2**20, got {count}",
            note=f"the mbarrier pending count is a 20-bit field: arrive at most "
            f"{MAX_ARRIVALS - 1} at a time",
        )


def check_arrivals(arrivals: int) -> None:
    """A barrier's arrival count (barrier_init, barrier_reinit) is in [1, 2**20)."""
    # rule: I7
    if arrivals < 1:
        raise Error(
            f"count must be greater than or equal to 1, got {arrivals}",
            note="arrivals is the number of arrive operations that complete a phase: use 1 or more",
        )
    # rule: I8
    if arrivals >= MAX_ARRIVALS:
        raise Error(
            f"arrivals must be below 2**20, got {arrivals}",
            note=f"the mbarrier arrival count is a 20-bit field: use at most "
            f"{MAX_ARRIVALS - 1} arrivals",
        )


class BarrierFootprint(SmemAllocation):
    def footprint(self, op: Operation) -> tuple[int, int]:
        assert isinstance(op, BarrierInitOp)
        assert isinstance(t := op.result.type, BarrierType)
        return BARRIER_BYTES * t.count.data, BARRIER_BYTES


@copy_op_definition
class BarrierInitOp(IRDLOperation):
    """
    Allocates a group of mbarriers in SMEM and initializes each to expect `arrivals`
    arrivals per phase (one thread initializes, then the block synchronizes).

    ```mlir
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_init"

    arrivals = prop_def(IntegerAttr[I32])

    result = result_def(BarrierType)

    traits = traits_def(BarrierFootprint())

    assembly_format = "`arrivals` $arrivals attr-dict `:` type($result)"

    def __init__(self, count: int, arrivals: int = 1):
        super().__init__(
            properties={"arrivals": IntegerAttr(arrivals, i32)},
            result_types=[BarrierType(count)],
        )

    def verify_(self) -> None:
        check_arrivals(self.arrivals.value.data)
        self._verify_cluster_target()
        check_block_wide(self, "barrier_init")

    def _verify_cluster_target(self) -> None:
        """A kernel with a cluster initializes its barriers for the cluster (a cluster
        barrier after the init), which needs a target with clusters (A15)."""
        kernel = enclosing_kernel(self)
        target = enclosing_target(self)
        if kernel is None or target is None or CLUSTERS.has(target):
            return
        cluster = kernel_cluster_shape(kernel)
        # rule: A15
        if prod(cluster) > 1:
            raise feature_error(
                self,
                CLUSTERS,
                target,
                uses=f"in a kernel with the cluster {list(cluster)}",
                note="drop copy.cluster from the kernel, or target sm_90 or newer",
            )


@copy_op_definition
class BarrierArriveOp(IRDLOperation):
    """
    Arrives on a barrier of the group (`mbarrier.arrive`), `count` times, from each thread
    that reaches it (`issuer threads`, the default), from one lane of each warp once the warp
    has synchronized (`issuer warps`), or from the elected thread of the block or role only
    (`issuer elected`): a phase completes after `arrivals` arrivals (copy.barrier_init).
    `nocomplete` (`mbarrier.arrive.noComplete`, sm_80) promises that the arrival does not
    complete the phase (if it would, the behaviour is undefined).

    ```mlir
    copy.barrier_arrive %bars[%i] issuer warps : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_arrive"

    barrier = operand_def(BarrierType)
    index = opt_operand_def(IndexType)

    count = opt_prop_def(IntegerAttr[I32])
    nocomplete = opt_prop_def(UnitAttr)
    scope = opt_prop_def(BarrierScopeAttr)
    issuer = opt_prop_def(IssuerAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$barrier (`[` $index^ `]`)? (`count` $count^)? (`nocomplete` $nocomplete^)? "
        "(`scope` $scope^)? (`issuer` $issuer^)? attr-dict `:` type($barrier)"
    )

    def __init__(
        self,
        barrier: SSAValue | Operation,
        index: SSAValue | Operation | None = None,
        *,
        count: int | None = None,
        nocomplete: bool = False,
        scope: BarrierScope | str | None = None,
        issuer: Issuer | str | None = None,
    ):
        super().__init__(
            operands=[barrier, index],
            properties={
                "count": None if count is None else IntegerAttr(count, i32),
                "nocomplete": UnitAttr() if nocomplete else None,
                "scope": enum_attr(BarrierScopeAttr, BarrierScope, scope),
                "issuer": enum_attr(IssuerAttr, Issuer, issuer),
            },
        )

    @property
    def arriving(self) -> Issuer:
        """Who arrives: each thread (the default), one lane per warp, or the elected one."""
        return Issuer.THREADS if self.issuer is None else self.issuer.data

    @property
    def arrivals(self) -> int:
        """Arrivals per arriving thread, warp or elected thread (`count`, 1 without)."""
        return 1 if self.count is None else self.count.value.data

    def verify_(self) -> None:
        check_barrier_index(self.barrier, self.index)
        target = enclosing_target(self)
        count = 1 if self.count is None else self.count.value.data
        # rule: I9
        if count < 1:
            raise Error(f"count must be at least 1, got {count}", note="drop count to arrive once")
        check_arrival_count(count, "barrier_arrive")
        # rule: A12
        if (
            target is not None
            and not ARRIVE_COUNTS.has(target)
            and count != 1
            and self.nocomplete is None
        ):
            raise feature_error(
                self,
                ARRIVE_COUNTS,
                target,
                uses=f"with count {count}",
                note=f"{target.name} has no mbarrier.arrive count: arrive {count} times, "
                "arrive nocomplete (if it must not complete the phase), or target sm_90+",
            )
        # rule: MB7
        if (
            self.nocomplete is not None
            and self.scope is not None
            and (self.scope.data == BarrierScope.CLUSTER)
        ):
            raise Error(
                "a nocomplete arrival is CTA-scoped: expected scope cta, got scope cluster",
                note="mbarrier.arrive.noComplete has no .cluster scope: drop scope cluster, or "
                "drop nocomplete",
            )
        # rule: I6
        if (
            self.scope is not None
            and self.scope.data == BarrierScope.CLUSTER
            and target is not None
            and not CLUSTERS.has(target)
        ):
            raise feature_error(
                self,
                CLUSTERS,
                target,
                uses="with scope cluster",
                note=f"drop scope cluster, or {retarget_note(CLUSTERS)}",
            )


@copy_op_definition
class BarrierArriveExpectTxOp(IRDLOperation):
    """
    Arrives on a barrier and raises its transaction count by `bytes`
    (`mbarrier.arrive.expect_tx`), for copies issued with `arrive = false`.

    ```mlir
    copy.barrier_arrive_expect_tx %bars[%i], 16384 : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_arrive_expect_tx"

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
        target = enclosing_target(self)
        # rule: A11
        if target is not None and not TX_COUNTS.has(target):
            raise feature_error(
                self,
                TX_COUNTS,
                target,
                note=f"{target.name} has no transaction counts: use copy.barrier_arrive",
            )
        expected = self.bytes.value.data
        # rule: TR17
        if not 0 <= expected < MAX_TX_BYTES:
            raise Error(
                f"expect_tx must be in [0, 2**20), got {expected} bytes",
                note="the mbarrier tx-count has 20 bits (2**20 kills the kernel with "
                "CUDA_ERROR_LAUNCH_FAILED): split the transfer over several phases",
            )


@copy_op_definition
class BarrierWaitOp(IRDLOperation):
    """
    Waits until the barrier's phase with the given parity has completed
    (`mbarrier.try_wait.parity` on sm_90+, a `test_wait` loop before). It blocks the threads
    that execute it only. `suspend_hint` is try_wait's time limit in nanoseconds for one
    suspended try (default 10,000,000, as CUTLASS), after which the thread tries again.

    ```mlir
    copy.barrier_wait %bars[%i], %parity suspend_hint 1000 : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_wait"

    barrier = operand_def(BarrierType)
    index = opt_operand_def(IndexType)
    parity = operand_def(I1)

    suspend_hint = opt_prop_def(IntegerAttr[I32])

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$barrier (`[` $index^ `]`)? `,` $parity (`suspend_hint` $suspend_hint^)? attr-dict "
        "`:` type($barrier)"
    )

    def __init__(
        self,
        barrier: SSAValue | Operation,
        index: SSAValue | Operation | None,
        parity: SSAValue | Operation,
        *,
        suspend_hint: int | None = None,
    ):
        super().__init__(
            operands=[barrier, index, parity],
            properties={
                "suspend_hint": None if suspend_hint is None else IntegerAttr(suspend_hint, i32)
            },
        )

    def verify_(self) -> None:
        check_barrier_index(*self.barrier_operands())
        if self.suspend_hint is not None:
            hint = self.suspend_hint.value.data
            # rule: W13
            if hint < 0:
                raise Error(
                    f"suspend_hint is a time in nanoseconds: expected 0 or more, got {hint}",
                    note="drop suspend_hint for the default (10,000,000 ns)",
                )
            target = enclosing_target(self)
            # rule: W13
            if target is not None and not TRY_WAIT.has(target):
                raise feature_error(
                    self,
                    TRY_WAIT,
                    target,
                    uses="with suspend_hint",
                    note=f"drop suspend_hint: on {target.name} a wait polls test_wait",
                )

    def barrier_operands(self) -> tuple[SSAValue, SSAValue | None]:
        """The barrier group and the index in it (operands 0 and, of three, 1): what the
        `barrier` and `index` accessors give, without decoding the operand segments."""
        operands = self.operands
        return operands[0], operands[1] if len(operands) == 3 else None


@copy_op_definition
class BarrierTestOp(IRDLOperation):
    """
    Tests, without blocking, whether the barrier's phase with the given parity has completed
    (`mbarrier.test_wait.parity`): true once it has, and then the phase's copies have
    landed for the thread that tested.

    ```mlir
    %ready = copy.barrier_test %bars[%i], %parity : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_test"

    barrier = operand_def(BarrierType)
    index = opt_operand_def(IndexType)
    parity = operand_def(I1)

    result = result_def(I1)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = "$barrier (`[` $index^ `]`)? `,` $parity attr-dict `:` type($barrier)"

    def __init__(
        self,
        barrier: SSAValue | Operation,
        index: SSAValue | Operation | None,
        parity: SSAValue | Operation,
    ):
        super().__init__(operands=[barrier, index, parity], result_types=[i1])

    def verify_(self) -> None:
        check_barrier_index(self.barrier, self.index)
