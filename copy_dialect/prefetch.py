"""`copy.prefetch`: a TMA prefetch of a GMEM box into L2."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IndexType,
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

from copy_dialect import layout
from copy_dialect.attributes import L2_POLICY_ENCODING, L2Policy, L2PolicyAttr, OOBMode, enum_attr
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import BoxGeometry
from copy_dialect.memory import GMEM, memory_space
from copy_dialect.tma import (
    check_kernel_argument,
    check_tma_box,
    check_tma_dtype,
    merged_leading_dims_example,
)
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import enclosing_target


@copy_op_definition
class PrefetchOp(IRDLOperation):
    """
    Prefetches a box of a GMEM array into L2 (TMA `cp.async.bulk.prefetch.tensor`), with
    the L2 cache policy `l2` if given (as on copy.async_copy).

    ```mlir
    copy.prefetch %x[%i, %j] l2 evict_last {box = array<i64: 64, 64>} : memref<4096x4096xf32>
    ```
    """

    name = "copy.prefetch"

    src = operand_def(MemRefType)
    indices = var_operand_def(IndexType)

    box = prop_def(DenseArrayBase.constr(i64))
    l2 = opt_prop_def(L2PolicyAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$src `[` $indices `]` (`l2` $l2^)? attr-dict `:` type($src)"

    def __init__(
        self,
        src: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
        box: Sequence[int],
        *,
        l2: L2Policy | str | None = None,
    ):
        super().__init__(
            operands=[src, indices],
            properties={
                "box": DenseArrayBase.from_list(i64, box),
                "l2": enum_attr(L2PolicyAttr, L2Policy, l2),
            },
        )

    def l2_policy_value(self) -> int | None:
        """The L2 cache-policy operand of the prefetch (`l2`'s encoding), None for none."""
        return None if self.l2 is None else L2_POLICY_ENCODING[self.l2.data]

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
        if target is not None and not target.has_tma:
            raise Error(
                f"copy.prefetch uses TMA, which needs sm_90 or newer, but the target is "
                f"{target.name}",
                note="drop copy.prefetch on this target, or target sm_90 or newer",
            )
        # rule: K1
        if len(self.indices) != src_type.get_num_dims():
            raise Error(
                f"expected {src_type.get_num_dims()} coordinates, but got {len(self.indices)}",
                note="index the GMEM ref with the box origin, one index per dimension",
            )
        rank = src_type.get_num_dims()
        check_tma_dtype(src_type.element_type)
        check_tma_box(
            g,
            rank_note=f"the box {list(box)} needs 1 to 5 dims and at most the ref's rank {rank}"
            + (f": reshape the array{merged_leading_dims_example(src_type)}" if rank > 5 else ""),
            size_note="prefetch 1 to 256 elements per dimension",
        )
        check_kernel_argument(self, self.src)

