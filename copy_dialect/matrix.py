"""Thread-collective SMEM matrix copies: `copy.ldmatrix` and `copy.stmatrix` (PTX `ldmatrix`,
`stmatrix`), the checks they share, and the facts of their forms (registers, rows, the
threads that give the row addresses) that the lowering and the interpreter read.

A warp moves one, two or four matrices between SMEM and registers. Each matrix is rows of
16 bytes (8 b16 elements, or 16 b8 ones), each row anywhere in SMEM: thread `i` gives the
address of row `i % rows` of matrix `i // rows` (threads past the last row's give none), as
the element of the buffer at the op's indices, which each thread computes for itself. The
row must be 16 whole bytes of one buffer row, at a 16-byte aligned address; under a swizzle
a row is one whole 16-byte unit (an aligned unit is contiguous under every swizzle, rule
LM7), and its address is the swizzled place of its first element.

The forms (`shape`, `num`, `trans`, the buffer's element width):

| op | shape | elements | num | trans | registers | target |
|---|---|---|---|---|---|---|
| ldmatrix | m8n8 | 16-bit | 1, 2, 4 | optional | num | every target (sm_75+) |
| stmatrix | m8n8 | 16-bit | 1, 2, 4 | optional | num | sm_90+ |
| ldmatrix | m16n16 | 8-bit (`format`) | 1, 2 | required | 2 * num | sm_100a/f, 103a, 110a/f, 120a |
| stmatrix | m16n8 | 8-bit | 1, 2, 4 | required | num | sm_100a/f, 103a, 110a/f, 120a |

(`registers`: the 32-bit registers a thread holds; `format` names 6- or 4-bit sources that
the load widens to bytes.)

The registers are a vector: `vector<R x i32>` (R 32-bit registers, as PTX names them), or
the same bits as the buffer's elements, `vector<2R x f16>` (bf16, i16) for m8n8 and
`vector<4R x i8>` (f8 types) for the 8-bit shapes: element `2r` and `2r + 1` (`4r` ...
`4r + 3`) are register `r`'s low to high halves (bytes), as `mma` and `wgmma` take their
fragments. Which elements a thread holds is the PTX ISA's fragment layout
(interpreter/ops_matrix.py; docs/design.md, "Thread-collective matrix copies").
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    I32,
    IndexType,
    IntegerAttr,
    MemRefType,
    UnitAttr,
    VectorType,
    i32,
)
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)

from copy_dialect import layout
from copy_dialect.attributes import (
    MatrixFormat,
    MatrixFormatAttr,
    MatrixShape,
    MatrixShapeAttr,
    enum_attr,
)
from copy_dialect.blackwell_maps import check_described_swizzle
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.memory import SMEM, bitwidth, element_strides, memory_space, swizzle_of
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import (
    check_smem_indices,
    constant_int,
    enclosing_target,
    feature_error,
    offset_multiple,
    retarget_note,
)
from facts.target import MATRIX_B8, STMATRIX

ROW_BYTES = 16
"""The bytes of a matrix row, which one thread addresses."""

ROWS = {MatrixShape.M8N8: 8, MatrixShape.M16N16: 16, MatrixShape.M16N8: 8}
"""The 16-byte rows in memory of one matrix of each shape (m16n16 .b8: 16 rows of 16 bytes;
m16n8 .trans .b8: the 16x8 matrix's 8 columns, 16 bytes each)."""

REGISTERS_PER_MATRIX = {MatrixShape.M8N8: 1, MatrixShape.M16N16: 2, MatrixShape.M16N8: 1}
"""The 32-bit registers a thread holds of one matrix of each shape."""

ELEMENT_BITS = {MatrixShape.M8N8: 16, MatrixShape.M16N16: 8, MatrixShape.M16N8: 8}

SHAPES = {"copy.ldmatrix": (MatrixShape.M8N8, MatrixShape.M16N16), "copy.stmatrix": (
    MatrixShape.M8N8, MatrixShape.M16N8)}  # fmt: skip
"""The shapes each op has (PTX: ldmatrix .m8n8/.m16n16, stmatrix .m8n8/.m16n8)."""


def registers(shape: MatrixShape, num: int) -> int:
    """The 32-bit registers a thread holds for `num` matrices of `shape`."""
    return num * REGISTERS_PER_MATRIX[shape]


def address_threads(shape: MatrixShape, num: int) -> int:
    """How many threads (0, 1, ...) give row addresses: one per row of each matrix."""
    return num * ROWS[shape]


class MatrixOp(IRDLOperation):
    """What `copy.ldmatrix` and `copy.stmatrix` share: the SMEM row each thread addresses,
    the form, the registers; and their verifier."""

    num = prop_def(IntegerAttr[I32])
    shape = opt_prop_def(MatrixShapeAttr)
    trans = opt_prop_def(UnitAttr)

    irdl_options = (ParsePropInAttrDict(),)

    @property
    def matrix_shape(self) -> MatrixShape:
        return MatrixShape.M8N8 if self.shape is None else self.shape.data

    @property
    def matrices(self) -> int:
        return self.num.value.data

    @property
    def registers_type(self) -> VectorType:
        """The op's vector of registers (the result of ldmatrix, the value of stmatrix)."""
        raise NotImplementedError

    @property
    def is_b8(self) -> bool:
        return self.matrix_shape != MatrixShape.M8N8

    def verify_(self) -> None:
        assert isinstance(t := self.smem.type, MemRefType)
        verb = "reads" if self.name == "copy.ldmatrix" else "writes"
        # rule: LM1
        if memory_space(t) != SMEM:
            raise Error(
                f"{verb} SMEM, got a ref in {memory_space(t)}",
                note="give it a buffer of copy.alloc_smem (memref<..., #copy.smem>); move "
                "GMEM with copy.async_copy or memref.load/store",
            )
        # rule: LM2
        if len(self.indices) != t.get_num_dims():
            raise Error(
                f"expected {t.get_num_dims()} indices into {t}, got {len(self.indices)}",
                note="give one index per dim of the buffer: the first element of the "
                "thread's 16-byte row",
            )
        self._verify_form(t)
        check_described_swizzle(t, "a 16-byte matrix row", flip_only=True)
        self._verify_row(t)
        check_smem_indices(t, self.indices, "element")
        self._verify_registers(t)
        self._verify_target()

    def _verify_form(self, t: MemRefType) -> None:
        shape, num = self.matrix_shape, self.matrices
        nums = (1, 2) if shape == MatrixShape.M16N16 else (1, 2, 4)
        # rule: LM2
        if num not in nums:
            raise Error(
                f"num must be {', '.join(map(str, nums[:-1]))} or {nums[-1]} for shape "
                f"{shape}, got {num}",
                note=f"num is the number of {shape} matrices (.x1, .x2, .x4): use num "
                f"{max(n for n in nums if n <= max(num, 1))}",
            )
        # rule: LM3
        if shape not in SHAPES[self.name]:
            other = SHAPES[self.name][1]
            raise Error(
                f"has no shape {shape} (PTX: .m8n8 or .{other})",
                note=f"use shape {other} for 8-bit matrices, or m8n8 (the default) for 16-bit ones",
            )
        bits = bitwidth(t.element_type)
        want = ELEMENT_BITS[shape]
        # rule: LM3
        if bits != want:
            fix = (
                "use shape " + SHAPES[self.name][1] + " for a buffer of 8-bit elements"
                if bits == 8
                else "use shape m8n8 (the default) for a buffer of 16-bit elements"
                if bits == 16
                else f"use a buffer of {want}-bit elements ("
                + ("f16, bf16, i16" if want == 16 else "i8, f8")
                + "; move other elements with memref.load/store or vector.load/store)"
            )
            raise Error(
                f"shape {shape} moves {want}-bit elements, but the buffer holds {t.element_type}",
                note=fix,
            )
        # rule: LM4
        if self.is_b8 and self.trans is None:
            raise Error(
                f"shape {shape} is transposed: it needs trans (PTX: .trans is mandatory for "
                f"{'16x16' if shape == MatrixShape.M16N16 else '16x8'} matrices)",
                note="add trans",
            )

    def _verify_row(self, t: MemRefType) -> None:
        """The thread's 16 bytes are one aligned piece of one buffer row (rules LM5-LM7)."""
        shape = t.get_shape()
        bits = bitwidth(t.element_type) or 8
        elem = bits // 8
        swizzle = swizzle_of(t)
        strides = element_strides(t)
        row = shape[-1] * elem if shape and shape[-1] >= 0 else None
        # rule: LM5
        if not shape or strides is None or strides[-1] != 1 or (row is not None and row < 16):
            raise Error(
                f"a matrix row is 16 contiguous bytes of the buffer's innermost dim, but {t} "
                + ("has none" if row is not None and row < 16 else "is not contiguous there"),
                note=f"use a buffer whose innermost dim holds at least {ROW_BYTES // elem} "
                f"{t.element_type} elements, contiguous (row-major)",
            )
        column = constant_int(self.indices[-1])
        # rule: LM5
        if row is not None and column is not None and column * elem + ROW_BYTES > row:
            raise Error(
                f"the thread's 16-byte row from column {column} runs past the buffer's "
                f"{shape[-1]}-element row",
                note=f"start the row at a column of at most {row // elem - ROW_BYTES // elem}",
            )
        multiple = offset_multiple(t, self.indices)
        if multiple % ROW_BYTES == 0:
            return
        unit = ROW_BYTES // elem
        if swizzle == layout.UNSWIZZLED:
            # rule: LM6
            raise Error(
                f"a matrix row's address must be 16-byte aligned, but the element offset of "
                f"the indices is known to be a multiple of {multiple} bytes only",
                note=f"compute the innermost index as a multiple of {unit} (e.g. "
                f"arith.muli by {unit}) and keep the outer strides multiples of 16 bytes",
            )
        # rule: LM7
        raise Error(
            f"under a {swizzle}B swizzle a matrix row must be one whole 16-byte unit (only "
            f"a unit stays contiguous), but the indices' offset in the swizzled layout is "
            f"known to be a multiple of {multiple} bytes only",
            note=f"start each row at an innermost index that is a multiple of {unit} (e.g. "
            f"arith.muli by {unit}): the swizzle then moves the whole unit",
        )

    def _verify_registers(self, t: MemRefType) -> None:
        vector = self.registers_type
        regs = registers(self.matrix_shape, self.matrices)
        element = vector.get_element_type()
        per_register = 32 // ELEMENT_BITS[self.matrix_shape]
        what = "result" if self.name == "copy.ldmatrix" else "value"
        # rule: LM8
        if not (
            vector.get_num_dims() == 1
            and (
                (element == i32 and vector.get_shape()[0] == regs)
                or (element == t.element_type and vector.get_shape()[0] == regs * per_register)
            )
        ):
            raise Error(
                f"expected the {what} to be vector<{regs}xi32> or "
                f"vector<{regs * per_register}x{t.element_type}> (num {self.matrices} of "
                f"{self.matrix_shape}: {regs} 32-bit registers a thread), got {vector}",
                note=f"use vector<{regs}xi32>, or vector<{regs * per_register}x"
                f"{t.element_type}> for the same bits as the buffer's elements",
            )

    def _verify_target(self) -> None:
        target = enclosing_target(self)
        if target is None:
            return
        # rule: LM9
        if self.name == "copy.stmatrix" and not STMATRIX.has(target):
            raise feature_error(
                self,
                STMATRIX,
                target,
                note=f"{retarget_note(STMATRIX)}, or store the registers with memref.store / "
                "vector.store",
            )
        # rule: LM10
        if self.is_b8 and not MATRIX_B8.has(target):
            raise feature_error(
                self,
                MATRIX_B8,
                target,
                uses=f"with shape {self.matrix_shape}",
                note=f"{retarget_note(MATRIX_B8)}, or move the 8-bit elements with "
                "vector.load/store",
            )


@copy_op_definition
class LdmatrixOp(MatrixOp):
    """
    Loads `num` matrices from SMEM into each thread's registers (PTX
    `ldmatrix.sync.aligned`): every thread of the warp executes it, threads 0 .. 8 * num - 1
    (16 * num for m16n16) each address one 16-byte row (the element at `indices`), and
    each thread receives its fragment of every matrix. `trans` loads each matrix
    transposed. 8-bit matrices are `shape m16n16` (with `trans`; `format` widens 6- or
    4-bit sources to bytes).

    ```mlir
    %a16 = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 128>>
    %c8 = arith.constant 8 : index
    %k8 = arith.muli %i, %c8 : index
    %a = copy.ldmatrix %a16[%j, %k8] num 4
        : memref<64x64xf16, #copy.smem<swizzle = 128>> -> vector<8xf16>
    %b = copy.ldmatrix %a16[%j, %k8] num 2 trans
        : memref<64x64xf16, #copy.smem<swizzle = 128>> -> vector<2xi32>
    ```

    On sm_100a/f, sm_103a, sm_110a/f, sm_120a, an 8-bit matrix: `copy.ldmatrix %q[%r, %k16]
    shape m16n16 num 1 trans : memref<64x64xi8, #copy.smem> -> vector<8xi8>`.
    """

    name = "copy.ldmatrix"

    smem = operand_def(MemRefType)
    indices = var_operand_def(IndexType)

    format = opt_prop_def(MatrixFormatAttr)

    result = result_def(VectorType)

    assembly_format = (
        "$smem `[` $indices `]` (`shape` $shape^)? `num` $num (`trans` $trans^)? "
        "(`format` $format^)? attr-dict `:` type($smem) `->` type($result)"
    )

    def __init__(
        self,
        smem: SSAValue | Operation,
        indices: list[SSAValue] | list[Operation],
        *,
        num: int,
        result_type: VectorType,
        trans: bool = False,
        shape: MatrixShape | str | None = None,
        format: MatrixFormat | str | None = None,
    ):
        super().__init__(
            operands=[smem, indices],
            properties={
                "num": IntegerAttr(num, i32),
                "shape": enum_attr(MatrixShapeAttr, MatrixShape, shape),
                "trans": UnitAttr() if trans else None,
                "format": enum_attr(MatrixFormatAttr, MatrixFormat, format),
            },
            result_types=[result_type],
        )

    @property
    def registers_type(self) -> VectorType:
        assert isinstance(t := self.result.type, VectorType)
        return t

    def verify_(self) -> None:
        super().verify_()
        # rule: LM3
        if self.format is not None and self.matrix_shape != MatrixShape.M16N16:
            raise Error(
                f"format {self.format.data} widens the sources of 8-bit matrices: it needs "
                f"shape m16n16, got {self.matrix_shape}",
                note="drop format, or load the 8-bit matrices with shape m16n16 num 1 trans",
            )


@copy_op_definition
class StmatrixOp(MatrixOp):
    """
    Stores each thread's registers as `num` matrices into SMEM (PTX
    `stmatrix.sync.aligned`, sm_90): every thread of the warp executes it, threads
    0 .. 8 * num - 1 each address one 16-byte row (the element at `indices`). `trans` stores
    each matrix transposed. 8-bit matrices are `shape m16n8` (with `trans`; sm_100a/f,
    sm_103a, sm_110a/f, sm_120a).

    ```mlir
    %out16 = copy.alloc_smem : memref<64x64xbf16, #copy.smem<swizzle = 128>>
    %c8 = arith.constant 8 : index
    %k8 = arith.muli %i, %c8 : index
    %frag = arith.constant dense<1.0> : vector<8xbf16>
    copy.stmatrix %frag, %out16[%j, %k8] num 4
        : vector<8xbf16>, memref<64x64xbf16, #copy.smem<swizzle = 128>>
    ```
    """

    name = "copy.stmatrix"

    value = operand_def(VectorType)
    smem = operand_def(MemRefType)
    indices = var_operand_def(IndexType)

    assembly_format = (
        "$value `,` $smem `[` $indices `]` (`shape` $shape^)? `num` $num (`trans` $trans^)? "
        "attr-dict `:` type($value) `,` type($smem)"
    )

    def __init__(
        self,
        value: SSAValue | Operation,
        smem: SSAValue | Operation,
        indices: list[SSAValue] | list[Operation],
        *,
        num: int,
        trans: bool = False,
        shape: MatrixShape | str | None = None,
    ):
        super().__init__(
            operands=[value, smem, indices],
            properties={
                "num": IntegerAttr(num, i32),
                "shape": enum_attr(MatrixShapeAttr, MatrixShape, shape),
                "trans": UnitAttr() if trans else None,
            },
        )

    @property
    def registers_type(self) -> VectorType:
        assert isinstance(t := self.value.type, VectorType)
        return t
