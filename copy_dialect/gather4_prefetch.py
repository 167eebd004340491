"""`copy.gather4_prefetch`: four rows of a 2-D GMEM array into L2, through the tiled map of
`copy.gather4` (`cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4`; the rules it
shares with gather4 and scatter4 are `copy_dialect.gather4`'s)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import I64, IndexType, IntegerAttr, MemRefType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    operand_def,
    prop_def,
    var_operand_def,
)

from copy_dialect.attributes import CachePolicy, L2Policy, OOBMode
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.gather4 import ROWS, _Gather4Base
from copy_dialect.gather4_targets import GATHER4_PREFETCH
from copy_dialect.geometry import BoxGeometry
from copy_dialect.l2_policy import policy_properties
from copy_dialect.memory import GMEM, memory_space
from copy_dialect.verification import copy_op_definition
from facts.target import Feature


@copy_op_definition
class Gather4PrefetchOp(_Gather4Base):
    """
    Prefetches four rows of a 2-D GMEM array (`rows`), `width` columns each from `column`
    on, into L2 (`cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4`: sm_100a/f,
    sm_103a, sm_110a/f), through a tiled map whose box is one row `[1, width]`; `l2 ...` and
    `l2_promotion` as on copy.gather4. A hint: it moves no data the kernel sees.

    ```mlir
    copy.gather4_prefetch %x rows [%i, %j, %n, %h] column [%c] {width = 64}
        : memref<4096x4096xf32>
    ```
    """

    name = "copy.gather4_prefetch"

    src = operand_def(MemRefType)
    rows = var_operand_def(IndexType)
    column = var_operand_def(IndexType)
    width = prop_def(IntegerAttr[I64])

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$src `rows` `[` $rows `]` `column` `[` $column `]` "
        "(`l2` $l2^)? (`fraction` $l2_fraction^)? (`secondary` $l2_secondary^)? "
        "attr-dict `:` type($src)"
    )

    FEATURE: ClassVar[Feature] = GATHER4_PREFETCH

    def __init__(
        self,
        src: SSAValue | Operation,
        *,
        rows: Sequence[SSAValue | Operation],
        column: SSAValue | Operation,
        width: int,
        l2: L2Policy | str | CachePolicy | None = None,
        l2_promotion: int | None = None,
    ):
        super().__init__(
            operands=[src, rows, [column]],
            properties={
                "width": IntegerAttr(width, i64),
                **policy_properties(l2),
                "l2_promotion": None if l2_promotion is None else IntegerAttr(l2_promotion, i64),
            },
        )

    def geometry(self) -> _PrefetchGeometry:
        """The 4-row tile the prefetch reads, as a box of the 2-D array."""
        assert isinstance(gmem_type := self.src.type, MemRefType)
        return _PrefetchGeometry(
            gmem=self.src,
            gmem_type=gmem_type,
            gmem_indices=tuple(self.rows[:1]) + tuple(self.column[:1]),
            box_shape=(ROWS, self.width.value.data),
            swizzle_bytes=16,
            oob=OOBMode.ZEROS,
            reduction=None,
        )

    def verify_(self) -> None:
        assert isinstance(gmem_type := self.src.type, MemRefType)
        # rule: B2
        if memory_space(gmem_type) != GMEM:
            raise Error(
                f"copy.gather4_prefetch prefetches GMEM, got {memory_space(gmem_type)}",
                note="prefetch from a GMEM ref (no memory space)",
            )
        self._verify_target()
        self._verify_coordinates(gmem_type)
        self._verify_map(self.geometry())


@dataclass(frozen=True, kw_only=True)
class _PrefetchGeometry(BoxGeometry):
    """A gather4 prefetch's tile: its map's box is one row."""

    @property
    def is_load(self) -> bool:
        return True

    @property
    def gmem_box(self) -> tuple[int, ...]:
        return (1, self.box_shape[-1])
