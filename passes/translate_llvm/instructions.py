"""The llvm dialect's instructions in LLVM IR: one handler per op (or per table of ops that
translate alike: the integer and float binaries, the casts, the float intrinsics), and the
flags, orderings and intrinsic-name mangling they print."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerAttr,
    IntegerType,
    VectorType,
)
from xdsl.ir import Attribute, Operation

from copy_dialect import upstream_llvm
from passes.translate_llvm.spelling import Unsupported, quote, symbol

if TYPE_CHECKING:
    from passes.translate_llvm.function import FunctionTranslator

_ATOMIC_ORDERING = {
    1: "unordered",
    2: "monotonic",
    4: "acquire",
    5: "release",
    6: "acq_rel",
    7: "seq_cst",
}


def _fastmath(attr: Attribute | None) -> str:
    """`fast` or the flags (`nnan ninf ...`), each followed by a space; '' for none."""
    if not isinstance(attr, llvm.FastMathAttr) or not attr.data:
        return ""
    if len(attr.data) == len(llvm.FastMathFlag):
        return "fast "
    return "".join(f"{flag.value} " for flag in llvm.FastMathFlag if flag in attr.data)


def _overflow(attr: Attribute | None) -> str:
    """`nuw nsw ` from llvm's overflow flags (an i32 bit set or `#llvm.overflow<...>`)."""
    if isinstance(attr, llvm.OverflowAttr):
        bits = attr.to_int()
    elif isinstance(attr, IntegerAttr):
        bits = attr.value.data
    else:
        bits = 0
    return ("nuw " if bits & 2 else "") + ("nsw " if bits & 1 else "")


_Handler = Callable[["FunctionTranslator", Any], None]
HANDLERS: dict[type[Operation], _Handler] = {}


def _handles(*classes: type[Operation]) -> Callable[[_Handler], _Handler]:
    def register(handler: _Handler) -> _Handler:
        for cls in classes:
            HANDLERS[cls] = handler
        return handler

    return register


_INT_BINARY = {
    llvm.AddOp: "add",
    llvm.SubOp: "sub",
    llvm.MulOp: "mul",
    llvm.UDivOp: "udiv",
    llvm.SDivOp: "sdiv",
    llvm.URemOp: "urem",
    llvm.SRemOp: "srem",
    llvm.AndOp: "and",
    llvm.OrOp: "or",
    llvm.XOrOp: "xor",
    llvm.ShlOp: "shl",
    llvm.LShrOp: "lshr",
    llvm.AShrOp: "ashr",
}
_FLOAT_BINARY = {
    llvm.FAddOp: "fadd",
    llvm.FSubOp: "fsub",
    llvm.FMulOp: "fmul",
    llvm.FDivOp: "fdiv",
    llvm.FRemOp: "frem",
}
_CASTS = {
    llvm.TruncOp: "trunc",
    llvm.ZExtOp: "zext",
    llvm.SExtOp: "sext",
    llvm.PtrToIntOp: "ptrtoint",
    llvm.IntToPtrOp: "inttoptr",
    llvm.BitcastOp: "bitcast",
    llvm.SIToFPOp: "sitofp",
    llvm.FPExtOp: "fpext",
    llvm.FPTruncOp: "fptrunc",
}
# Float intrinsics of the llvm dialect: op -> LLVM name, overloaded on the result type.
_FLOAT_INTRINSICS = {
    llvm.FAbsOp: "llvm.fabs",
    llvm.FCeilOp: "llvm.ceil",
    llvm.FFloorOp: "llvm.floor",
    llvm.FSqrtOp: "llvm.sqrt",
    llvm.FExp2Op: "llvm.exp2",
    llvm.FExpOp: "llvm.exp",
    llvm.FLogOp: "llvm.log",
    llvm.FLog2Op: "llvm.log2",
    llvm.FSinOp: "llvm.sin",
    llvm.FCosOp: "llvm.cos",
    llvm.FCopySignOp: "llvm.copysign",
    llvm.VectorFMaxOp: "llvm.maxnum",
    llvm.VectorFMinOp: "llvm.minnum",
    llvm.FPowOp: "llvm.pow",
    llvm.FMAOp: "llvm.fma",
    upstream_llvm.MaximumOp: "llvm.maximum",
    upstream_llvm.MinimumOp: "llvm.minimum",
}
# Ordered vector reductions: op -> LLVM name, overloaded on the vector type.
_VECTOR_REDUCTIONS = {
    llvm.VectorReduceFAddOp: "llvm.vector.reduce.fadd",
    llvm.VectorReduceFMulOp: "llvm.vector.reduce.fmul",
}
_FLOAT_MANGLING = {Float16Type: "f16", BFloat16Type: "bf16", Float32Type: "f32", Float64Type: "f64"}


def _mangle(type: Attribute) -> str:
    """The overload suffix of an intrinsic name: f32, v4f32, p3, i64."""
    if isinstance(type, VectorType):
        return f"v{type.get_shape()[0]}{_mangle(type.get_element_type())}"
    if isinstance(type, llvm.LLVMPointerType):
        space = type.addr_space
        return f"p{space.data if isinstance(space, llvm.IntAttr) else 0}"
    if isinstance(type, IntegerType):
        return f"i{type.width.data}"
    for cls, name in _FLOAT_MANGLING.items():
        if isinstance(type, cls):
            return name
    raise Unsupported(f"no intrinsic overload for type {type}")


@_handles(*_INT_BINARY)
def _int_binary(t: FunctionTranslator, op: Any) -> None:
    flags = ""
    if isinstance(op, llvm.ArithmeticBinOpOverflow):
        flags = _overflow(op.overflowFlags)
    elif isinstance(op, llvm.ArithmeticBinOpExact) and op.is_exact is not None:
        flags = "exact "
    elif isinstance(op, llvm.ArithmeticBinOpDisjoint) and op.is_disjoint is not None:
        flags = "disjoint "
    opcode = _INT_BINARY[type(op)]
    t.define(op, f"{opcode} {flags}{t.typed(op.lhs)}, {t.value(op.rhs)}")


@_handles(*_FLOAT_BINARY)
def _float_binary(t: FunctionTranslator, op: Any) -> None:
    opcode = _FLOAT_BINARY[type(op)]
    t.define(op, f"{opcode} {_fastmath(op.fastmathFlags)}{t.typed(op.lhs)}, {t.value(op.rhs)}")


@_handles(llvm.FNegOp)
def _fneg(t: FunctionTranslator, op: llvm.FNegOp) -> None:
    t.define(op, f"fneg {_fastmath(op.fastmathFlags)}{t.typed(op.arg)}")


@_handles(llvm.ICmpOp)
def _icmp(t: FunctionTranslator, op: llvm.ICmpOp) -> None:
    predicate = llvm.ICmpPredicateFlag.from_int(op.predicate.value.data).value
    t.define(op, f"icmp {predicate} {t.typed(op.lhs)}, {t.value(op.rhs)}")


@_handles(llvm.FCmpOp)
def _fcmp(t: FunctionTranslator, op: llvm.FCmpOp) -> None:
    predicate = llvm.FCmpPredicateFlag.from_int(op.predicate.value.data).value.lstrip("_")
    t.define(
        op,
        f"fcmp {_fastmath(op.fastmathFlags)}{predicate} {t.typed(op.lhs)}, {t.value(op.rhs)}",
    )


@_handles(llvm.SelectOp)
def _select(t: FunctionTranslator, op: llvm.SelectOp) -> None:
    fmf = _fastmath(op.fastmathFlags)
    t.define(op, f"select {fmf}{t.typed(op.cond)}, {t.typed(op.lhs)}, {t.typed(op.rhs)}")


@_handles(*_CASTS)
def _cast(t: FunctionTranslator, op: Any) -> None:
    flags = ""
    if isinstance(op, llvm.TruncOp):
        flags = _overflow(op.overflowFlags)
    elif isinstance(op, llvm.ZExtOp) and op.non_neg is not None:
        flags = "nneg "
    result = op.results[0]
    t.define(op, f"{_CASTS[type(op)]} {flags}{t.typed(op.operands[0])} to {t.type(result.type)}")


@_handles(llvm.GEPOp)
def _gep(t: FunctionTranslator, op: llvm.GEPOp) -> None:
    # MLIR's GEPNoWrapFlags: inbounds = 1 (| nusw), nusw = 2, nuw = 4.
    bits = op.noWrapFlags.value.data
    flags = ""
    if op.inbounds is not None or bits & 1:
        flags += "inbounds "
    elif bits & 2:
        flags += "nusw "
    if bits & 4:
        flags += "nuw "
    dynamic = iter(op.ssa_indices)
    indices: list[str] = []
    for index in op.rawConstantIndices.get_values():
        if index == llvm.GEP_USE_SSA_VAL:
            indices.append(t.typed(next(dynamic)))
        else:
            indices.append(f"i32 {index}")  # struct field indices must be i32
    # The pointer keeps its address space: `ptr addrspace(3) %p` (xDSL's converter drops it).
    operands = ", ".join([t.type(op.elem_type), t.typed(op.ptr), *indices])
    t.define(op, f"getelementptr {flags}{operands}")


def _alignment(op: Any) -> str:
    return f", align {op.alignment.value.data}" if op.alignment is not None else ""


def _ordering(op: Any) -> str | None:
    ordering = op.ordering.value.data if op.ordering is not None else 0
    if ordering == 0:
        return None
    if ordering not in _ATOMIC_ORDERING:
        raise Unsupported(f"unknown atomic ordering {ordering}")
    return _ATOMIC_ORDERING[ordering]


@_handles(llvm.LoadOp)
def _load(t: FunctionTranslator, op: llvm.LoadOp) -> None:
    ordering = _ordering(op)
    atomic = "atomic " if ordering else ""
    order = f" {ordering}" if ordering else ""
    result_type = t.type(op.dereferenced_value.type)
    t.define(op, f"load {atomic}{result_type}, {t.typed(op.ptr)}{order}{_alignment(op)}")


@_handles(llvm.StoreOp)
def _store(t: FunctionTranslator, op: llvm.StoreOp) -> None:
    ordering = _ordering(op)
    atomic = "atomic " if ordering else ""
    volatile = "volatile " if op.volatile_ is not None else ""
    order = f" {ordering}" if ordering else ""
    text = f"store {atomic}{volatile}{t.typed(op.value)}, {t.typed(op.ptr)}{order}"
    text += _alignment(op)
    if op.nontemporal is not None:
        text += f", !nontemporal {t.module.metadata_node('!{i32 1}')}"
    t.define(op, text)


@_handles(llvm.AllocaOp)
def _alloca(t: FunctionTranslator, op: llvm.AllocaOp) -> None:
    text = f"alloca {t.type(op.elem_type)}, {t.typed(op.size)}{_alignment(op)}"
    space = op.res.type.addr_space if isinstance(op.res.type, llvm.LLVMPointerType) else None
    if isinstance(space, llvm.IntAttr) and space.data:
        text += f", addrspace({space.data})"
    t.define(op, text)


_TAIL_CALL = {"none": "", "tail": "tail ", "musttail": "musttail ", "notail": "notail "}


@_handles(llvm.InlineAsmOp)
def _inline_asm(t: FunctionTranslator, op: llvm.InlineAsmOp) -> None:
    """`call T asm sideeffect "ptx", "constraints"(args)`; several results come as a struct."""
    ret = t.type(op.res.type) if op.res is not None else "void"
    keywords = ""
    if op.has_side_effects is not None:
        keywords += "sideeffect "
    if op.is_align_stack is not None:
        keywords += "alignstack "
    if op.asm_dialect is not None and op.asm_dialect.value.data == 1:
        keywords += "inteldialect "
    args = ", ".join(t.typed(a) for a in op.operands_)
    tail = _TAIL_CALL[op.tail_call_kind.data.value]
    asm = f"{quote(op.asm_string.data)}, {quote(op.constraints.data)}"
    t.define(op, f"{tail}call {ret} asm {keywords}{asm}({args})")


@_handles(llvm.CallIntrinsicOp)
def _call_intrinsic(t: FunctionTranslator, op: llvm.CallIntrinsicOp) -> None:
    if op.op_bundle_operands:
        raise Unsupported("operand bundles are not supported")
    result = op.ress.type if op.ress is not None else None
    t.call_intrinsic(op, op.intrin.data, op.args, result, _fastmath(op.fastmathFlags))


@_handles(llvm.CallOp)
def _call(t: FunctionTranslator, op: llvm.CallOp) -> None:
    if op.op_bundle_operands:
        raise Unsupported("operand bundles are not supported")
    words = _TAIL_CALL[op.TailCallKind.data.value] + "call "
    cconv = op.CConv.convention.data
    if cconv != "ccc":
        words += cconv + " "
    words += _fastmath(op.fastmathFlags)
    ret = t.type(op.returned.type) if op.returned is not None else "void"
    args = list(op.args)
    if op.callee is None:  # indirect: the first operand is the callee pointer
        callee, args = t.value(args[0]), args[1:]
    else:
        callee = symbol(op.callee.root_reference.data)
    signature = ret
    ftype = op.var_callee_type
    if ftype is None and op.callee is not None:
        target = t.module.functions.get(op.callee.root_reference.data)
        if target is not None and target.function_type.is_variadic:
            ftype = target.function_type
    if ftype is not None and ftype.is_variadic:
        signature = t.type(ftype)  # varargs calls spell the callee's type: `void (i32, ...)`
    t.define(op, f"{words}{signature} {callee}({', '.join(t.typed(a) for a in args)})")


@_handles(*_FLOAT_INTRINSICS)
def _float_intrinsic(t: FunctionTranslator, op: Any) -> None:
    result = op.results[0]
    name = f"{_FLOAT_INTRINSICS[type(op)]}.{_mangle(result.type)}"
    t.call_intrinsic(op, name, op.operands, result.type, _fastmath(op.fastmathFlags))


@_handles(*_VECTOR_REDUCTIONS)
def _vector_reduce(t: FunctionTranslator, op: Any) -> None:
    name = f"{_VECTOR_REDUCTIONS[type(op)]}.{_mangle(op.vector.type)}"
    t.call_intrinsic(
        op, name, [op.start_value, op.vector], op.res.type, _fastmath(op.fastmathFlags)
    )


@_handles(llvm.MaskedStoreOp)
def _masked_store(t: FunctionTranslator, op: llvm.MaskedStoreOp) -> None:
    # LLVM 22 moved the alignment from an i32 operand to an `align` on the pointer.
    name = f"llvm.masked.store.{_mangle(op.value.type)}.{_mangle(op.data.type)}"
    align = f"align {op.alignment.value.data} "
    t.call_intrinsic(op, name, [op.value, op.data, op.mask], None, arg_prefixes=["", align])


@_handles(llvm.StackSaveOp)
def _stacksave(t: FunctionTranslator, op: llvm.StackSaveOp) -> None:
    t.call_intrinsic(op, f"llvm.stacksave.{_mangle(op.res.type)}", [], op.res.type)


@_handles(llvm.StackRestoreOp)
def _stackrestore(t: FunctionTranslator, op: llvm.StackRestoreOp) -> None:
    t.call_intrinsic(op, f"llvm.stackrestore.{_mangle(op.ptr.type)}", [op.ptr], None)


@_handles(llvm.ExtractValueOp)
def _extractvalue(t: FunctionTranslator, op: llvm.ExtractValueOp) -> None:
    position = ", ".join(str(i) for i in op.position.get_values())
    t.define(op, f"extractvalue {t.typed(op.container)}, {position}")


@_handles(llvm.InsertValueOp)
def _insertvalue(t: FunctionTranslator, op: llvm.InsertValueOp) -> None:
    position = ", ".join(str(i) for i in op.position.get_values())
    t.define(op, f"insertvalue {t.typed(op.container)}, {t.typed(op.value)}, {position}")


@_handles(llvm.InsertElementOp)
def _insertelement(t: FunctionTranslator, op: llvm.InsertElementOp) -> None:
    t.define(op, f"insertelement {t.typed(op.vector)}, {t.typed(op.value)}, {t.typed(op.index)}")


@_handles(upstream_llvm.ExtractElementOp)
def _extractelement(t: FunctionTranslator, op: upstream_llvm.ExtractElementOp) -> None:
    t.define(op, f"extractelement {t.typed(op.vector)}, {t.typed(op.position)}")


@_handles(llvm.ShuffleVectorOp)
def _shufflevector(t: FunctionTranslator, op: llvm.ShuffleVectorOp) -> None:
    mask = [int(i) for i in op.mask.get_values()]
    items = ", ".join("i32 poison" if i < 0 else f"i32 {i}" for i in mask)
    t.define(
        op,
        f"shufflevector {t.typed(op.v1)}, {t.typed(op.v2)}, <{len(mask)} x i32> <{items}>",
    )


@_handles(llvm.BrOp)
def _br(t: FunctionTranslator, op: llvm.BrOp) -> None:
    t.define(op, f"br label %{t.labels[op.successor]}")


@_handles(llvm.CondBrOp)
def _cond_br(t: FunctionTranslator, op: llvm.CondBrOp) -> None:
    then, else_ = t.labels[op.then_block], t.labels[op.else_block]
    t.define(op, f"br {t.typed(op.cond)}, label %{then}, label %{else_}")


@_handles(llvm.ReturnOp)
def _return(t: FunctionTranslator, op: llvm.ReturnOp) -> None:
    t.define(op, f"ret {t.typed(op.arg)}" if op.arg is not None else "ret void")


@_handles(llvm.UnreachableOp)
def _unreachable(t: FunctionTranslator, op: llvm.UnreachableOp) -> None:
    t.define(op, "unreachable")
