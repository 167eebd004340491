"""The upstream `gpu` ops that xDSL 0.75's `gpu` dialect lacks, and that dialect with them.

- `gpu.shuffle` (MLIR's `GPU_ShuffleOp`): exchanges a value between the lanes of a warp, as
  the warp reductions of the builders need (`kernels.ws_row_sum`); `convert-gpu-to-nvvm`
  lowers it to `nvvm.shfl.sync` (PTX `shfl.sync.<mode>.b32`).

- the custom forms of the id ops and the barrier, as upstream prints them: `gpu.thread_id x`,
  `gpu.block_id y`, `gpu.block_dim z`, `gpu.grid_dim x`,
  `gpu.global_id x`, `gpu.lane_id`, `gpu.barrier` (xDSL 0.75 parses and prints only their
  generic forms). The syntax is installed on xDSL's own op classes (`custom_syntax`), not on
  subclasses: the lowering, the analysis and the interpreter look these ops up by their exact
  class, and the passes build them with xDSL's constructors.

`GPU` is xDSL's `gpu` dialect plus these ops and their attributes, under the same name:
copy-opt and `copy_tools.make_context` register it in place of xDSL's (the xDSL universe
cannot give one dialect name two definitions), so plain `xdsl-opt` does not parse
`gpu.shuffle`.

Deviations from upstream:
- the shuffled value is an `i32` or an `f32`, the types `shfl.sync` moves (MLIR also takes
  64-bit and vector values, which its lowering does not split for NVVM either);
- the id ops have no `upper_bound` (nor `gpu.lane_id`): xDSL's classes have no such property.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import gpu
from xdsl.dialects.builtin import I32, Float32Type, i1, i32
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Dialect, Operation, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

UNIFORM_GPU = frozenset({"gpu.block_id", "gpu.grid_dim", "gpu.block_dim", "gpu.cluster_id"})
"""gpu ops whose result is the same for every thread of the block (and every role): what
the protocol analysis and copy-legalize both take as block-uniform."""


class ShuffleMode(StrEnum):
    XOR = "xor"
    UP = "up"
    DOWN = "down"
    IDX = "idx"


@irdl_attr_definition
class ShuffleModeAttr(EnumAttribute[ShuffleMode], SpacedOpaqueSyntaxAttribute):
    """How `gpu.shuffle` picks the source lane: `#gpu<shuffle_mode xor>`."""

    name = "gpu.shuffle_mode"


@irdl_op_definition
class ShuffleOp(IRDLOperation):
    """
    Returns `value` from another lane of the warp: lane `k ^ offset` (`xor`), `k - offset`
    (`up`), `k + offset` (`down`) or lane `offset` (`idx`), among the first `width` lanes
    (which must all execute the op), and whether that lane is one of them (`valid`).

    ```mlir
    %r, %valid = gpu.shuffle xor %v, %offset, %width : f32
    ```
    """

    name = "gpu.shuffle"

    T: ClassVar = VarConstraint("T", AnyAttr())

    mode = prop_def(ShuffleModeAttr)
    value = operand_def(T)
    offset = operand_def(I32)
    width = operand_def(I32)

    shuffle_result = result_def(T)
    valid = result_def(i1)

    traits = traits_def(Pure())

    assembly_format = "$mode $value `,` $offset `,` $width attr-dict `:` type($value)"

    def __init__(
        self,
        value: SSAValue | Operation,
        offset: SSAValue | Operation,
        width: SSAValue | Operation,
        mode: ShuffleMode | str = ShuffleMode.XOR,
    ):
        value = SSAValue.get(value)
        super().__init__(
            operands=[value, offset, width],
            properties={"mode": ShuffleModeAttr(ShuffleMode(mode))},
            result_types=[value.type, i1],
        )

    def verify_(self) -> None:
        t = self.value.type
        if not (t == i32 or isinstance(t, Float32Type)):
            raise VerifyException(
                f"expected a 32-bit value to shuffle (i32 or f32, what shfl.sync moves), got {t}: "
                "shuffle it as i32 or f32 values"
            )


def custom_syntax(cls: type[IRDLOperation], assembly_format: str) -> None:
    """Gives xDSL's op class `cls` the custom syntax `assembly_format`, as `irdl_op_definition`
    does for a class that declares one (the generic form still parses)."""
    from xdsl.irdl.declarative_assembly_format import FormatProgram

    program = FormatProgram.from_str(assembly_format, cls.get_irdl_definition())
    cls.parse = classmethod(lambda c, parser: program.parse(parser, c))  # type: ignore[method-assign]
    cls.print = lambda self, printer: program.print(printer, self)  # type: ignore[method-assign]


CUSTOM_SYNTAX: dict[type[IRDLOperation], str] = {
    gpu.ThreadIdOp: "$dimension attr-dict",
    gpu.BlockIdOp: "$dimension attr-dict",
    gpu.BlockDimOp: "$dimension attr-dict",
    gpu.GridDimOp: "$dimension attr-dict",
    gpu.GlobalIdOp: "$dimension attr-dict",
    gpu.LaneIdOp: "attr-dict",
    gpu.BarrierOp: "attr-dict",
}
"""The custom forms of upstream's `GPU_IndexOp`s, `gpu.lane_id` and `gpu.barrier`
(GPUOps.td's `$dimension (`upper_bound` $upper_bound^)? attr-dict`, less the bound)."""

for _cls, _format in CUSTOM_SYNTAX.items():
    custom_syntax(_cls, _format)


GPU = Dialect(
    "gpu",
    [*gpu.GPU.operations, ShuffleOp],
    [*gpu.GPU.attributes, ShuffleModeAttr],
)
