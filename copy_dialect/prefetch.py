"""`copy.prefetch`: a TMA prefetch of a GMEM box into L2, or a bulk prefetch of the box's
one contiguous range (`impl bulk`)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
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
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
)

from copy_dialect import bulk, layout
from copy_dialect.attributes import (
    CachePolicy,
    Implementation,
    ImplementationAttr,
    L2Policy,
    L2PolicyAttr,
    OOBMode,
    enum_attr,
)
from copy_dialect.blackwell_maps import verify_blackwell_map
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import BoxGeometry
from copy_dialect.l2_policy import (
    policy_properties,
    policy_value,
    promotion_bytes,
    verify_cache_hint,
    verify_cache_policy,
    verify_l2_promotion,
)
from copy_dialect.memory import GMEM, memory_space
from copy_dialect.tma import (
    check_coordinate_range,
    check_kernel_argument,
    check_tma_box,
    check_tma_dtype,
    merged_leading_dims_example,
)
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import enclosing_target, feature_error
from facts.target import TMA


@copy_op_definition
class PrefetchOp(IRDLOperation):
    """
    Prefetches a box of a GMEM array into L2 (TMA `cp.async.bulk.prefetch.tensor`), with
    the L2 cache policy `l2` if given (its `fraction` and `secondary` priority, or a raw
    `cache_hint`, and the tensor map's `l2_promotion`, as on copy.async_copy), lowered to
    the instruction's `.L2::cache_hint`. With `impl bulk`, a box of
    whole rows is prefetched as its one contiguous byte range (`cp.async.bulk.prefetch.L2`,
    no tensor map; the rules of a bulk copy's GMEM side, BK1, BK2 and BK4, apply).

    ```mlir
    copy.prefetch %x[%i, %j] l2 evict_last {box = array<i64: 64, 64>} : memref<4096x4096xf32>
    ```
    """

    name = "copy.prefetch"

    src = operand_def(MemRefType)
    indices = var_operand_def(IndexType)

    box = prop_def(DenseArrayBase.constr(i64))
    implementation = opt_prop_def(ImplementationAttr)
    l2 = opt_prop_def(L2PolicyAttr)
    l2_fraction = opt_prop_def(FloatAttr[Float32Type])
    l2_secondary = opt_prop_def(L2PolicyAttr)
    l2_promotion = opt_prop_def(IntegerAttr[I64])
    cache_hint = opt_prop_def(IntegerAttr[I64])
    """A raw L2 cache policy (one of the documented encodings), as on copy.async_copy."""

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$src `[` $indices `]` (`impl` $implementation^)? (`l2` $l2^)? "
        "(`fraction` $l2_fraction^)? (`secondary` $l2_secondary^)? attr-dict `:` type($src)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
        box: Sequence[int],
        *,
        implementation: Implementation | str | None = None,
        l2: L2Policy | str | CachePolicy | None = None,
        l2_promotion: int | None = None,
        cache_hint: int | None = None,
    ):
        super().__init__(
            operands=[src, indices],
            properties={
                "box": DenseArrayBase.from_list(i64, box),
                "implementation": enum_attr(ImplementationAttr, Implementation, implementation),
                **policy_properties(l2),
                "l2_promotion": None if l2_promotion is None else IntegerAttr(l2_promotion, i64),
                "cache_hint": None if cache_hint is None else IntegerAttr(cache_hint, i64),
            },
        )

    @property
    def is_bulk(self) -> bool:
        """A bulk (non-tensor) prefetch of the box's contiguous range: `impl bulk`."""
        return self.implementation is not None and self.implementation.data == Implementation.BULK

    def l2_policy_value(self) -> int | CachePolicy | None:
        """The L2 cache-policy operand of the prefetch: a named policy's encoding or the raw
        `cache_hint`, the CachePolicy the kernel makes with createpolicy, None for none."""
        return policy_value(self.l2, self.l2_fraction, self.l2_secondary, self.cache_hint)

    @property
    def l2_promotion_bytes(self) -> int:
        """The L2 promotion of the prefetch's tensor map in bytes (0: none)."""
        return promotion_bytes(self.l2_promotion)

    def geometry(self) -> BoxGeometry:
        """The prefetched box and its tensor map (unswizzled, out-of-bounds parts zeros),
        decoded once (for the verifier and the lowering)."""
        assert isinstance(src_type := self.src.type, MemRefType)
        return BoxGeometry(
            gmem=self.src,
            gmem_type=src_type,
            gmem_indices=tuple(self.indices),
            box_shape=tuple(int(b) for b in self.box.get_values()),
            swizzle_bytes=layout.UNSWIZZLED,
            oob=OOBMode.ZEROS,
            reduction=None,
        )

    def verify_(self) -> None:
        g = self.geometry()
        src_type, box = g.gmem_type, g.box_shape
        # rule: B2
        if memory_space(src_type) != GMEM:
            raise Error(
                f"copy.prefetch reads GMEM, got a ref in {memory_space(src_type)}",
                note="prefetch a GMEM ref (a memref with no memory space)",
            )
        target = enclosing_target(self)
        # rule: A1
        if target is not None and not TMA.has(target):
            raise feature_error(
                self,
                TMA,
                target,
                note="drop copy.prefetch on this target, or target sm_90 or newer",
            )
        # rule: K1
        if len(self.indices) != src_type.get_num_dims():
            raise Error(
                f"expected {src_type.get_num_dims()} coordinates, but got {len(self.indices)}",
                note="index the GMEM ref with the box origin, one index per dimension",
            )
        impl = None if self.implementation is None else self.implementation.data
        # rule: BK6
        if impl == Implementation.CP_ASYNC:
            raise Error(
                "Expected impl tma or bulk on copy.prefetch, got impl cp_async: cp.async has "
                "no prefetch",
                note="use impl bulk for a box of whole rows, or drop impl for a TMA prefetch",
            )
        verify_cache_hint(self.l2, self.cache_hint)
        verify_cache_policy(self.l2, self.l2_fraction, self.l2_secondary)
        verify_l2_promotion(self.l2_promotion, impl)
        if impl == Implementation.BULK:
            bulk.bulk_span(g)
            self._verify_in_bounds(g)
            return
        rank = src_type.get_num_dims()
        check_tma_dtype(src_type.element_type, packed=True)
        verify_blackwell_map(self, g)
        check_tma_box(
            g,
            rank_note=f"the box {list(box)} needs 1 to 5 dims and at most the ref's rank {rank}"
            + (f": reshape the array{merged_leading_dims_example(src_type)}" if rank > 5 else ""),
            size_note="prefetch 1 to 256 elements per dimension",
        )
        check_coordinate_range(self.indices, "TMA prefetch")
        check_kernel_argument(self, self.src)

    def _verify_in_bounds(self, g: BoxGeometry) -> None:
        """A bulk prefetch's constant coordinates keep its box inside the array (BK4); the
        debug guards check dynamic ones at run time."""
        outside = g.window_outside()
        # rule: BK4
        if outside is not None:
            d, c, size, n = outside
            raise Error(
                f"Expected the bulk prefetch's box to lie inside the array, but its window "
                f"[{c}, {c + size}) along dim {d} leaves [0, {n})",
                note=f"start the box at 0 to {n - size} along dim {d}, or drop impl bulk "
                "for a TMA prefetch, which skips what lies outside",
            )
