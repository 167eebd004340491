"""Programmatic dependent launch: upstream NVVMOps.td's `NVVM_GriddepcontrolOp`
(`nvvm.griddepcontrol wait`, `nvvm.griddepcontrol launch_dependents`; PTX ISA 7.8, sm_90).
LLVM 19 has no form of it; the syntax is current upstream's."""

from __future__ import annotations

from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.irdl import IRDLOperation, irdl_attr_definition, irdl_op_definition, prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import AngleBracketEnum
from passes.nvvm.emit import call


class GridDepActionKind(StrEnum):
    WAIT = "wait"
    LAUNCH_DEPENDENTS = "launch_dependents"


@irdl_attr_definition
class GridDepActionAttr(AngleBracketEnum, EnumAttribute[GridDepActionKind]):
    name = "nvvm.grid_dep_action"


INTRINSICS = {
    GridDepActionKind.WAIT: "llvm.nvvm.griddepcontrol.wait",
    GridDepActionKind.LAUNCH_DEPENDENTS: "llvm.nvvm.griddepcontrol.launch.dependents",
}
"""LLVM's NVPTX intrinsic of each action."""


@irdl_op_definition
class GriddepcontrolOp(IRDLOperation):
    """`griddepcontrol.wait` (wait until the prerequisite grids completed and their memory is
    visible) or `griddepcontrol.launch_dependents` (let the dependent grids be scheduled).

    ```mlir
    nvvm.griddepcontrol wait
    nvvm.griddepcontrol launch_dependents
    ```
    """

    name = "nvvm.griddepcontrol"

    kind = prop_def(GridDepActionAttr)

    def __init__(self, kind: str):
        super().__init__(properties={"kind": GridDepActionAttr(GridDepActionKind(kind))})

    @classmethod
    def parse(cls, parser: Parser) -> GriddepcontrolOp:
        kind = parser.parse_str_enum(GridDepActionKind)
        attrs = parser.parse_optional_attr_dict()
        op = cls(kind)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data.value}")
        printer.print_op_attributes(self.attributes)

    def to_llvm_ir(self, e: IREmitter) -> None:
        call(e, INTRINSICS[self.kind.data], [])
