"""The integer values the protocol analysis follows: barrier indices, parities, ring slots,
trip counts and branch conditions, computed from `arith` constants, `gpu` ids and loop
induction variables.

A value is a Python `int` (known; i1 is 0 or 1, other types are kept signed in their
width), a tuple of ints (known per thread of the block: derived from `gpu.thread_id` when
the block size is known), or one of two unknowns: `UNIFORM` (the same for every thread of
the block, e.g. from `gpu.block_id` or a kernel argument) and `VARYING` (may differ between
threads, e.g. loaded data)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum

from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue


class Unknown(Enum):
    UNIFORM = "uniform"
    VARYING = "varying"


UNIFORM = Unknown.UNIFORM
VARYING = Unknown.VARYING
Value = int | tuple[int, ...] | Unknown


def width(t: Attribute) -> int | None:
    if isinstance(t, IndexType):
        return 64
    if isinstance(t, IntegerType):
        return t.width.data
    return None


def wrap(v: int, bits: int) -> int:
    if bits == 1:
        return v & 1
    half = 1 << (bits - 1)
    if -half <= v < half:
        return v
    return ((v + half) % (1 << bits)) - half


def unsigned(v: int, bits: int) -> int:
    return v & ((1 << bits) - 1)


def lift(fn: Callable[..., int | None], args: Sequence[Value]) -> Value:
    """`fn` applied to known values, per thread when one is per thread; unknown when one
    is (varying wins) or `fn` gives None (a division by zero)."""
    if VARYING in args:
        return VARYING
    if UNIFORM in args:
        return UNIFORM
    lanes = next((len(a) for a in args if isinstance(a, tuple)), None)
    if lanes is None:
        result = fn(*args)
        return UNIFORM if result is None else result
    if len(args) == 1:
        values = [fn(a) for a in args[0]]  # type: ignore[union-attr]
    elif len(args) == 2:  # (most ops: a per-thread value and a constant)
        a, b = args
        if not isinstance(a, tuple):
            values = [fn(a, y) for y in b]  # type: ignore[union-attr]
        elif not isinstance(b, tuple):
            values = [fn(x, b) for x in a]
        else:
            values = [fn(x, y) for x, y in zip(a, b, strict=True)]
    else:
        columns = [a if isinstance(a, tuple) else (a,) * lanes for a in args]
        values = [fn(*row) for row in zip(*columns, strict=True)]
    if None in values:
        return VARYING
    return tuple(values)  # type: ignore[arg-type]


def _div(a: int, b: int) -> int | None:
    return None if b == 0 else int(a / b)


def _floordiv(a: int, b: int) -> int | None:
    return None if b == 0 else a // b


def _ceildiv(a: int, b: int) -> int | None:
    return None if b == 0 else -(-a // b)


def _rem(a: int, b: int) -> int | None:
    return None if b == 0 else a - b * int(a / b)


CMPI: dict[int, Callable[[int, int, int], bool]] = {
    0: lambda a, b, w: a == b,
    1: lambda a, b, w: a != b,
    2: lambda a, b, w: a < b,
    3: lambda a, b, w: a <= b,
    4: lambda a, b, w: a > b,
    5: lambda a, b, w: a >= b,
    6: lambda a, b, w: unsigned(a, w) < unsigned(b, w),
    7: lambda a, b, w: unsigned(a, w) <= unsigned(b, w),
    8: lambda a, b, w: unsigned(a, w) > unsigned(b, w),
    9: lambda a, b, w: unsigned(a, w) >= unsigned(b, w),
}


def _binary(name: str, w: int) -> Callable[[int, int], int | None] | None:
    u = lambda v: unsigned(v, w)  # noqa: E731
    table: dict[str, Callable[[int, int], int | None]] = {
        "arith.addi": lambda a, b: a + b,
        "arith.subi": lambda a, b: a - b,
        "arith.muli": lambda a, b: a * b,
        "arith.divsi": _div,
        "arith.divui": lambda a, b: _floordiv(u(a), u(b)),
        "arith.floordivsi": _floordiv,
        "arith.ceildivsi": _ceildiv,
        "arith.ceildivui": lambda a, b: _ceildiv(u(a), u(b)),
        "arith.remsi": _rem,
        "arith.remui": lambda a, b: None if u(b) == 0 else u(a) % u(b),
        "arith.andi": lambda a, b: a & b,
        "arith.ori": lambda a, b: a | b,
        "arith.xori": lambda a, b: a ^ b,
        "arith.maxsi": max,
        "arith.minsi": min,
        "arith.maxui": lambda a, b: a if u(a) >= u(b) else b,
        "arith.minui": lambda a, b: a if u(a) <= u(b) else b,
        "arith.shli": lambda a, b: a << b if 0 <= b < w else None,
        "arith.shrui": lambda a, b: u(a) >> b if 0 <= b < w else None,
        "arith.shrsi": lambda a, b: a >> b if 0 <= b < w else None,
    }
    return table.get(name)


CASTS = {
    "arith.index_cast",
    "arith.index_castui",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
}


def plan(op: Operation) -> Callable[[Sequence[Value]], Value] | None:
    """How an arith op's single integer result follows from its operands' values; None for
    an op this module does not know (its results are then unknown). Made once per op."""
    if len(op.results) != 1 or (w := width(op.results[0].type)) is None:
        return None
    name = op.name
    if name == "arith.constant":
        attr = op.properties.get("value")
        if not isinstance(attr, IntegerAttr):
            return None
        const = wrap(attr.value.data, w)
        return lambda args: const
    if name == "arith.cmpi":
        pred = op.properties["predicate"]
        assert isinstance(pred, IntegerAttr)
        compare = CMPI[pred.value.data]
        wa = width(op.operands[0].type) or 64
        return lambda args: lift(lambda a, b: int(compare(a, b, wa)), args)
    if name == "arith.select":
        return lambda args: (
            (args[1] if args[0] else args[2])
            if isinstance(args[0], int)
            else lift(lambda c, x, y: x if c else y, args)
        )
    if name in CASTS:
        source = width(op.operands[0].type) or 64
        if name in ("arith.extui", "arith.index_castui"):
            return lambda args: lift(lambda a: wrap(unsigned(a, source), w), args)
        return lambda args: lift(lambda a: wrap(a, w), args)
    fn = _binary(name, w)
    if fn is None:
        return None

    def binary(a: int, b: int) -> int | None:
        r = fn(a, b)
        return None if r is None else wrap(r, w)

    absorbs = name in ("arith.muli", "arith.andi")

    def apply(args: Sequence[Value]) -> Value:
        a, b = args
        if isinstance(a, int) and isinstance(b, int):
            r = binary(a, b)
            return UNIFORM if r is None else r
        if absorbs and (a == 0 or b == 0):
            return 0  # (0 times a value not known: a load_tail's count x K at 0 tiles)
        return lift(binary, args)

    return apply


class GenericPlan:
    """How the walk computes an op's results from its operands' values (`Agent.generic`):
    its operands and results, read once, and `plan` for an arith op; for another op (or an
    arith op `plan` does not know), uniform when every operand is known or uniform and the
    op has no region (a `gpu` id is uniform), else varying. Made once per kernel and op."""

    __slots__ = ("operands", "results", "how", "gpu", "regions")

    def __init__(
        self,
        operands: tuple[SSAValue, ...],
        results: tuple[SSAValue, ...],
        how: Callable[[Sequence[Value]], Value] | None,
        gpu: bool,
        regions: bool,
    ):
        self.operands = operands
        self.results = results
        self.how = how
        self.gpu = gpu
        self.regions = regions

    @staticmethod
    def of(op: Operation) -> GenericPlan:
        how = plan(op) if op.name.startswith("arith.") else None
        return GenericPlan(
            tuple(op.operands), tuple(op.results), how, op.name.startswith("gpu."),
            bool(op.regions),
        )  # fmt: skip

    def apply(self, args: list[Value]) -> Value:
        result = None if self.how is None else self.how(args)
        if result is None:
            uniform = self.gpu or all(isinstance(a, int) or a is UNIFORM for a in args)
            result = UNIFORM if uniform and not self.regions else VARYING
        return result
