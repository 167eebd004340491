"""TMEM register access (tcgen05.ld, tcgen05.st): `copy.tmem_load` and `copy.tmem_store`,
and the checks they share (shape, repeat count, registers, the 16x32bx2 half offset, and
`pack` / `unpack`: `.pack::16b` / `.unpack::16b`, 16-bit values two to a register). The TMEM
tables and refs are `copy_dialect.tmem`'s."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    I32,
    I64,
    Float32Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    UnitAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import (
    Attribute,
    Operation,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    result_def,
)

from copy_dialect.attributes import (
    TmemReduce,
    TmemReduceAttr,
    TmemShape,
    TmemShapeAttr,
    enum_attr,
)
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.memory import (
    TMEM,
    bitwidth,
    memory_space,
)
from copy_dialect.tmem import (
    TMEM_REGS_PER_NUM,
    check_tcgen05,
    check_tmem_ref,
    tmem_columns,
    tmem_span,
)
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import (
    constant_int,
    enclosing_target,
    feature_error,
    retarget_note,
)
from facts.target import TMEM_LOAD_REDUCE


def packed(op: TmemLoadOp | TmemStoreOp) -> bool:
    """Whether the access is `.pack::16b` (a load with `pack`) or `.unpack::16b` (a store
    with `unpack`): each 32-bit register holds the 16-bit values of two adjacent columns."""
    return (op.pack if isinstance(op, TmemLoadOp) else op.unpack) is not None


PACKED_ELEMENT_BITS = 16
"""`.pack::16b` / `.unpack::16b` move 16-bit values, two to a 32-bit register."""


def check_packed_types(op: TmemLoadOp | TmemStoreOp, vector: VectorType, regs: int) -> None:
    """`.pack::16b` / `.unpack::16b` (PTX ISA, tcgen05.ld / tcgen05.st): one 16-bit value
    in each 32-bit TMEM column, two adjacent columns' values in each 32-bit register. So the
    vector has 16-bit elements (f16, bf16, i16), two per register, the first from the lower
    column in the register's low half; and the ref's cells are 32-bit."""
    assert isinstance(t := op.tmem.type, MemRefType)
    word = "pack" if isinstance(op, TmemLoadOp) else "unpack"
    ref_bits, bits = bitwidth(t.element_type), bitwidth(vector.element_type)
    # rule: J25
    if bits != PACKED_ELEMENT_BITS:
        raise Error(
            f"{word} moves 16-bit values, two to a 32-bit register, got elements of type "
            f"{vector.element_type}",
            note=f"use a vector of f16, bf16 or i16 with {word} (vector<{2 * regs}xf16>), or "
            f"drop {word} to move whole 32-bit registers",
        )
    # rule: J25
    if ref_bits != 32:
        raise Error(
            f"{word} puts one 16-bit value in each 32-bit TMEM column, got a TMEM ref of "
            f"{t.element_type}",
            note="give the TMEM ref a 32-bit element type (i32: each column's low half holds "
            f"a value), or drop {word} to move a ref of {t.element_type} packed as it is",
        )
    # rule: J5
    if vector.get_num_dims() != 1 or vector.get_shape()[0] != 2 * regs:
        raise Error(
            f"invalid {word} vector length {list(vector.get_shape())} for shape "
            f"{op.shape.data} and num {op.num.value.data}",
            note=f"{regs} 32-bit registers per thread hold {2 * regs} 16-bit values with "
            f"{word}: use vector<{2 * regs}x{vector.element_type}>",
        )


def check_tmem_access(op: TmemLoadOp | TmemStoreOp, vector: VectorType, verb: str) -> None:
    """The checks tcgen05.ld and tcgen05.st share: shape, num, registers, offset."""
    assert isinstance(t := op.tmem.type, MemRefType)
    check_tcgen05(op)
    check_tmem_ref(t)
    shape, num = op.shape.data, op.num.value.data
    # rule: J4
    if num < 1 or num > 128 or num & (num - 1):
        raise Error(
            f"num must be a power of 2 and <= 128, got: {num}",
            note="num is the repeat count .x1 ... .x128: use a power of 2, e.g. num "
            f"{min(128, 1 << max(0, num - 1).bit_length())}",
        )
    regs = num * TMEM_REGS_PER_NUM[shape]
    # rule: J4
    if regs > 128:
        raise Error(
            f"TMEM translation too big : shape={shape} and num={num} involve {regs} registers "
            "per-thread, which exceeds the limit of 128",
            note=f"use num <= {128 // TMEM_REGS_PER_NUM[shape]} for shape {shape} (and a "
            f"vector of {128 // TMEM_REGS_PER_NUM[shape] * TMEM_REGS_PER_NUM[shape]} elements)",
        )
    # rule: J5
    if shape == TmemShape.S16X32BX2 and op.offset is None:
        raise Error(
            "shape 16x32bx2 requires offset argument",
            note="give the second half's column offset: {offset = 16}",
        )
    # rule: J17
    if shape != TmemShape.S16X32BX2 and op.offset is not None:
        raise Error(
            f"offset applies to shape 16x32bx2 only, got shape {shape}",
            note="drop offset",
        )
    if op.offset is not None:
        check_half_offset(op, op.offset.value.data, num)
    check_columns(op, shape, num)
    if packed(op):
        check_packed_types(op, vector, regs)
        return
    # rule: J5
    if vector.get_num_dims() != 1 or vector.get_shape()[0] != regs:
        raise Error(
            f"invalid {verb} type length {list(vector.get_shape())} for shape {shape} in "
            f"{'tcgen05.ld' if verb == 'result' else 'tcgen05.st'} Op",
            note=f"shape {shape} with num = {num} moves {regs} 32-bit registers per thread: "
            f"use vector<{regs}x{vector.element_type}>",
        )
    # rule: J5
    if bitwidth(vector.element_type) != 32:
        raise Error(
            f"tcgen05 moves 32-bit registers, got elements of type {vector.element_type}",
            note="use f32, i32 or another 32-bit element type",
        )


def check_columns(op: TmemLoadOp | TmemStoreOp, shape: TmemShape, num: int) -> None:
    """The columns the access reaches (`tmem_span` from its column) lie in the ref: all of
    them when the column is a constant, else at least as many as it spans."""
    assert isinstance(t := op.tmem.type, MemRefType)
    columns = tmem_columns(t)
    offset = 0 if op.offset is None else op.offset.value.data
    span = tmem_span(shape, num, offset, packed(op))
    start = constant_int(op.column)
    # rule: J23
    if span > columns or (start is not None and not 0 <= start <= columns - span):
        at = "" if start is None else f" from column {start}"
        if span <= columns:
            where = f"start it at a column in [0, {columns - span}]"
        else:
            room = columns - start if start is not None and 0 <= start < columns else columns
            fit = room * num // span if shape != TmemShape.S16X32BX2 else 0
            where = f"use a num that spans at most the ref's {room} columns{at}"
            if fit:
                fits = 1 << (fit.bit_length() - 1)
                where += f" (num {fits}, {fits * TMEM_REGS_PER_NUM[shape]} registers a thread)"
            where += ", or a wider ref"
        raise Error(
            f"{shape} x {num} reaches {span} TMEM columns{at}, past the {columns} columns "
            "of the ref",
            note=f"{where}: TMEM past an allocation belongs to another (or to none)",
        )


def check_half_offset(op: TmemLoadOp | TmemStoreOp, offset: int, num: int) -> None:
    """The 16x32bx2 immediate (immHalfSplitoff): the column of the second half (lanes 16-31)
    relative to the first. Each half spans `num` columns, so the second one must start at
    0 or after, and end within the ref (from a constant start column, within the ref from
    there); LLVM takes it as an unsigned 32-bit immediate."""
    assert isinstance(t := op.tmem.type, MemRefType)
    columns = tmem_columns(t)
    start = constant_int(op.column) or 0
    num *= 2 if packed(op) else 1  # with pack, each half spans two columns a register
    # rule: J18
    if not 0 <= offset <= columns - start - num:
        last = columns - start - num
        raise Error(
            f"the 16x32bx2 half offset must be in [0, {last}] for {num} columns per half from "
            f"column {start} of a {columns}-column TMEM ref, got {offset}",
            note=f"the second half reads columns [start + offset, start + offset + {num}): use "
            f"an offset of 0 to {last}"
            if last >= 0
            else f"the ref is too narrow for {num} columns per half from column {start}: "
            "use a smaller num or a wider ref",
        )


@copy_op_definition
class TmemLoadOp(IRDLOperation):
    """
    Loads TMEM into registers (`tcgen05.ld.sync.aligned`), starting at a column; each warp
    reads its quarter of the lanes. With `reduce`, also returns the min/max over the loaded
    values (`tcgen05.ld.red`). Wait with `copy.tmem_wait load` before using the values.

    ```mlir
    %v = copy.tmem_load %acc[%col] shape shape_32x32b num 4
        : memref<128x128xf32, #copy.tmem> -> vector<4xf32>
    ```
    """

    name = "copy.tmem_load"

    tmem = operand_def(MemRefType)
    column = operand_def(IndexType)

    shape = prop_def(TmemShapeAttr)
    num = prop_def(IntegerAttr[I32])
    offset = opt_prop_def(IntegerAttr[I64])
    reduce = opt_prop_def(TmemReduceAttr)
    abs = opt_prop_def(UnitAttr)
    nan = opt_prop_def(UnitAttr)
    pack = opt_prop_def(UnitAttr)
    """`.pack::16b`: two adjacent columns' 16-bit values to a register (`packed`)."""

    result = result_def(VectorType)
    red = opt_result_def()

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$tmem `[` $column `]` `shape` $shape `num` $num (`pack` $pack^)? "
        "(`reduce` $reduce^)? (`abs` $abs^)? (`nan` $nan^)? attr-dict "
        "`:` type($tmem) `->` type($result) (`,` type($red)^)?"
    )

    def __init__(
        self,
        tmem: SSAValue | Operation,
        column: SSAValue | Operation,
        *,
        shape: TmemShape | str,
        num: int,
        result_type: VectorType,
        offset: int | None = None,
        reduce: TmemReduce | str | None = None,
        abs: bool = False,
        nan: bool = False,
        pack: bool = False,
    ):
        assert isinstance(t := SSAValue.get(tmem).type, MemRefType)
        super().__init__(
            operands=[tmem, column],
            properties={
                "shape": TmemShapeAttr(TmemShape(shape)),
                "num": IntegerAttr(num, i32),
                "offset": None if offset is None else IntegerAttr(offset, i64),
                "reduce": enum_attr(TmemReduceAttr, TmemReduce, reduce),
                "abs": UnitAttr() if abs else None,
                "nan": UnitAttr() if nan else None,
                "pack": UnitAttr() if pack else None,
            },
            result_types=[result_type, [] if reduce is None else [t.element_type]],
        )

    def verify_(self) -> None:
        assert isinstance(t := self.tmem.type, MemRefType)
        assert isinstance(vector := self.result.type, VectorType)
        # rule: J1
        if memory_space(t) != TMEM:
            raise Error(
                "Async load only supports TMEM refs",
                note=f"got a ref in {memory_space(t)}; load SMEM or GMEM from threads with "
                "memref.load, and copy GMEM to SMEM with copy.async_copy",
            )
        # rule: J24
        if self.pack is not None and self.reduce is not None:
            raise Error(
                "pack does not combine with reduce: tcgen05.ld.red has no .pack::16b",
                note="drop pack to reduce the 32-bit values, or drop reduce (and the 'red' "
                "result) to load packed 16-bit pairs",
            )
        self._verify_reduce(t.element_type)
        check_tmem_access(self, vector, "result")
        # rule: J9
        if not packed(self) and vector.element_type != t.element_type:
            raise Error(
                "The `source` and `result` must have the same element type.",
                note=f"the TMEM ref holds {t.element_type}, the result has {vector.element_type}",
            )

    def _verify_reduce(self, elt: Attribute) -> None:
        has_abs = self.abs is not None
        has_nan = self.nan is not None
        if self.reduce is None:
            # rule: J15
            if self.red is not None:
                raise Error(
                    "'red' result is present but redOp is not set",
                    note="add reduce min|max, or drop the second result",
                )
            # rule: J15
            if has_abs or has_nan:
                raise Error(
                    f"'{'abs' if has_abs else 'NaN'}' requires 'redOp' to be set",
                    note="abs and nan modify a fused reduction: drop them, or add reduce min|max "
                    "with its result (%v, %r = copy.tmem_load ...)",
                )
            return
        # rule: J15
        if self.red is None:
            raise Error(
                "redOp is set but 'red' result is not present",
                note="bind the reduced value: %v, %r = copy.tmem_load ...",
            )
        # rule: J2
        if not (
            isinstance(elt, Float32Type) or (isinstance(elt, IntegerType) and elt.width.data == 32)
        ):
            raise Error(
                f"Unsupported dtype for reduction: {elt}. Only float32,  int32 and uint32 are "
                "supported.",
                note="tcgen05.ld.red reduces f32, s32 and u32 values",
            )
        # rule: J15
        if (has_abs or has_nan) and not isinstance(elt, Float32Type):
            raise Error(
                f"'{'abs' if has_abs else 'NaN'}' requires floating-point element type (f32)",
                note="drop abs/nan for integer reductions",
            )
        target = enclosing_target(self)
        # rule: A14
        if target is not None and not TMEM_LOAD_REDUCE.has(target):
            raise feature_error(
                self,
                TMEM_LOAD_REDUCE,
                target,
                uses="with reduce",
                note="reduce the loaded registers with arith ops, or "
                + retarget_note(TMEM_LOAD_REDUCE),
            )
        # rule: J3
        if self.shape.data not in (TmemShape.S32X32B, TmemShape.S16X32BX2):
            raise Error(
                "Fused load-reduce is not supported for this layout",
                note="tcgen05.ld.red exists for shapes 32x32b and 16x32bx2, got "
                f"{self.shape.data}: use shape shape_32x32b or shape shape_16x32bx2",
            )
        # rule: J22
        if self.num.value.data == 1:
            raise Error(
                "Fused load-reduce needs num >= 2, got num 1",
                note="ptxas rejects .x1 for tcgen05.ld.red: load at least 2 registers per "
                "thread (num 2 and a vector<2x...> result), or load without reduce",
            )
        # rule: J15
        if self.red.type != elt:
            raise Error(
                f"the 'red' result must have the element type {elt}, got {self.red.type}",
                note="the reduction yields one value per thread",
            )


@copy_op_definition
class TmemStoreOp(IRDLOperation):
    """
    Stores registers into TMEM (`tcgen05.st.sync.aligned`), starting at a column; each
    warp writes its quarter of the lanes. Wait with `copy.tmem_wait store` before the
    tensor core reads them.

    ```mlir
    copy.tmem_store %v, %acc[%col] shape shape_32x32b num 4
        : vector<4xf32>, memref<128x128xf32, #copy.tmem>
    ```
    """

    name = "copy.tmem_store"

    value = operand_def(VectorType)
    tmem = operand_def(MemRefType)
    column = operand_def(IndexType)

    shape = prop_def(TmemShapeAttr)
    num = prop_def(IntegerAttr[I32])
    offset = opt_prop_def(IntegerAttr[I64])
    unpack = opt_prop_def(UnitAttr)
    """`.unpack::16b`: each register's two 16-bit values to adjacent columns (`packed`)."""

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$value `,` $tmem `[` $column `]` `shape` $shape `num` $num (`unpack` $unpack^)? "
        "attr-dict "
        "`:` type($value) `,` type($tmem)"
    )

    def __init__(
        self,
        value: SSAValue | Operation,
        tmem: SSAValue | Operation,
        column: SSAValue | Operation,
        *,
        shape: TmemShape | str,
        num: int,
        offset: int | None = None,
        unpack: bool = False,
    ):
        super().__init__(
            operands=[value, tmem, column],
            properties={
                "shape": TmemShapeAttr(TmemShape(shape)),
                "num": IntegerAttr(num, i32),
                "offset": None if offset is None else IntegerAttr(offset, i64),
                "unpack": UnitAttr() if unpack else None,
            },
        )

    def verify_(self) -> None:
        assert isinstance(t := self.tmem.type, MemRefType)
        assert isinstance(vector := self.value.type, VectorType)
        # rule: J1
        if memory_space(t) != TMEM:
            raise Error(
                "Async store only supports TMEM refs",
                note=f"got a ref in {memory_space(t)}; store to SMEM or GMEM from threads with "
                "memref.store, one element each",
            )
        check_tmem_access(self, vector, "operand")
        # rule: J8
        if not packed(self) and vector.element_type != t.element_type:
            raise Error(
                f"Stored array has dtype {vector.element_type}, but TMEM has dtype "
                f"{t.element_type}",
                note="bitcast the registers to the TMEM element type first",
            )
