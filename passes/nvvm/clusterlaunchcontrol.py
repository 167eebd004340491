"""Cluster launch control: upstream NVVMOps.td's `NVVM_ClusterLaunchControlTryCancelOp` and
`NVVM_ClusterLaunchControlQueryCancelOp` (PTX ISA 8.6, sm_100 and newer):

```mlir
nvvm.clusterlaunchcontrol.try.cancel %addr, %mbar
nvvm.clusterlaunchcontrol.try.cancel multicast, %addr, %mbar
%c = nvvm.clusterlaunchcontrol.query.cancel query = is_canceled, %response : i1
%x = nvvm.clusterlaunchcontrol.query.cancel query = get_first_cta_id_x, %response : i32
```

LLVM's intrinsics: `llvm.nvvm.clusterlaunchcontrol.try_cancel.async{.multicast}.shared`
(`ptr addrspace(3)` response and mbarrier) and
`llvm.nvvm.clusterlaunchcontrol.query_cancel.{is_canceled,get_first_ctaid.{x,y,z}}` (i128)."""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, StringAttr, UnitAttr, i1, i32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import SHARED_PTR
from passes.nvvm.emit import arg, call, call_bound

QUERIES: dict[str, tuple[str, IntegerType]] = {
    "is_canceled": ("is_canceled", i1),
    "get_first_cta_id_x": ("get_first_ctaid.x", i32),
    "get_first_cta_id_y": ("get_first_ctaid.y", i32),
    "get_first_cta_id_z": ("get_first_ctaid.z", i32),
}
"""Upstream's query kinds: the intrinsic's suffix and the result type of each."""


@irdl_op_definition
class ClusterLaunchControlTryCancelOp(IRDLOperation):
    """`clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes
    {.multicast::cluster::all}.b128 [addr], [mbar]`."""

    name = "nvvm.clusterlaunchcontrol.try.cancel"

    smem_address = operand_def(SHARED_PTR)
    mbarrier = operand_def(SHARED_PTR)
    multicast = opt_prop_def(UnitAttr)

    def __init__(self, smem_address: SSAValue, mbarrier: SSAValue, multicast: bool = False):
        super().__init__(
            operands=[smem_address, mbarrier],
            properties={"multicast": UnitAttr() if multicast else None},
        )

    @classmethod
    def parse(cls, parser: Parser) -> ClusterLaunchControlTryCancelOp:
        multicast = parser.parse_optional_keyword("multicast") is not None
        if multicast:
            parser.parse_punctuation(",")
        address = parser.parse_operand()
        parser.parse_punctuation(",")
        mbarrier = parser.parse_operand()
        attrs = parser.parse_optional_attr_dict()
        op = cls(address, mbarrier, multicast)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" multicast," if self.multicast is not None else "")
        printer.print_string(" ")
        printer.print_operand(self.smem_address)
        printer.print_string(", ")
        printer.print_operand(self.mbarrier)
        printer.print_op_attributes(self.attributes)

    def to_llvm_ir(self, e: IREmitter) -> None:
        kind = ".multicast" if self.multicast is not None else ""
        callee = f"llvm.nvvm.clusterlaunchcontrol.try_cancel.async{kind}.shared"
        call(e, callee, [arg(e, self.smem_address), arg(e, self.mbarrier)])


@irdl_op_definition
class ClusterLaunchControlQueryCancelOp(IRDLOperation):
    """`clusterlaunchcontrol.query_cancel.is_canceled.pred.b128` or
    `.get_first_ctaid::{x,y,z}.b32.b128` of a try_cancel response (an i128)."""

    name = "nvvm.clusterlaunchcontrol.query.cancel"

    try_cancel_response = operand_def(IntegerType(128))
    query_type = prop_def(StringAttr)
    res = result_def(IntegerType)

    def __init__(self, query: str, response: SSAValue):
        super().__init__(
            operands=[response],
            properties={"query_type": StringAttr(query)},
            result_types=[QUERIES[query][1]],
        )

    def verify_(self) -> None:
        query = self.query_type.data
        if query not in QUERIES:
            raise VerifyException(f"unknown query '{query}': expected one of {', '.join(QUERIES)}")
        if self.res.type != QUERIES[query][1]:
            raise VerifyException(f"query {query} gives {QUERIES[query][1]}, not {self.res.type}")

    @classmethod
    def parse(cls, parser: Parser) -> ClusterLaunchControlQueryCancelOp:
        parser.parse_keyword("query")
        parser.parse_punctuation("=")
        query = parser.parse_identifier()
        if query not in QUERIES:
            parser.raise_error(f"unknown query '{query}': expected one of {', '.join(QUERIES)}")
        parser.parse_punctuation(",")
        response = parser.parse_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        result: Attribute = parser.parse_type()
        op = cls(query, response)
        if result != op.res.type:
            parser.raise_error(f"query {query} gives {op.res.type}, not {result}")
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" query = {self.query_type.data}, ")
        printer.print_operand(self.try_cancel_response)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.res.type)

    def to_llvm_ir(self, e: IREmitter) -> None:
        suffix = QUERIES[self.query_type.data][0]
        callee = f"llvm.nvvm.clusterlaunchcontrol.query_cancel.{suffix}"
        call_bound(e, self.res, callee, [arg(e, self.try_cancel_response)])


__all__ = ["QUERIES", "ClusterLaunchControlQueryCancelOp", "ClusterLaunchControlTryCancelOp"]
