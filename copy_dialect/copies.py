"""`copy.async_copy`: a box between GMEM and SMEM, by TMA or cp.async.

This module holds the op and the rules every implementation shares; the TMA rules are in
`copy_dialect.tma`, the cp.async rules in `copy_dialect.cp_async`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from math import prod

from xdsl.dialects import memref
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
    Block,
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
    L2_POLICY_ENCODING,
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
from copy_dialect.cp_async import verify_tracked
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import CopyGeometry
from copy_dialect.gmem import check_gmem_layout
from copy_dialect.l2_policy import (
    policy_properties,
    policy_value,
    promotion_bytes,
    verify_cache_policy,
    verify_l2_promotion,
)
from copy_dialect.memory import (
    GMEM,
    SMEM,
    TMEM,
    bitwidth,
    memory_space,
    padded_stride,
    swizzle_of,
)
from copy_dialect.portability import legalize_hint
from copy_dialect.smem import FenceAsyncSharedOp
from copy_dialect.tensormap import check_copy_map
from copy_dialect.tma import check_tma_dtype
from copy_dialect.verification import checked_like, copy_op_definition, passed_like, per_run
from copy_dialect.verify_common import (
    check_barrier_index,
    check_contiguous_smem,
    cluster_shape,
    constant_int,
    enclosing_target,
)
from facts import hardware
from facts.target import MULTICAST_TARGETS, TCGEN05_TARGETS


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
        g = self.geometry()
        return g.barrier is not None and (self.arrive is None or self.arrive.value.data)

    def resolved_implementation(self) -> Implementation | None:
        """The implementation the IR asks for or, when it leaves it open, the target's: TMA
        on sm_90+, where a plain, unswizzled, in-bounds copy of one contiguous GMEM range
        that names no L2 promotion is a bulk copy instead (`bulk.bulk_fits`); cp.async
        before."""
        if self.implementation is not None:
            return self.implementation.data
        return per_run("implementation", self, self._default_implementation)

    def _default_implementation(self) -> Implementation | None:
        target = enclosing_target(self)
        if target is None:
            return None
        default = Implementation(target.default_implementation)
        # A copy through a map in global memory is a tensor copy (rule TU9), and so is one
        # that names an L2 promotion (a tensor map's).
        if (
            default == Implementation.TMA
            and self.map is None
            and self.l2_promotion is None
            and bulk.bulk_fits(self.geometry())
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
        if self.l2 is not None:
            return policy_value(self.l2, self.l2_fraction, self.l2_secondary)
        return None if self.cache_hint is None else self.cache_hint.value.data

    @property
    def l2_promotion_bytes(self) -> int:
        """The L2 promotion of the copy's tensor map in bytes (0: none)."""
        return promotion_bytes(self.l2_promotion)

    # -- verifier ------------------------------------------------------------------------

    def verify_(self) -> None:
        """Every rule below reads only the op's signature, its operands and what its parent
        op decides, except J16, which reads the ops before it: an op like one that passed
        them in this verification run (`checked_like`) is only checked for J16."""
        g = self.geometry()
        if checked_like(self, "async_copy"):
            impl = self.resolved_implementation()
            if impl is not None and impl.is_bulk_async:
                self._verify_fenced(g)
            return
        self._verify_spaces(g)
        self._verify_barrier_operands(g)
        check_contiguous_smem(g.smem_type)
        impl = self.resolved_implementation()
        self._verify_types(g, impl)
        self._verify_l2(impl)
        if impl == Implementation.TMA:
            tma.verify_copy(
                g,
                swizzle=None if self.swizzle is None else self.swizzle.value.data,
                partition_axis=None
                if self.leader_tracked is None
                else self.leader_tracked.partition_axis,
            )
            self._verify_fenced(g)
        elif impl == Implementation.BULK:
            bulk.verify_copy(g)
            self._verify_fenced(g)
        elif impl == Implementation.CP_ASYNC:
            cp_async.verify_copy(
                g,
                cache=None if self.cache is None else self.cache.data,
                tma_alternative=self.tma_alternative(g),
            )
        if self.map is not None:
            check_copy_map(g, self.map, impl)
            # rule: L9
            if self.l2_promotion is not None:
                raise Error(
                    "Expected no l2_promotion on a copy through a map in global memory: the "
                    "map's promotion is that of the map the runtime encodes for it (128 bytes)",
                    note="drop l2_promotion, or drop map(...) to use the kernel's .param map",
                )
        self._verify_constant_coordinates(g, impl)
        passed_like(self, "async_copy")

    def _verify_l2(self, impl: Implementation | None) -> None:
        """The L2 cache policy: one spelling, a valid policy, on a copy that takes one."""
        names = ", ".join(f"l2 {p}" for p in L2Policy)
        # rule: L2
        if self.l2 is not None and self.cache_hint is not None:
            raise Error(
                f"Expected one L2 cache policy, got l2 {self.l2.data} and cache_hint = "
                f"{self.cache_hint.value.data:#x}",
                note="drop the cache_hint attribute: l2 names the policy",
            )
        if self.cache_hint is not None:
            raw = self.cache_hint.value.data
            # rule: L1
            if raw not in L2_POLICY_ENCODING.values():
                raise Error(
                    f"Expected cache_hint to be an L2 cache policy, got {raw:#x}, which is "
                    "none of the policies createpolicy makes ("
                    + ", ".join(f"{p} {v:#x}" for p, v in L2_POLICY_ENCODING.items())
                    + ")",
                    note=f"drop the cache_hint attribute and name the policy: {names}",
                )
        verify_cache_policy(self.l2, self.l2_fraction, self.l2_secondary)
        # rule: L3
        if impl == Implementation.CP_ASYNC and (self.l2 is not None or self.cache_hint is not None):
            raise Error(
                "Expected no L2 cache policy on a cp.async copy: the cp.async lowering has no "
                "cache-hint operand",
                note="drop the L2 policy (l2 / cache_hint), or use impl tma on sm_90 or newer",
            )
        verify_l2_promotion(self.l2_promotion, impl)

    def _verify_spaces(self, g: CopyGeometry) -> None:
        src_type, dst_type = (g.gmem_type, g.smem_type) if g.is_load else (g.smem_type, g.gmem_type)
        src_space, dst_space = memory_space(src_type), memory_space(dst_type)
        # rule: B2
        if {src_space, dst_space} != {GMEM, SMEM}:
            raise Error(
                "Only SMEM <-> GMEM copies supported",
                note=f"got a copy from {src_space} to {dst_space}; a GMEM ref has no memory "
                "space and an SMEM ref has #copy.smem"
                + (
                    "; TMEM is reached with copy.tmem_load, copy.tmem_store and copy.smem_to_tmem"
                    if TMEM in (src_space, dst_space)
                    else ""
                ),
            )
        # rule: B1
        if src_type.element_type != dst_type.element_type:
            raise Error(
                f"Expected same element type, got {src_type.element_type} and "
                f"{dst_type.element_type}",
                note="copies do not convert: give both refs the same element type, "
                f"{src_type.element_type} or {dst_type.element_type}",
            )

    def _verify_types(self, g: CopyGeometry, impl: Implementation | None) -> None:
        """The rules on the box, element type, GMEM layout, direction and implementation."""
        gmem_type, smem_type = g.gmem_type, g.smem_type
        self._verify_indices(g, gmem_type, smem_type)
        self._verify_element_type(g, impl)
        check_gmem_layout(g, gmem_type, impl, self.cp_async_alternative(g))
        # What no implementation can do comes before what only another one can (E3 and B4
        # before A9, A4, A5): the direction's rules are the more specific.
        self._verify_direction(g)
        self._verify_implementation(g, impl)
        # rule: A3
        if impl is not None and impl.is_bulk_async and g.is_load and g.barrier is None:
            raise Error(
                f"Barriers are required for {impl.upper()} GMEM -> SMEM copies",
                note="give the load a barrier (barrier %bar[%i], from copy.barrier_init) and "
                "wait on it with copy.barrier_wait" + self.cp_async_alternative(g),
            )

    def _verify_barrier_operands(self, g: CopyGeometry) -> None:
        if g.barrier is not None:
            check_barrier_index(g.barrier, g.barrier_index)
            return
        # rule: I2
        if g.barrier_index is not None:
            raise Error(
                "a barrier index needs a barrier, but the copy has none",
                note="drop barrier_index, or pass the barrier group it indexes (barrier=)",
            )

    def _verify_indices(
        self, g: CopyGeometry, gmem_type: MemRefType, smem_type: MemRefType
    ) -> None:
        rank = gmem_type.get_num_dims()
        # rule: K1
        if len(g.gmem_indices) != rank:
            raise Error(
                f"expected {rank} coordinates, but got {len(g.gmem_indices)}",
                note=f"index the GMEM ref with the box origin, one index per dimension ({rank})",
            )
        slots = len(g.smem_indices)
        # rule: B12
        if slots >= smem_type.get_num_dims() and smem_type.get_num_dims() > 0:
            raise Error(
                f"The size of the SMEM `indices` must be smaller than the rank of the SMEM "
                f"ref ({smem_type.get_num_dims()}), got {slots}",
                note="SMEM indices pick a slot along leading dims; the remaining dims are the box: "
                f"use at most {smem_type.get_num_dims() - 1}",
            )
        # rule: B6
        if len(g.box_shape) > rank or not g.box_shape:
            src, dst = (gmem_type, g.box_shape) if g.is_load else (g.box_shape, gmem_type)
            src_shape = list(src.get_shape()) if isinstance(src, MemRefType) else list(src)
            dst_shape = list(dst.get_shape()) if isinstance(dst, MemRefType) else list(dst)
            raise Error(
                f"Expected shapes to match, but src has shape {src_shape} and dst has shape "
                f"{dst_shape}",
                note="the box (the SMEM ref's dims after its slot indices) may leave out "
                "leading GMEM dims, which are then copied with size 1, but not add dims: index "
                "a slot of the SMEM ref, or give the GMEM ref more dims",
            )

    def _verify_element_type(self, g: CopyGeometry, impl: Implementation | None) -> None:
        elt = g.element_type
        bits = bitwidth(elt)
        box = list(g.box_shape)
        # rule: B8
        if bits is None or (prod(box) * bits) % 8:
            raise Error(
                f"Can only transfer integer bytes (shape={box}, dtype={elt})",
                note="copy whole bytes: a box of sub-byte elements needs a multiple of "
                f"{8 // bits if bits else 8} elements, e.g. "
                f"{box[:-1] + [-(-box[-1] // (8 // bits)) * (8 // bits)] if box else [8 // bits]}"
                if bits
                else "use a numeric element type",
            )
        if impl == Implementation.TMA:
            check_tma_dtype(elt)
        # rule: C12
        if bits < 8:
            packing = 8 // bits
            assert isinstance(gmem_type := g.gmem.type, MemRefType)
            minor = gmem_type.get_shape()[-1] if gmem_type.get_num_dims() else 1
            if box[-1] % packing or (minor >= 0 and minor % packing):
                pads = []
                if minor >= 0 and minor % packing:
                    shape = [*gmem_type.get_shape()[:-1], padded_stride(minor, elt, 1)]
                    pads.append(f"the GMEM ref to {MemRefType(elt, shape)}")
                if box[-1] % packing:
                    pads.append(f"the box dim to {padded_stride(box[-1], elt, 1)}")
                raise Error(
                    f"sub-byte element type {elt}: the innermost GMEM dim ({minor}) and box "
                    f"dim ({box[-1]}) must be multiples of the packing {packing}",
                    note=f"pad the innermost dimension to whole bytes: {' and '.join(pads)}",
                )

    def _verify_implementation(self, g: CopyGeometry, impl: Implementation | None) -> None:
        target = enclosing_target(self)
        # rule: A1
        if impl == Implementation.BULK and target is not None and not target.has_tma:
            raise Error(
                f"the bulk implementation needs sm_90 or newer, but the target is {target.name}",
                note=(
                    "use impl cp_async without the barrier"
                    if g.is_load
                    else "store from threads with memref.store"
                )
                + ", or target sm_90 or newer"
                + legalize_hint(target),
            )
        # rule: A1
        if impl == Implementation.TMA and target is not None and not target.has_tma:
            cp_async = self.cp_async_alternative(g).removeprefix(", or ")
            if not g.is_load:
                note = "cp.async cannot store or reduce: target sm_90 or newer, or store from "
                note += "threads with memref.store"
            elif cp_async and g.barrier is None:
                note = f"{cp_async}, or leave the implementation open to let the target choose"
            else:
                note = (f"{cp_async}, or " if cp_async else "") + "target sm_90 or newer"
            raise Error(
                f"the TMA implementation needs sm_90 or newer, but the target is {target.name}",
                note=note + legalize_hint(target),
            )
        if impl is None or impl.is_bulk_async:
            return
        # rule: A9
        if self.reduction is not None:
            raise Error(
                "Only the TMA implementation supports reductions",
                note=self.tma_note(g, "sm_90 or newer"),
            )
        # A leader-tracked copy is also collective (D3): A5, the more specific rule, first.
        # rule: A5
        if self.leader_tracked is not None:
            raise Error(
                "Only the TMA implementation supports leader_tracked copies",
                note=self.tma_note(g, TCGEN05_TARGETS, target is not None and target.has_tcgen05)
                + legalize_hint(target),
            )
        # rule: A4
        if self.collective is not None:
            raise Error(
                "Only the TMA implementation supports collective copies",
                note=self.tma_note(
                    g, MULTICAST_TARGETS, target is not None and target.has_multicast
                )
                + legalize_hint(target),
            )
        # rule: B5
        if not g.is_load:
            raise Error(
                "CP_ASYNC implementation only supports GMEM -> SMEM copies",
                note="cp.async cannot store: use impl tma on sm_90 or newer, or store from threads "
                "with memref.store",
            )
        # rule: A2
        if g.barrier is not None and self.implementation is None:
            raise Error(
                "copy_gmem_to_smem with a barrier is only supported Hopper and newer GPUs, "
                "which use the TMA implementation",
                note="drop the barrier and wait with copy.commit_group cp_async + "
                "copy.wait_group cp_async, or use impl tma on sm_90+, or name impl cp_async to "
                "track the copy with the barrier (each issuing thread arrives once: count them "
                "in its arrivals)" + legalize_hint(target),
            )
        if g.barrier is not None:
            verify_tracked(self, g)
        # rule: A10, H1
        if self.predicate is not None:
            raise Error(
                "The cp.async implementation does not support user-defined predicates",
                note="all threads of the block issue a cp.async copy together: guard the "
                "whole copy with scf.if on a block-uniform condition"
                + (", or use impl tma" if target is not None and target.has_tma else ""),
            )

    def _verify_direction(self, g: CopyGeometry) -> None:
        if g.is_load:
            # rule: E3
            if self.reduction is not None:
                raise Error(
                    "Reductions are only supported for SMEM -> GMEM copies",
                    note="drop reduce for a plain load; a reduction is a store that combines "
                    "SMEM into GMEM: swap src and dst (and drop the barrier)",
                )
            return
        # rule: B3
        if g.barrier is not None:
            raise Error(
                "Barriers are unsupported for SMEM -> GMEM copies",
                note="drop the barrier: stores complete through bulk groups "
                "(copy.commit_group bulk, then copy.wait_group bulk)",
            )
        # rule: B4
        if self.collective is not None or self.leader_tracked is not None:
            raise Error(
                "Only GMEM -> SMEM copies can be collective",
                note="drop collective/leader_tracked: each CTA stores its own SMEM",
            )
        # rule: F1
        if self.oob is not None and self.oob.data in (OOBMode.ZEROS, OOBMode.NAN):
            raise Error(
                f"oob {self.oob.data} only applies to GMEM -> SMEM copies",
                note="a TMA store never writes outside the array (it clips); drop oob",
            )

    def _verify_fenced(self, g: CopyGeometry) -> None:
        """SMEM written by threads must be fenced before a TMA store reads it (J16)."""
        # rule: J16
        if not g.is_load and self.parent is not None and self in unfenced_stores(self.parent):
            raise Error(
                "SMEM written by threads must be made visible to the TMA unit before a "
                "TMA store reads it",
                note="add copy.fence_async_shared after the writes and before the copy, in "
                "this block (it includes the block barrier)",
            )

    def _verify_constant_coordinates(self, g: CopyGeometry, impl: Implementation | None) -> None:
        coords = [constant_int(i) for i in g.gmem_indices]
        bits = g.element_bits
        if impl == Implementation.TMA:
            inner = coords[-1] if coords else None
            multiple = hardware.COORDINATE_BYTES_MULTIPLE
            # rule: TR12
            if inner is not None and (inner * bits // 8) % multiple:
                raise Error(
                    f"the innermost TMA coordinate must be a multiple of {multiple} bytes, got "
                    f"{inner} ({inner * bits // 8} bytes)",
                    note="any other innermost coordinate is an illegal instruction on the GPU: "
                    f"start boxes at multiples of {max(1, 8 * multiple // bits)} elements",
                )
            for i, c in enumerate(coords):
                # rule: TR13
                if not g.is_load and c is not None and c < hardware.MIN_STORE_COORDINATE:
                    raise Error(
                        f"TMA store coordinates must be >= 0, got {c} at index {i}",
                        note="a negative store coordinate is an illegal instruction on the GPU "
                        "(loads may start out of bounds, stores may not): start at 0 or more",
                    )
        if g.oob != OOBMode.PROMISE_IN_BOUNDS:
            return
        outside = g.window_outside()
        # rule: F3
        if outside is not None:
            i, c, size, n = outside
            raise Error(
                f"the copy window [{c}, {c + size}) along dim {i} is out of bounds of the "
                f"GMEM ref (size {n}), but oob is promise_in_bounds",
                note="use oob zeros to fill the out-of-bounds part",
            )


def unfenced_stores(block: Block) -> set[AsyncCopyOp]:
    """The SMEM -> GMEM copies of `block` whose buffer the threads wrote earlier in the block
    with neither a `copy.fence_async_shared` nor another store from that buffer in between
    (rule J16). One pass over the block, once per verification run."""
    return per_run("unfenced stores", block, lambda: _unfenced_stores(block))


def _unfenced_stores(block: Block) -> set[AsyncCopyOp]:
    # Buffers the threads wrote since the last fence (and since the last store from them).
    written: set[SSAValue] = set()
    found: set[AsyncCopyOp] = set()
    for op in block.ops:
        if isinstance(op, FenceAsyncSharedOp):
            written.clear()
        elif isinstance(op, AsyncCopyOp) and not op.is_load:
            buffer = op.geometry().smem
            if buffer in written:
                found.add(op)
            written.discard(buffer)
        elif op.regions or isinstance(op, memref.StoreOp) or op.name in THREAD_STORES:
            written.update(thread_written(op))
    return found


THREAD_STORES = ("vector.store", "vector.transfer_write", "memref.copy")
"""Ops besides `memref.store` by which the threads write the refs among operands 1.."""


def thread_written(op: Operation) -> Iterator[SSAValue]:
    """The refs `op` (or an op nested in it) stores to from the threads."""
    for inner in op.walk():
        if isinstance(inner, memref.StoreOp):
            yield inner.memref
        elif inner.name in THREAD_STORES:
            yield from inner.operands[1:]
