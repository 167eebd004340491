"""The upstream `memref` ops that xDSL 0.75's `memref` dialect lacks, and that dialect with
them.

- `memref.generic_atomic_rmw` and its terminator `memref.atomic_yield` (MLIR's
  `MemRef_GenericAtomicRMWOp`, `MemRef_AtomicYieldOp`): an atomic read-modify-write of one
  element whose new value the region computes from the current one (its block argument).
  copy-legalize writes it for the TMA reductions `inc` and `dec`, which no
  `memref.atomic_rmw` kind does (`wrapping_body`), and convert-memref-to-llvm lowers exactly
  those two bodies to `red.global.inc.u32` / `red.global.dec.u32` (`wrapping_kind`).

`MEMREF` is xDSL's `memref` dialect plus these ops, under the same name: copy-opt and
`copy_tools.make_context` register it in place of xDSL's (as `upstream_gpu.GPU`).

Deviations from upstream: none in the syntax or the semantics; the lowering takes only the
two wrapping bodies (upstream lowers any body to a compare-and-swap loop).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, MemRefType
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

WRAPPING_KINDS = ("inc", "dec")
"""The wrapping increments of PTX `atom`/`red` (`.inc`/`.dec` on `.u32`): `inc` is
`old >= s ? 0 : old + 1`, `dec` is `old == 0 || old > s ? s : old - 1` (unsigned), LLVM's
`atomicrmw uinc_wrap` / `udec_wrap`."""


@irdl_op_definition
class GenericAtomicRMWOp(IRDLOperation):
    """
    Atomically replaces `memref[indices]` with the value its region yields for the current
    value (the entry block's argument) and returns the current value. The region has no side
    effects; it may use values defined above.

    ```mlir
    %old = memref.generic_atomic_rmw %ref[%i, %j] : memref<64x64xi32> {
    ^bb0(%current: i32):
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %wrap = arith.cmpi uge, %current, %s : i32
      %next = arith.addi %current, %c1 : i32
      %new = arith.select %wrap, %c0, %next : i32
      memref.atomic_yield %new : i32
    }
    ```
    """

    name = "memref.generic_atomic_rmw"

    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    result = result_def()
    atomic_body = region_def("single_block")

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(
        self, ref: SSAValue | Operation, indices: Sequence[SSAValue | Operation], body: Region
    ):
        ref = SSAValue.get(ref)
        assert isinstance(t := ref.type, MemRefType)
        super().__init__(operands=[ref, indices], result_types=[t.element_type], regions=[body])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.memref)
        printer.print_string("[")
        printer.print_list(self.indices, printer.print_operand)
        printer.print_string("] : ")
        printer.print_attribute(self.memref.type)
        printer.print_string(" ")
        printer.print_region(self.atomic_body, print_entry_block_args=True)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> GenericAtomicRMWOp:
        ref = parser.parse_unresolved_operand()
        indices = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(":")
        ref_type = parser.parse_type()
        body = parser.parse_region()
        attrs = parser.parse_optional_attr_dict()
        operands = _resolve(parser, ref, ref_type, indices)
        if not isinstance(ref_type, MemRefType):
            parser.raise_error(f"expected a memref type, got {ref_type}")
        op = cls(operands[0], operands[1:], body)
        op.attributes |= attrs
        return op

    def verify_(self) -> None:
        assert isinstance(t := self.memref.type, MemRefType)
        element = t.element_type
        if len(self.indices) != t.get_num_dims():
            raise VerifyException(
                f"expected {t.get_num_dims()} indices for {t}, got {len(self.indices)}"
            )
        if self.result.type != element:
            raise VerifyException(
                f"expected the result to be the element type {element}, got {self.result.type}"
            )
        block = self.atomic_body.block
        if len(block.args) != 1 or block.args[0].type != element:
            raise VerifyException(
                f"expected the region's block to take one argument of type {element} (the "
                "current value)"
            )
        for op in block.ops:
            if op is not block.last_op and op.name not in _PURE:
                raise VerifyException(
                    f"expected only side-effect-free ops in the body of {self.name}, got {op.name}"
                )
        last = block.last_op
        if not isinstance(last, AtomicYieldOp) or last.result.type != element:
            raise VerifyException(
                f"expected the region to end with memref.atomic_yield of a {element}"
            )


@irdl_op_definition
class AtomicYieldOp(IRDLOperation):
    """
    Yields the new value of a `memref.generic_atomic_rmw`'s element.

    ```mlir
    memref.atomic_yield %new : i32
    ```
    """

    name = "memref.atomic_yield"

    result = operand_def(AnyAttr())

    traits = traits_def(IsTerminator(), HasParent(GenericAtomicRMWOp))

    assembly_format = "$result attr-dict `:` type($result)"

    def __init__(self, value: SSAValue | Operation):
        super().__init__(operands=[value])


_PURE = ("arith.constant", "arith.cmpi", "arith.addi", "arith.subi", "arith.select",
         "arith.ori", "arith.andi")  # fmt: skip
"""The ops the body may hold: side-effect-free integer arith (what the wrapping bodies
use; upstream allows any op without side effects)."""


def _resolve(
    parser: Parser, ref: UnresolvedOperand, ref_type: Attribute, indices: list[UnresolvedOperand]
) -> list[SSAValue]:
    index = IndexType()
    return [
        parser.resolve_operand(ref, ref_type),
        *(parser.resolve_operand(i, index) for i in indices),
    ]


def _constant(value: int, t: IntegerType) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, t))


def wrapping_body(kind: str, s: SSAValue) -> Region:
    """The body of a `memref.generic_atomic_rmw` that does PTX's `inc` or `dec` (WRAPPING_KINDS)
    of the element with `s` (an i32): the forms `wrapping_kind` recognizes."""
    assert isinstance(t := s.type, IntegerType)
    block = Block(arg_types=[t])
    current = block.args[0]
    c0, c1 = _constant(0, t), _constant(1, t)
    if kind == "inc":
        wrap = arith.CmpiOp(current, s, "uge")
        step = arith.AddiOp(current, c1)
        new = arith.SelectOp(wrap, c0, step)
        block.add_ops([c0, c1, wrap, step, new, AtomicYieldOp(new)])
    else:
        zero = arith.CmpiOp(current, c0, "eq")
        above = arith.CmpiOp(current, s, "ugt")
        wrap = arith.OrIOp(zero, above)
        step = arith.SubiOp(current, c1)
        new = arith.SelectOp(wrap, s, step)
        block.add_ops([c0, c1, zero, above, wrap, step, new, AtomicYieldOp(new)])
    return Region(block)


def wrapping_kind(op: GenericAtomicRMWOp) -> tuple[str, SSAValue] | None:
    """`("inc" | "dec", s)` when the op's body is `wrapping_body(kind, s)` with `s` an i32
    defined outside it (compared op by op: names, properties, operands); else None."""
    block, t = op.atomic_body.block, op.result.type
    if not isinstance(t, IntegerType) or t.width.data != 32:
        return None
    for kind in WRAPPING_KINDS:
        outside = Block(arg_types=[t]).args[0]  # stands for s in the reference body
        want = list(wrapping_body(kind, outside).block.ops)
        ops = list(block.ops)
        found: dict[SSAValue, SSAValue] = {}
        if len(ops) == len(want) and all(
            _alike(a, b, block, outside, found) for a, b in zip(ops, want, strict=True)
        ):
            return kind, found[outside]
    return None


def _alike(
    a: Operation, b: Operation, block: Block, outside: SSAValue, found: dict[SSAValue, SSAValue]
) -> bool:
    """Whether `a` (in `block`) does what `b` (in the reference body) does: the same op and
    properties, and operands at the same places (the block argument, the result of the op at
    the same index, or, for `outside`, one value defined outside `block` throughout)."""
    if a.name != b.name or len(a.operands) != len(b.operands) or a.properties != b.properties:
        return False
    ref_block = b.parent_block()
    assert ref_block is not None
    for x, y in zip(a.operands, b.operands, strict=True):
        if y is outside:
            if _inside(x, block) or found.setdefault(outside, x) is not x:
                return False
        elif not _same_place(x, y, block, ref_block):
            return False
    return True


def _inside(value: SSAValue, block: Block) -> bool:
    owner = value.owner
    return owner is block or (isinstance(owner, Operation) and owner.parent_block() is block)


def _same_place(x: SSAValue, y: SSAValue, block: Block, ref_block: Block) -> bool:
    """Whether `x` is defined in `block` where `y` is in `ref_block` (the argument, or the
    result of the op at the same index)."""
    if y.owner is ref_block:
        return x.owner is block
    if not isinstance(x.owner, Operation) or x.owner.parent_block() is not block:
        return False
    assert isinstance(y.owner, Operation)
    return list(block.ops).index(x.owner) == list(ref_block.ops).index(y.owner)


MEMREF = Dialect(
    "memref",
    [*memref.MemRef.operations, GenericAtomicRMWOp, AtomicYieldOp],
    [*memref.MemRef.attributes],
)
