"""The interface between the LLVM IR translation and the ops that translate themselves.

`translate_llvm` walks a module of llvm + nvvm ops and prints LLVM IR text. It spells the
llvm dialect's ops itself; every other op it meets must implement `ToLLVMIR`, i.e. know its
own LLVM IR spelling (an intrinsic call or inline PTX), the way MLIR's NVVM ops carry an
`llvmBuilder`. The translation hands such an op an `IREmitter`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from xdsl.ir import Attribute, SSAValue


class IREmitter(Protocol):
    """What an op may use to print itself into the function being translated."""

    def value(self, value: SSAValue) -> str:
        """The LLVM IR name of an SSA value (`%5`) or its literal when it is a constant."""
        ...

    def type(self, type: Attribute) -> str:
        """The LLVM IR spelling of a type: `i32`, `ptr addrspace(3)`, `<4 x i32>`, ..."""
        ...

    def typed(self, value: SSAValue) -> str:
        """`type value`, as an instruction operand: `ptr addrspace(3) %5`."""
        ...

    def fresh(self) -> str:
        """A new local name (`%t7`) for an intermediate value."""
        ...

    def emit(self, instruction: str) -> None:
        """Appends an instruction (without indentation or newline) to the current block."""
        ...

    def declare(self, declaration: str) -> None:
        """Adds a module-level line (`declare void @llvm.nvvm.barrier0()`), once."""
        ...

    def bind(self, result: SSAValue, name: str) -> None:
        """Makes `name` (from `fresh()`) the LLVM IR name of the op's result `result`."""
        ...


@runtime_checkable
class ToLLVMIR(Protocol):
    """An op that prints its own LLVM IR."""

    def to_llvm_ir(self, emitter: IREmitter) -> None: ...
