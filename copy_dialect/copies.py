"""`copy.async_copy`: a box between GMEM and SMEM, by TMA or cp.async.

This module holds the op and its derived facts; the rules every implementation shares are in
`copy_dialect.copy_checks`, the TMA rules in `copy_dialect.tma`, the cp.async rules in
`copy_dialect.cp_async`, the bulk rules in `copy_dialect.bulk`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I1,
    I64,
    BoolAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
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
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect

from copy_dialect import bulk, cp_async, tma
from copy_dialect.attributes import (
    BarrierType,
    CacheMode,
    CacheModeAttr,
    CachePolicy,
    Implementation,
    ImplementationAttr,
    L2Policy,
    L2PolicyAttr,
    LeaderTrackedAttr,
    OOBMode,
    OOBModeAttr,
    ReductionKind,
    ReductionKindAttr,
    TensorMapType,
    enum_attr,
)
from copy_dialect.blackwell_maps import (
    check_align16_by_tma,
    check_map_value_swizzle,
    verify_blackwell_map,
)
from copy_dialect.copy_checks import (
    check_applicable,
    check_barrier_operands,
    check_constant_coordinates,
    check_l2,
    check_spaces,
    check_types,
)
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import CopyGeometry
from copy_dialect.l2_policy import (
    policy_properties,
    policy_value,
    promotion_bytes,
)
from copy_dialect.memory import (
    GMEM,
    memory_space,
    swizzle_of,
)
from copy_dialect.tensormap import check_copy_map
from copy_dialect.verification import checked_like, copy_op_definition, passed_like, per_run
from copy_dialect.verify_common import (
    check_contiguous_smem,
    check_smem_indices,
    cluster_shape,
    enclosing_target,
)


@copy_op_definition
class AsyncCopyOp(IRDLOperation):
    """
    Starts an asynchronous copy of a box between GMEM and SMEM; the direction follows the
    memory spaces. The GMEM side is indexed with the box origin (one index per GMEM dim);
    the SMEM side may be indexed on its leading dims to pick a slot of a multi-buffer, and
    its remaining dims are the box. A load signals `barrier` when its bytes have landed
    (and, unless `arrive = false`, arrives on it expecting them); a store completes
    through bulk groups (`copy.commit_group bulk`).

    ```mlir
    copy.async_copy %x[%i, %j] to %buf[%slot] barrier %bars[%slot] oob zeros
        : memref<4096x4096xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
    ```
    """

    name = "copy.async_copy"

    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    src_indices = var_operand_def(IndexType)
    dst_indices = var_operand_def(IndexType)
    barrier = opt_operand_def(BarrierType)
    barrier_index = opt_operand_def(IndexType)
    predicate = opt_operand_def(I1)
    map = opt_operand_def(TensorMapType)
    """A tensor map in global memory (`copy.tensormap_global`) to issue through, instead of
    the kernel's `.param` map of the GMEM ref."""

    implementation = opt_prop_def(ImplementationAttr)
    reduction = opt_prop_def(ReductionKindAttr)
    collective = opt_prop_def(DenseArrayBase.constr(i64))
    leader_tracked = opt_prop_def(LeaderTrackedAttr)
    oob = opt_prop_def(OOBModeAttr)
    swizzle = opt_prop_def(IntegerAttr[I64])
    arrive = opt_prop_def(BoolAttr)
    cache = opt_prop_def(CacheModeAttr)
    l2 = opt_prop_def(L2PolicyAttr)
    l2_fraction = opt_prop_def(FloatAttr[Float32Type])
    """The share of accesses that get `l2`'s priority (`fraction`), the others getting
    `l2_secondary`'s (`secondary`): createpolicy.fractional's operands."""
    l2_secondary = opt_prop_def(L2PolicyAttr)
    cache_hint = opt_prop_def(IntegerAttr[I64])
    """The raw 64-bit L2 cache-policy operand: accepted only as one of the encodings of
    `l2`'s named policies (L1), which is the spelling to use."""
    l2_promotion = opt_prop_def(IntegerAttr[I64])
    """The L2 promotion of the TMA copy's tensor map in bytes (0: none; default 128)."""

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$src (`[` $src_indices^ `]`)? `to` $dst (`[` $dst_indices^ `]`)? "
        "(`barrier` $barrier^ `[` $barrier_index `]`)? (`if` $predicate^)? "
        "(`map` `(` $map^ `:` type($map) `)`)? "
        "(`impl` $implementation^)? (`reduce` $reduction^)? (`oob` $oob^)? "
        "(`leader_tracked` $leader_tracked^)? (`cache` $cache^)? "
        "(`l2` $l2^)? (`fraction` $l2_fraction^)? (`secondary` $l2_secondary^)? "
        "attr-dict `:` type($src) `to` type($dst) (`,` type($barrier)^)?"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        src_indices: Sequence[SSAValue | Operation] = (),
        dst_indices: Sequence[SSAValue | Operation] = (),
        barrier: SSAValue | Operation | None = None,
        barrier_index: SSAValue | Operation | None = None,
        predicate: SSAValue | Operation | None = None,
        map: SSAValue | Operation | None = None,
        implementation: Implementation | str | None = None,
        reduction: ReductionKind | str | None = None,
        collective: Sequence[int] | None = None,
        leader_tracked: LeaderTrackedAttr | None = None,
        oob: OOBMode | str | None = None,
        swizzle: int | None = None,
        arrive: bool | None = None,
        cache: CacheMode | str | None = None,
        l2: L2Policy | str | CachePolicy | None = None,
        cache_hint: int | None = None,
        l2_promotion: int | None = None,
    ):
        super().__init__(
            operands=[
                src,
                dst,
                src_indices,
                dst_indices,
                barrier,
                barrier_index,
                predicate,
                map,
            ],
            properties={
                "implementation": enum_attr(ImplementationAttr, Implementation, implementation),
                "reduction": enum_attr(ReductionKindAttr, ReductionKind, reduction),
                "collective": None
                if collective is None
                else DenseArrayBase.from_list(i64, collective),
                "leader_tracked": leader_tracked,
                "oob": enum_attr(OOBModeAttr, OOBMode, oob),
                "swizzle": None if swizzle is None else IntegerAttr(swizzle, i64),
                "arrive": None if arrive is None else BoolAttr.from_bool(arrive),
                "cache": enum_attr(CacheModeAttr, CacheMode, cache),
                **policy_properties(l2),
                "cache_hint": None if cache_hint is None else IntegerAttr(cache_hint, i64),
                "l2_promotion": None if l2_promotion is None else IntegerAttr(l2_promotion, i64),
            },
        )

    # -- derived facts, used by the verifier and by the lowering ------------------------

    def geometry(self) -> CopyGeometry:
        """Direction, operands by memory space, the box and its tensor map, decoded once
        (for the verifier and the lowering; once per verification run)."""
        return per_run("geometry", self, self._decode_geometry)

    def _decode_geometry(self) -> CopyGeometry:
        operands = tuple(self.operands)
        src, dst = operands[0], operands[1]
        assert isinstance(src_type := src.type, MemRefType)
        assert isinstance(dst_type := dst.type, MemRefType)
        sizes = self.properties["operandSegmentSizes"]
        assert isinstance(sizes, DenseArrayBase)
        n_src, n_dst, n_barrier, n_index, n_predicate = (int(v) for v in sizes.get_values()[2:7])
        src_indices = operands[2 : 2 + n_src]
        dst_indices = operands[2 + n_src : 2 + n_src + n_dst]
        barrier_at = 2 + n_src + n_dst
        is_load = memory_space(src_type) == GMEM
        gmem, gmem_type, gmem_indices = (
            (src, src_type, src_indices) if is_load else (dst, dst_type, dst_indices)
        )
        smem, smem_type, smem_indices = (
            (dst, dst_type, dst_indices) if is_load else (src, src_type, src_indices)
        )
        return CopyGeometry(
            gmem=gmem,
            gmem_type=gmem_type,
            gmem_indices=gmem_indices,
            box_shape=smem_type.get_shape()[len(smem_indices) :],
            swizzle_bytes=swizzle_of(smem_type),
            oob=self._oob_mode(is_load),
            reduction=None if self.reduction is None else self.reduction.data,
            is_load=is_load,
            smem=smem,
            smem_type=smem_type,
            smem_indices=smem_indices,
            barrier=operands[barrier_at] if n_barrier else None,
            barrier_index=operands[barrier_at + n_barrier] if n_index else None,
            predicate=operands[barrier_at + n_barrier + n_index] if n_predicate else None,
            collective_dims=self.collective_dims,
            leader_tracked=self.leader_tracked is not None,
            arrives=bool(n_barrier) and (self.arrive is None or bool(self.arrive.value.data)),
            op=self,
        )

    @property
    def is_load(self) -> bool:
        """GMEM -> SMEM (else SMEM -> GMEM)."""
        return self.geometry().is_load

    @property
    def box_bytes(self) -> int:
        """Bytes the copy delivers (what a barrier is credited, OOB parts included)."""
        return self.geometry().box_bytes

    @property
    def credited_bytes(self) -> int:
        """Bytes the copy credits its barrier with (`CopyGeometry.credited_bytes`)."""
        return self.geometry().credited_bytes

    @property
    def collective_dims(self) -> tuple[int, ...]:
        return () if self.collective is None else tuple(self.collective.get_values())

    @property
    def oob_mode(self) -> OOBMode:
        return self.geometry().oob

    def _oob_mode(self, is_load: bool) -> OOBMode:
        if self.oob is not None:
            return self.oob.data
        return OOBMode.ZEROS if is_load else OOBMode.UNDEFINED

    @property
    def arrives(self) -> bool:
        """Whether the copy itself arrives on its barrier expecting its bytes."""
        return self.geometry().arrives

    def resolved_implementation(self, g: CopyGeometry | None = None) -> Implementation | None:
        """The implementation the IR asks for or, when it leaves it open, the target's: TMA
        on sm_90+, where a plain, unswizzled, in-bounds copy of one contiguous GMEM range
        that names no L2 promotion is a bulk copy instead (`bulk.bulk_fits`); cp.async
        before. `g`: the op's geometry where the caller decoded it already (a lowering
        does, once per op), else it is decoded here if the choice needs it."""
        if self.implementation is not None:
            return self.implementation.data
        return per_run("implementation", self, lambda: self._default_implementation(g))

    def is_cp_async(self) -> bool:
        """Whether `resolved_implementation` is cp.async, asked without the geometry (which
        only tells a bulk copy from a TMA one): for a phase that wants no other fact of the
        copy, such as the lowering's search for the arrays cp.async copies read."""
        implementation = (
            self._target_implementation()
            if self.implementation is None
            else self.implementation.data
        )
        return implementation == Implementation.CP_ASYNC

    def _target_implementation(self) -> Implementation | None:
        target = enclosing_target(self)
        return None if target is None else Implementation(target.default_implementation)

    def _default_implementation(self, g: CopyGeometry | None) -> Implementation | None:
        default = self._target_implementation()
        # A copy through a map in global memory is a tensor copy (rule TU9), and so is one
        # that names an L2 promotion (a tensor map's).
        if (
            default == Implementation.TMA
            and self.map is None
            and self.l2_promotion is None
            and bulk.bulk_fits(self.geometry() if g is None else g)
        ):
            return Implementation.BULK
        return default

    def cp_async_alternative(self, g: CopyGeometry) -> str:
        """`, or use impl cp_async` where cp.async can do this copy instead of TMA, else ''."""
        if not g.is_load or g.swizzle_bytes != 16 or g.oob == OOBMode.NAN:
            return ""
        if any(a is not None for a in (self.collective, self.leader_tracked, self.predicate)):
            return ""
        without = " without the barrier" if g.barrier is not None else ""
        return ", or use impl cp_async" + without

    def tma_alternative(self, g: CopyGeometry) -> str:
        """`, or use impl tma` (with a barrier for a load) where the target has TMA, else ''."""
        target = enclosing_target(self)
        if target is None or not target.has_tma:
            return ""
        with_barrier = " with a barrier" if g.is_load and g.barrier is None else ""
        return ", or use impl tma" + with_barrier

    def tma_note(self, g: CopyGeometry, targets: str, has: bool = False) -> str:
        """The note of a rule that only TMA supports: `impl tma` on `targets` (on the enclosing
        target where it has the feature: `has`), plus what a TMA copy needs."""
        if has:
            target = enclosing_target(self)
            assert target is not None
            targets = target.name
        elif ", " in targets:
            targets = f"one of {targets}"
        needs = []
        if self.leader_tracked is not None and self.collective is None:
            axis = next((d for d, n in enumerate(cluster_shape(self)) if n > 1), 0)
            needs.append(f"collective = array<i64: {axis}>")
        if g.is_load and g.barrier is None:
            needs.append("a barrier (barrier %bar[%i])")
        return f"use impl tma on {targets}" + (f", with {' and '.join(needs)}" if needs else "")

    def l2_policy_value(self) -> int | CachePolicy | None:
        """The L2 cache-policy operand of the copy's TMA instruction: a named policy's
        encoding, or the raw `cache_hint` the verifier accepted; the CachePolicy that the
        kernel makes with createpolicy (a fraction, a secondary priority, evict_unchanged);
        None for none."""
        return policy_value(self.l2, self.l2_fraction, self.l2_secondary, self.cache_hint)

    @property
    def l2_promotion_bytes(self) -> int:
        """The L2 promotion of the copy's tensor map in bytes (0: none)."""
        return promotion_bytes(self.l2_promotion)

    # -- verifier ------------------------------------------------------------------------

    def verify_(self) -> None:
        """Every rule below reads only the op's signature, its operands and what its parent
        op decides: an op like one that passed them in this verification run
        (`checked_like`) is not checked again."""
        g = self.geometry()
        if checked_like(self, "async_copy"):
            return
        check_spaces(self, g)
        check_barrier_operands(self, g)
        check_contiguous_smem(g.smem_type)
        check_smem_indices(g.smem_type, g.smem_indices)
        impl = self.resolved_implementation(g)
        check_types(self, g, impl)
        check_l2(self, impl)
        check_applicable(self, g, impl)
        if impl == Implementation.TMA:
            tma.verify_copy(
                g,
                swizzle=None if self.swizzle is None else self.swizzle.value.data,
                partition_axis=None
                if self.leader_tracked is None
                else self.leader_tracked.partition_axis,
            )
            verify_blackwell_map(self, g)
        elif impl == Implementation.BULK:
            check_align16_by_tma(g)
            bulk.verify_copy(g)
        elif impl == Implementation.CP_ASYNC:
            check_align16_by_tma(g)
            cp_async.verify_copy(
                g,
                cache=None if self.cache is None else self.cache.data,
                tma_alternative=self.tma_alternative(g),
            )
        if self.map is not None:
            check_map_value_swizzle(g)
            check_copy_map(g, self.map, impl)
            # rule: L9
            if self.l2_promotion is not None:
                raise Error(
                    "Expected no l2_promotion on a copy through a map in global memory: the "
                    "map's promotion is that of the map the runtime encodes for it (128 bytes)",
                    note="drop l2_promotion, or drop map(...) to use the kernel's .param map",
                )
        check_constant_coordinates(self, g, impl)
        passed_like(self, "async_copy")
