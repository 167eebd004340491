"""`copy.assume`: a fact the frontend knows about an integer value (a trip count of at least
1, a range, a divisibility), stated for the protocol analysis and checked at run time.

Like LLVM's `llvm.intr.assume` (MLIR's `llvm.intr.assume %cond : i1`), the fact is the
author's claim: the analysis does not prove it, it relies on it (a trip count assumed to be
at least 1 is never tried as 0). Unlike it, the fact is stated of a value, not of an i1
condition, in the terms MLIR's `affine` and `arith` analyses use (a range `[lo, hi]`, as
`arith`'s integer ranges; a divisor, as `affine`'s `mod` and `floordiv` reasoning needs),
so that the analysis can read it without solving conditions. The value is read as a signed
integer (`index` as 64 bits), an `i1` as 0 or 1.

Normal lowering drops the op. Under `--debug-guards` each thread that reaches it checks the
fact and traps with the rule id AS3 and the value where it fails; the interpreter checks it
in every thread that runs it.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, IndexType, IntegerAttr, IntegerType, i64
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.irdl import IRDLOperation, operand_def, opt_prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer

from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import constant_int

MAX_BITS = 64
"""The widest integer a fact is stated of: the interpreter's and the guards' values are
64-bit."""


def value_range(t: Attribute) -> tuple[int, int] | None:
    """The values of type `t` as a fact reads them (signed; `i1` as 0 or 1), None for a
    type no fact is stated of (not an integer, or wider than MAX_BITS)."""
    if isinstance(t, IndexType):
        return -(2**63), 2**63 - 1
    if isinstance(t, IntegerType) and 1 <= t.width.data <= MAX_BITS:
        width = t.width.data
        return (0, 1) if width == 1 else (-(2 ** (width - 1)), 2 ** (width - 1) - 1)
    return None


def as_read(value: int, t: Attribute) -> int:
    """An integer of type `t` (an attribute's or a register's bits) as a fact reads it."""
    if isinstance(t, IntegerType) and t.width.data == 1:
        return value & 1
    width = MAX_BITS if isinstance(t, IndexType) else t.width.data  # type: ignore[attr-defined]
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


@copy_op_definition
class AssumeOp(IRDLOperation):
    """
    States a fact about an integer or index value that the protocol analysis may rely on:
    `ge lo` (at least `lo`), `le hi` (at most `hi`), `in [lo, hi]` (both), and/or
    `multiple_of d`. A loop bound assumed `ge 1` is never tried as 0 iterations. The op
    stands in the block that defines the value (rule AS2), so that it holds wherever the
    value is used. Normal lowering drops it; `--debug-guards` checks it at run time (AS3).

    ```mlir
    copy.assume %n ge 1 : index
    copy.assume %n in [64, 4096] multiple_of 64 : index
    ```
    """

    name = "copy.assume"

    SYNTAX: ClassVar[str] = (
        "$value ((`ge` $lower | `le` $upper | `in` `[` $lower `,` $upper `]`))? "
        "(`multiple_of` $divisor)? attr-dict `:` type($value)"
    )
    """The custom form (`parse`, `print`), in the notation of an assembly format."""

    value = operand_def(Attribute)

    lower = opt_prop_def(IntegerAttr[I64])
    upper = opt_prop_def(IntegerAttr[I64])
    divisor = opt_prop_def(IntegerAttr[I64])

    def __init__(
        self,
        value: SSAValue | Operation,
        *,
        lower: int | None = None,
        upper: int | None = None,
        divisor: int | None = None,
    ):
        bounds = {"lower": lower, "upper": upper, "divisor": divisor}
        super().__init__(
            operands=[value],
            properties={k: IntegerAttr(v, i64) for k, v in bounds.items() if v is not None},
        )

    # The fact, as Python values.

    @property
    def lo(self) -> int | None:
        return None if self.lower is None else self.lower.value.data

    @property
    def hi(self) -> int | None:
        return None if self.upper is None else self.upper.value.data

    @property
    def step(self) -> int:
        """The divisor (1: none)."""
        return 1 if self.divisor is None else self.divisor.value.data

    def holds(self, n: int) -> bool:
        """Whether the value `n` (as a fact reads it) satisfies the fact."""
        lo, hi = self.lo, self.hi
        return (lo is None or n >= lo) and (hi is None or n <= hi) and n % self.step == 0

    def fact(self) -> str:
        """The fact as the custom form writes it: `ge 1`, `in [1, 64] multiple_of 8`."""
        lo, hi = self.lo, self.hi
        parts = []
        if lo is not None and hi is not None:
            parts.append(f"in [{lo}, {hi}]")
        elif lo is not None:
            parts.append(f"ge {lo}")
        elif hi is not None:
            parts.append(f"le {hi}")
        if self.divisor is not None:
            parts.append(f"multiple_of {self.step}")
        return " ".join(parts)

    def subject(self) -> str:
        """The value, as a message names it."""
        return f"%{self.value.name_hint}" if self.value.name_hint else "the value"

    # Custom syntax: `copy.assume %v ge 1 multiple_of 8 : index`.

    @classmethod
    def parse(cls, parser: Parser) -> AssumeOp:
        operand = parser.parse_unresolved_operand()
        lower = upper = divisor = None
        if parser.parse_optional_keyword("ge") is not None:
            lower = parser.parse_integer(allow_boolean=False)
        elif parser.parse_optional_keyword("le") is not None:
            upper = parser.parse_integer(allow_boolean=False)
        elif parser.parse_optional_keyword("in") is not None:
            parser.parse_punctuation("[")
            lower = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation(",")
            upper = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation("]")
        if parser.parse_optional_keyword("multiple_of") is not None:
            divisor = parser.parse_integer(allow_boolean=False)
        if lower is None and upper is None and divisor is None:
            parser.raise_error("expected a fact: 'ge', 'le', 'in [lo, hi]' or 'multiple_of'")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        (value,) = parser.resolve_operands([operand], [t], parser.pos)
        op = cls(value, lower=lower, upper=upper, divisor=divisor)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        if fact := self.fact():
            printer.print_string(f" {fact}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)

    def verify_(self) -> None:
        t, lo, hi, step = self.value.type, self.lo, self.hi, self.step
        allowed = value_range(t)
        # rule: AS1
        if allowed is None:
            raise Error(
                f"expected an integer (of at most {MAX_BITS} bits) or index operand, got {t}",
                note="state the fact of the integer or index value this one is computed "
                "from, or drop the assumption",
            )
        # rule: AS1
        if lo is None and hi is None and self.divisor is None:
            raise Error(
                "expected a fact ('ge', 'le', 'in [lo, hi]' or 'multiple_of'), got none",
                note=f"state what is known, e.g. copy.assume {self.subject()} ge 1 : {t}",
            )
        # rule: AS1
        if lo is not None and hi is not None and lo > hi:
            raise Error(
                f"expected lo <= hi, got in [{lo}, {hi}]: no value is in the range",
                note=f"swap the bounds: in [{hi}, {lo}]",
            )
        # rule: AS1
        if step <= 0:
            raise Error(
                f"expected a positive divisor, got multiple_of {step}",
                note=f"give a divisor >= 1 (multiple_of {abs(step) or 8}: the value is 0, "
                f"{abs(step) or 8}, {2 * (abs(step) or 8)}, ...)",
            )
        least, most = allowed
        for word, bound in (("ge", lo), ("le", hi)):
            # rule: AS1
            if bound is not None and not least <= bound <= most:
                nearest = min(max(bound, least), most)
                raise Error(
                    f"expected a bound within {t}'s range [{least}, {most}], got {word} {bound}",
                    note=f"every {t} value is in [{least}, {most}]: give a bound within it "
                    f"(the nearest is {word} {nearest}), or state the fact of a wider value "
                    "(arith.extsi to i64)",
                )
        self.verify_satisfiable(least, most)
        self.verify_placement()
        self.verify_constant()

    def verify_satisfiable(self, least: int, most: int) -> None:
        """AS1: some value of the range is a multiple of the divisor."""
        lo = least if self.lo is None else self.lo
        hi = most if self.hi is None else self.hi
        step = self.step
        first = -(-lo // step) * step
        # rule: AS1
        if first > hi:
            below, above = (hi // step) * step, first
            raise Error(
                f"expected a range that holds a multiple of {step}, got {self.fact()}: no "
                "value satisfies the assumption",
                note=f"widen the range to a multiple of {step} (in [{min(lo, below)}, {hi}] or "
                f"in [{lo}, {max(hi, above)}]), or change the divisor",
            )

    def verify_placement(self) -> None:
        """AS2: the op stands in the block that defines its value."""
        here = self.parent_block()
        v = self.value
        home = v.block if isinstance(v, BlockArgument) else v.owner.parent_block()  # type: ignore[union-attr]
        # rule: AS2
        if here is not None and home is not None and here is not home:
            raise Error(
                f"expected in the block that defines {self.subject()}, got one in a nested region: "
                f"the fact would be used wherever {self.subject()} is, but this op runs only "
                "where its region runs",
                note=f"move the copy.assume into the block that defines {self.subject()}, right "
                "after the definition",
            )

    def verify_constant(self) -> None:
        """AS3: a constant value satisfies the fact."""
        c = constant_int(self.value)
        if c is None:
            return
        n = as_read(c, self.value.type)
        # rule: AS3
        if not self.holds(n):
            raise Error(
                f"the assumption does not hold: {self.subject()} is the constant {n}, "
                f"expected {self.fact()}",
                note=f"drop the copy.assume (it is false in every run), or correct the "
                f"constant {self.subject()}",
            )
