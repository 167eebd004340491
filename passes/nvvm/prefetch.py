"""The prefetches of upstream NVVMOps.td that take a tensor map: the tensor-map prefetch
(`NVVM_PrefetchTensorMapOp`) and the TMA tensor prefetch of a box into L2
(`NVVM_CpAsyncBulkTensorPrefetchOp`). The non-tensor bulk prefetch is `bulk`'s."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I16, I32, I64
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    var_operand_def,
)

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import (
    GENERIC_PTR,
    TMALoadMode,
    TMALoadModeAttr,
    verify_gather4_coordinates,
)
from passes.nvvm.bulk_tensor import verify_tensor_dims
from passes.nvvm.emit import arg, cache_hint, call, cast

PARAM = 101
"""LLVM NVPTX's kernel-parameter address space."""


@irdl_op_definition
class PrefetchTensorMapOp(IRDLOperation):
    """`prefetch.param.tensormap [map]` (sm_90): brings the tensor map (a grid-constant
    kernel parameter) into the cache that TMA reads its descriptors from, before the first
    copy through it needs it.

    ```mlir
    nvvm.prefetch.tensormap %tmap : !llvm.ptr
    ```
    """

    name = "nvvm.prefetch.tensormap"

    tma_descriptor = operand_def(GENERIC_PTR)

    assembly_format = "$tma_descriptor attr-dict `:` type($tma_descriptor)"

    def __init__(self, tma_descriptor: SSAValue | Operation):
        super().__init__(operands=[tma_descriptor])

    def to_llvm_ir(self, e: IREmitter) -> None:
        # The param-space form names the parameter (`prefetch.param.tensormap [k_param_3]`);
        # the generic one (`.p0`) makes LLVM 22 emit the prefetch twice, once per space.
        call(e, "llvm.nvvm.prefetch.tensormap.p101", [cast(e, self.tma_descriptor, PARAM)])


@irdl_op_definition
class CpAsyncBulkTensorPrefetchOp(IRDLOperation):
    """`cp.async.bulk.prefetch.tensor.Nd.L2.global{.im2col}` (sm_90): prefetches the box at
    `coordinates` into L2.

    ```mlir
    nvvm.cp.async.bulk.tensor.prefetch %tmap, box[%c0, %c1] : !llvm.ptr
    ```
    """

    name = "nvvm.cp.async.bulk.tensor.prefetch"

    tma_descriptor = operand_def(GENERIC_PTR)
    coordinates = var_operand_def(I32)
    im2col_offsets = var_operand_def(I16)
    l2_cache_hint = opt_operand_def(I64)
    mode = opt_prop_def(TMALoadModeAttr)
    """Upstream's load mode; only `tile_gather4` is spelled (tile and im2col follow from the
    im2col offsets)."""

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$tma_descriptor `,` `box` `[` $coordinates `]` "
        "(`im2col` `[` $im2col_offsets^ `]`)? "
        "(`l2_cache_hint` `=` $l2_cache_hint^)? "
        "attr-dict `:` type($tma_descriptor)"
    )

    def __init__(
        self,
        tma_descriptor: SSAValue | Operation,
        coordinates: Sequence[SSAValue | Operation],
        l2_cache_hint: SSAValue | Operation | None = None,
        im2col_offsets: Sequence[SSAValue | Operation] = (),
        gather4: bool = False,
    ):
        super().__init__(
            operands=[tma_descriptor, coordinates, im2col_offsets, l2_cache_hint],
            properties={"mode": TMALoadModeAttr(TMALoadMode.TILE_GATHER4)} if gather4 else {},
        )

    @property
    def is_gather4(self) -> bool:
        return self.mode is not None and self.mode.data == TMALoadMode.TILE_GATHER4

    def verify_(self) -> None:
        verify_tensor_dims(len(self.coordinates), len(self.im2col_offsets))
        if self.is_gather4:
            verify_gather4_coordinates(len(self.coordinates))

    def to_llvm_ir(self, e: IREmitter) -> None:
        dims, mode = len(self.coordinates), "im2col" if self.im2col_offsets else "tile"
        if self.is_gather4:
            dims, mode = 2, "tile.gather4"
        hint, hint_flag = cache_hint(e, self.l2_cache_hint)
        call(
            e,
            f"llvm.nvvm.cp.async.bulk.tensor.prefetch.{mode}.{dims}d",
            [
                arg(e, self.tma_descriptor),
                *(arg(e, c) for c in self.coordinates),
                *(arg(e, o) for o in self.im2col_offsets),
                hint,
                hint_flag,
            ],
        )
