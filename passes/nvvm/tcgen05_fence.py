"""tcgen05's thread-synchronisation fences (sm_100a): upstream NVVMOps.td's
`NVVM_Tcgen05FenceOp`, printed as this project prints `nvvm.tcgen05.wait` (the kind's
`<before>` / `<after>` without upstream's `#nvvm.tcgen05_fence` prefix; the generic form
has it).

`tcgen05.fence::before_thread_sync` orders the thread's prior asynchronous tcgen05 operations
before a following thread synchronisation (an mbarrier arrival, `bar.sync`);
`tcgen05.fence::after_thread_sync` orders the thread's later ones after a preceding one. TMEM
that one thread's tcgen05 ops touch and another thread's then touch, ordered only through such
a synchronisation, needs both (PTX ISA, "Memory Consistency Model for 5th generation of
TensorCore operations"); `tcgen05.commit` performs the before fence itself. Kernels write the
op in their input IR, as they write `nvvm.tcgen05.mma`; the protocol analysis (rule P14) and
the interpreter read it by name.
"""

from __future__ import annotations

from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.irdl import IRDLOperation, irdl_attr_definition, irdl_op_definition, prop_def
from xdsl.utils.str_enum import StrEnum

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import AngleBracketEnum
from passes.nvvm.emit import call


class Tcgen05FenceKind(StrEnum):
    BEFORE = "before"
    AFTER = "after"


@irdl_attr_definition
class Tcgen05FenceKindAttr(AngleBracketEnum, EnumAttribute[Tcgen05FenceKind]):
    name = "nvvm.tcgen05_fence"


@irdl_op_definition
class Tcgen05FenceOp(IRDLOperation):
    """`tcgen05.fence::before_thread_sync` / `tcgen05.fence::after_thread_sync`.

    ```mlir
    nvvm.tcgen05.fence <before>
    ```
    """

    name = "nvvm.tcgen05.fence"

    kind = prop_def(Tcgen05FenceKindAttr)

    assembly_format = "$kind attr-dict"

    def __init__(self, kind: str = "before"):
        super().__init__(properties={"kind": Tcgen05FenceKindAttr(Tcgen05FenceKind(kind))})

    @property
    def before(self) -> bool:
        return self.kind.data == Tcgen05FenceKind.BEFORE

    def to_llvm_ir(self, e: IREmitter) -> None:
        call(e, f"llvm.nvvm.tcgen05.fence.{self.kind.data.value}.thread.sync", [])
