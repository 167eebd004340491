"""Lowers `func.func`/`func.return` to `llvm.func`/`llvm.return`.

A kernel (`gpu.kernel`) becomes an external `llvm.func` marked `nvvm.kernel`; its launch facts
move to NVVM's attributes: `gpu.known_block_size` -> `nvvm.reqntid`, `copy.cluster` ->
`nvvm.cluster_dim`. Argument attributes (the tensor maps' byval/align/grid_constant) carry
over.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import builtin, func, llvm
from xdsl.dialects.builtin import DenseArrayBase, UnitAttr, i32
from xdsl.ir import Attribute, Operation, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from passes.llvm_types import convert_block_arguments, lowered, to_llvm_type
from passes.rewrite import apply_patterns

KERNEL_ATTRIBUTES = {
    "gpu.known_block_size": "nvvm.reqntid",
    "copy.cluster": "nvvm.cluster_dim",
}
"""Kernel attributes and their NVVM names."""


class ConvertFunc(RewritePattern):
    """`func.func` -> `llvm.func`, a kernel with `nvvm.kernel`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /):
        inputs = [to_llvm_type(t) for t in op.function_type.inputs]
        outputs = [to_llvm_type(t) for t in op.function_type.outputs]
        if len(outputs) > 1:
            return  # not lowered: LLVM functions return one value
        attributes: dict[str, Attribute] = {}
        for name, value in op.attributes.items():
            if name == "gpu.kernel":
                attributes["nvvm.kernel"] = UnitAttr()
            elif name in KERNEL_ATTRIBUTES and isinstance(value, DenseArrayBase):
                attributes[KERNEL_ATTRIBUTES[name]] = DenseArrayBase.from_list(
                    i32, [int(v) for v in value.get_values()]
                )
            else:
                attributes[name] = value
        body = rewriter.move_region_contents_to_new_regions(op.body)
        if body.blocks:
            convert_block_arguments(rewriter, body.blocks[0])
        new = llvm.FuncOp(
            op.sym_name,
            llvm.LLVMFunctionType(inputs, outputs[0] if outputs else None),
            linkage=llvm.LinkageAttr("external"),
            body=body if body.blocks else Region(),
            other_props={"arg_attrs": op.arg_attrs},
            extra_attrs=attributes,
        )
        rewriter.replace(op, [new], [])


class ConvertReturn(RewritePattern):
    """`func.return` -> `llvm.return`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        values = lowered(op.arguments, ops)
        rewriter.replace(op, [*ops, llvm.ReturnOp(values[0] if values else None)], [])


class ConvertFuncToLLVMPass(ModulePass):
    """Lowers `func` to `llvm`, kernels to NVVM kernels."""

    name = "convert-func-to-llvm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        apply_patterns(
            op,
            [
                ConvertFunc(),  # func.func
                ConvertReturn(),  # func.return
            ],
        )
