"""How the nvvm ops print their LLVM IR through an `IREmitter`: intrinsic calls, inline PTX
(`call void asm sideeffect`) with its register constraints and predicate, address-space
casts, the TMA intrinsics' cache-hint operands; and `IntrinsicOp`, the base of the ops that
are one call of a fixed intrinsic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import addr_space

Arg = tuple[str, str]
"""An LLVM IR call operand: (type, value)."""


def arg(e: IREmitter, value: SSAValue) -> Arg:
    return (e.type(value.type), e.value(value))


def call(e: IREmitter, callee: str, args: Sequence[Arg], ret: str = "void") -> str | None:
    """Declares the intrinsic `callee` and calls it; returns the result's name, if any."""
    e.declare(f"declare {ret} @{callee}({', '.join(t for t, _ in args)})")
    text = f"call {ret} @{callee}({', '.join(f'{t} {v}' for t, v in args)})"
    if ret == "void":
        e.emit(text)
        return None
    # Always name results: an unnamed value would take the function's next %N.
    name = e.fresh()
    e.emit(f"{name} = {text}")
    return name


def call_bound(e: IREmitter, result: SSAValue, callee: str, args: Sequence[Arg]) -> None:
    """Calls the intrinsic `callee` and makes its value the op's `result`."""
    name = call(e, callee, args, ret=e.type(result.type))
    assert name is not None
    e.bind(result, name)


def _constraint(t: Attribute) -> str:
    """The NVPTX inline-asm register constraint of an operand type."""
    if isinstance(t, IntegerType):
        return {1: "b", 16: "h", 32: "r", 64: "l"}[t.width.data]
    # LLVM's NVPTX data layout (e-p6:32:32-...) makes TMEM pointers 32-bit, the others 64.
    return "r" if addr_space(t) == 6 else "l"


def asm(e: IREmitter, ptx: str, operands: Sequence[SSAValue]) -> None:
    """Emits `ptx` as a side-effecting inline asm statement reading `operands` ($0...)."""
    text = ptx.replace("\\", "\\5C").replace('"', "\\22")
    constraints = ",".join([*(_constraint(v.type) for v in operands), "~{memory}"])
    args = ", ".join(f"{t} {v}" for t, v in (arg(e, v) for v in operands))
    e.emit(f'call void asm sideeffect "{text}", "{constraints}"({args})')


def predicated(ptx: str, predicate: SSAValue | None, index: int) -> str:
    """Guards `ptx` with the predicate operand `$index` when there is one."""
    return ptx if predicate is None else f"@${index} {ptx}"


def cast(e: IREmitter, value: SSAValue, space: int) -> Arg:
    """`value` as a pointer in address space `space` (an addrspacecast if it is not)."""
    t, v = arg(e, value)
    if addr_space(value.type) == space:
        return (t, v)
    target = "ptr" if space == 0 else f"ptr addrspace({space})"
    name = e.fresh()
    e.emit(f"{name} = addrspacecast {t} {v} to {target}")
    return (target, name)


def cache_hint(e: IREmitter, hint: SSAValue | None) -> tuple[Arg, Arg]:
    """The TMA intrinsics' (i64 cache hint, i1 immarg flag) pair."""
    if hint is None:
        return ("i64", "0"), ("i1", "false")
    return arg(e, hint), ("i1", "true")


class IntrinsicOp(IRDLOperation):
    """An op without operands or results: one call of `INTRINSIC` with the constants `ARGS`."""

    INTRINSIC: ClassVar[str]
    ARGS: ClassVar[tuple[Arg, ...]] = ()

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def to_llvm_ir(self, e: IREmitter) -> None:
        call(e, self.INTRINSIC, self.ARGS)
