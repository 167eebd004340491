"""Values of the concise kernel-building API: an SSA value with Python's operators, and the
constants Python ints become.

`Value` wraps an `SSAValue` of an integer type (index, i1, i32, i64) and builds `arith` ops
with the current implicit builder: `p % stages` is an `arith.remui`, `p // stages` an
`arith.divui`, `lap & 1`, `parity ^ True`, `k >= stages` (unsigned compares: the values are
positions and counts), and a Python int on either side becomes an `arith.constant` of the
other side's type, built right before the op that uses it (where the op-by-op builders put
theirs, so that the two give the same IR). `==` and `!=` stay Python's (a Value is hashable):
`a.eq(b)` and `a.ne(b)` compare in the IR.

    with ImplicitBuilder(block):
        slot = p % 4                  # %c4 = arith.constant 4 : index; arith.remui %p, %c4
        parity = (p // 4 % 2).ne(0)   # the barrier phase's parity, an i1

Every op made here is located at the caller's line (`frontends.locations`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

from xdsl.dialects import arith, gpu
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, i1, i32
from xdsl.ir import Attribute, Operation, SSAValue

from frontends.locations import helper_module

helper_module(__name__)  # an op made here is located at the line that called it


class Value:
    """An SSA value of an integer type whose operators build `arith` ops."""

    __slots__ = ("ssa",)

    def __init__(self, ssa: SSAValue | Operation):
        self.ssa = SSAValue.get(ssa)

    @property
    def type(self) -> Attribute:
        return self.ssa.type

    def __repr__(self) -> str:
        return f"Value({self.ssa.name_hint or '?'}: {self.type})"

    def _binary(self, cls: type[Operation], other: Operand, swap: bool = False) -> Value:
        rhs = as_ssa(other, self.type)
        lhs, rhs = (rhs, self.ssa) if swap else (self.ssa, rhs)
        return Value(cls(lhs, rhs))  # pyright: ignore[reportCallIssue]

    def __add__(self, other: Operand) -> Value:
        return self._binary(arith.AddiOp, other)

    def __radd__(self, other: Operand) -> Value:
        return self._binary(arith.AddiOp, other, swap=True)

    def __sub__(self, other: Operand) -> Value:
        return self._binary(arith.SubiOp, other)

    def __rsub__(self, other: Operand) -> Value:
        return self._binary(arith.SubiOp, other, swap=True)

    def __mul__(self, other: Operand) -> Value:
        return self._binary(arith.MuliOp, other)

    def __rmul__(self, other: Operand) -> Value:
        return self._binary(arith.MuliOp, other, swap=True)

    def __floordiv__(self, other: Operand) -> Value:
        return self._binary(arith.DivUIOp, other)

    def __mod__(self, other: Operand) -> Value:
        return self._binary(arith.RemUIOp, other)

    def __and__(self, other: Operand) -> Value:
        return self._binary(arith.AndIOp, other)

    def __or__(self, other: Operand) -> Value:
        return self._binary(arith.OrIOp, other)

    def __xor__(self, other: Operand) -> Value:
        return self._binary(arith.XOrIOp, other)

    def _compare(self, other: Operand, predicate: str) -> Value:
        return Value(arith.CmpiOp(self.ssa, as_ssa(other, self.type), predicate))

    def __lt__(self, other: Operand) -> Value:
        return self._compare(other, "ult")

    def __le__(self, other: Operand) -> Value:
        return self._compare(other, "ule")

    def __gt__(self, other: Operand) -> Value:
        return self._compare(other, "ugt")

    def __ge__(self, other: Operand) -> Value:
        return self._compare(other, "uge")

    def eq(self, other: Operand) -> Value:
        return self._compare(other, "eq")

    def ne(self, other: Operand) -> Value:
        return self._compare(other, "ne")

    __hash__ = object.__hash__


INDEX = IndexType()

Operand: TypeAlias = "Value | SSAValue | int | bool"
"""What the API takes where a value goes: a Value, an SSAValue, or a Python int (a bool for
an i1), which becomes a constant."""


def const(value: int | bool, type_: Attribute = INDEX) -> Value:
    """An `arith.constant` of `type_` (index by default; an int type, i1 for a bool)."""
    if not isinstance(value, int):
        raise TypeError(f"expected an int or a bool for a constant, got {value!r}")
    if not isinstance(type_, IndexType | IntegerType):
        raise TypeError(f"expected an index or integer type for a constant, got {type_}")
    return Value(arith.ConstantOp(IntegerAttr(int(value), type_)))


def index(value: int) -> Value:
    return const(value)


def i32_const(value: int) -> Value:
    return const(value, i32)


def boolean(value: bool) -> Value:
    """The i1 `value` (`false` is the parity of a barrier's first phase)."""
    return const(value, i1)


def as_ssa(value: Operand, type_: Attribute = INDEX) -> SSAValue:
    """`value` as an SSAValue: a Python int becomes a constant of `type_` (an i1 for a bool)."""
    match value:
        case Value():
            return value.ssa
        case SSAValue():
            return value
        case bool():
            return const(value, i1 if isinstance(type_, IndexType) else type_).ssa
        case int():
            return const(value, type_).ssa
    raise TypeError(f"expected a Value, an SSAValue or an int, got {value!r}")


def unwrap(value: Any) -> Any:
    """`value` with each Value in it (in a list or tuple too) replaced by its SSAValue."""
    if isinstance(value, Value):
        return value.ssa
    if isinstance(value, list | tuple):
        return type(value)(unwrap(v) for v in value)  # pyright: ignore[reportUnknownArgumentType]
    return value


def values(ssas: Sequence[SSAValue]) -> list[Value]:
    return [Value(v) for v in ssas]


_XYZ = {"x": gpu.DimensionEnum.X, "y": gpu.DimensionEnum.Y, "z": gpu.DimensionEnum.Z}


def block_id(dim: str = "x") -> Value:
    return Value(gpu.BlockIdOp(gpu.DimensionAttr(_XYZ[dim])))


def grid_dim(dim: str = "x") -> Value:
    return Value(gpu.GridDimOp(gpu.DimensionAttr(_XYZ[dim])))


def thread_id(dim: str = "x") -> Value:
    return Value(gpu.ThreadIdOp(gpu.DimensionAttr(_XYZ[dim])))
