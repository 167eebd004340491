"""The builders the lowering writes llvm ops with: `Emit` collects the ops a rewrite creates
and emits the integer and pointer arithmetic it needs, `Arith` lets a function written on
ints (`copy_dialect.layout`) compute the same thing at run time, and `fail` is the error a
lowering raises for what it cannot lower."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, IntegerType, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from passes import llvm_build, nvvm


def fail(op: Operation, message: str) -> PassFailedException:
    """A lowering error; copy-opt reports it at the op."""
    error = PassFailedException(f"'{op.name}' op {message}")
    error.op = op  # type: ignore[attr-defined]
    return error


@dataclass
class Emit:
    """Collects the ops a rewrite creates, with helpers for the arithmetic it needs."""

    ops: list[Operation] = field(default_factory=list[Operation])

    def __call__(self, op: Operation) -> Operation:
        self.ops.append(op)
        return op

    def const(self, value: int, type: IntegerType = i64) -> SSAValue:
        return self(llvm_build.constant(value, type)).results[0]

    def binary(self, cls: type[Operation], lhs: SSAValue, rhs: SSAValue | int) -> SSAValue:
        if isinstance(rhs, int):
            assert isinstance(lhs.type, IntegerType)
            rhs = self.const(rhs, lhs.type)
        return self(llvm_build.binary(cls, lhs, rhs)).results[0]

    def add(self, lhs: SSAValue, rhs: SSAValue | int) -> SSAValue:
        return lhs if isinstance(rhs, int) and rhs == 0 else self.binary(llvm.AddOp, lhs, rhs)

    def mul(self, lhs: SSAValue, rhs: SSAValue | int) -> SSAValue:
        return lhs if isinstance(rhs, int) and rhs == 1 else self.binary(llvm.MulOp, lhs, rhs)

    def icmp(self, predicate: str, lhs: SSAValue, rhs: SSAValue | int) -> SSAValue:
        if isinstance(rhs, int):
            assert isinstance(lhs.type, IntegerType)
            rhs = self.const(rhs, lhs.type)
        flag = IntegerAttr(llvm.ICmpPredicateFlag(predicate).to_int(), 64)
        return self(llvm_build.icmp(flag, lhs, rhs)).results[0]

    def resize(self, value: SSAValue, type: IntegerType, signed: bool = False) -> SSAValue:
        assert isinstance(source := value.type, IntegerType)
        if source.width.data == type.width.data:
            return value
        if source.width.data > type.width.data:
            return self(llvm_build.resize(llvm.TruncOp, value, type)).results[0]
        ext = llvm.SExtOp if signed else llvm.ZExtOp
        return self(llvm_build.resize(ext, value, type)).results[0]

    def byte_offset(self, base: SSAValue, offset: SSAValue | int) -> SSAValue:
        """`base + offset` bytes, keeping base's address space."""
        if isinstance(offset, int):
            if offset == 0:
                return base
            offset = self.const(offset)
        assert isinstance(base.type, llvm.LLVMPointerType)
        return self(llvm_build.byte_gep(base, offset)).results[0]

    def bitcast(self, value: SSAValue, type: Attribute) -> SSAValue:
        """`value` as `type` (itself where it has that type already)."""
        return value if value.type == type else self(llvm.BitcastOp(value, type)).results[0]

    def ptrtoint(self, address: SSAValue, type: IntegerType = i64) -> SSAValue:
        return self(llvm.PtrToIntOp(address, type)).results[0]

    def inttoptr(self, value: SSAValue, type: llvm.LLVMPointerType) -> SSAValue:
        # xDSL's IntToPtrOp constructor only makes generic pointers.
        return self(llvm.IntToPtrOp.create(operands=[value], result_types=[type])).results[0]

    def sreg(self, name: str) -> SSAValue:
        return self(nvvm.read_sreg(name)).results[0]

    def if_(self, condition: SSAValue, body: Sequence[Operation]) -> None:
        self(llvm_build.if_then(condition, body))


@dataclass(frozen=True)
class Arith:
    """An integer SSA value whose `+ * ^ & >>` emit llvm ops into `e`, so that a function
    written on ints (`copy_dialect.layout`) computes the same thing at run time."""

    e: Emit
    value: SSAValue

    def _wrap(self, result: SSAValue) -> Arith:
        return Arith(self.e, result)

    def _operand(self, other: Arith | int) -> SSAValue | int:
        return other.value if isinstance(other, Arith) else other

    def __add__(self, other: Arith | int) -> Arith:
        return self._wrap(self.e.add(self.value, self._operand(other)))

    __radd__ = __add__

    def __mul__(self, other: int) -> Arith:
        return self._wrap(self.e.mul(self.value, other))

    __rmul__ = __mul__

    def __xor__(self, other: Arith | int) -> Arith:
        return self._wrap(self.e.binary(llvm.XOrOp, self.value, self._operand(other)))

    def __and__(self, other: Arith | int) -> Arith:
        return self._wrap(self.e.binary(llvm.AndOp, self.value, self._operand(other)))

    def __rshift__(self, other: int) -> Arith:
        return self._wrap(self.e.binary(llvm.LShrOp, self.value, other))
