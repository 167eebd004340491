"""Prefetches of upstream NVVMOps.td outside the TMA copies: the tensor-map prefetch
(`NVVM_PrefetchTensorMapOp`)."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import GENERIC_PTR
from passes.nvvm.emit import call, cast

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
