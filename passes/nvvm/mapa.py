"""mapa (sm_90): the address of a variable in the shared memory of another CTA of the
cluster (upstream NVVMOps.td's `NVVM_MapaOp`)."""

from __future__ import annotations

from xdsl.dialects.builtin import I32
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def
from xdsl.utils.exceptions import VerifyException

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import addr_space, ptr, ptr_in
from passes.nvvm.emit import arg, call_bound


@irdl_op_definition
class MapaSharedClusterOp(IRDLOperation):
    """`mapa{.shared::cluster}.u64 res, a, b` (sm_90): the address of the variable at `a`
    in the SMEM of the cluster's CTA `b` (shared `<3>` -> shared::cluster `<7>`, or
    generic -> generic).

    ```mlir
    %peer = nvvm.mapa %a, %rank : !llvm.ptr<3> -> !llvm.ptr<7>
    ```
    """

    name = "nvvm.mapa"

    a = operand_def(ptr_in(0, 3))
    b = operand_def(I32)
    res = result_def(ptr_in(0, 7))

    assembly_format = "$a `,` $b attr-dict `:` type($a) `->` type($res)"

    def __init__(self, a: SSAValue | Operation, b: SSAValue | Operation):
        a_type = SSAValue.get(a).type
        super().__init__(operands=[a, b], result_types=[ptr(7) if addr_space(a_type) else a_type])

    def verify_(self) -> None:
        if (addr_space(self.a.type) == 3) != (addr_space(self.res.type) == 7):
            raise VerifyException(
                "failed to verify that Valid address-space check(or mapping) for mapa Op"
            )

    def to_llvm_ir(self, e: IREmitter) -> None:
        shared = addr_space(self.a.type) == 3
        callee = "llvm.nvvm.mapa.shared.cluster" if shared else "llvm.nvvm.mapa"
        call_bound(e, self.res, callee, [arg(e, self.a), arg(e, self.b)])
