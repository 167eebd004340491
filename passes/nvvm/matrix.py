"""Warp-collective SMEM matrix loads and stores: `nvvm.ldmatrix` and `nvvm.stmatrix`
(upstream NVVMOps.td's `NVVM_LdMatrixOp`, `NVVM_StMatrixOp`) and their attributes
(`#nvvm.mma_layout`, `#nvvm.ld_st_matrix_shape`, `#nvvm.ld_st_matrix_elt_type`), with
upstream's syntax and verifier messages. Each is one call of LLVM 22's NVPTX intrinsic
`llvm.nvvm.{ld,st}matrix.sync.aligned.m<M>n<N>.x<num>[.trans].<elt>.p3`."""

from __future__ import annotations

from xdsl.dialects.builtin import I32, IntAttr, IntegerAttr, i32
from xdsl.dialects.llvm import LLVMStructType
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    param_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import SHARED_PTR, AngleBracketEnum
from passes.nvvm.emit import arg, call, call_bound


class MMALayout(StrEnum):
    ROW = "row"
    COL = "col"


@irdl_attr_definition
class MMALayoutAttr(AngleBracketEnum, EnumAttribute[MMALayout]):
    """Row-major (`row`) or transposed (`col`, PTX `.trans`): `#nvvm.mma_layout<col>`."""

    name = "nvvm.mma_layout"


class LdStMatrixEltType(StrEnum):
    B16 = "b16"
    B8 = "b8"
    B8X16_B6X16_P32 = "b8x16.b6x16_p32"
    B8X16_B4X16_P64 = "b8x16.b4x16_p64"


@irdl_attr_definition
class LdStMatrixEltTypeAttr(AngleBracketEnum, EnumAttribute[LdStMatrixEltType]):
    """The element type of ldmatrix/stmatrix: `#nvvm.ld_st_matrix_elt_type<b16>`."""

    name = "nvvm.ld_st_matrix_elt_type"


@irdl_attr_definition
class LdStMatrixShapeAttr(ParametrizedAttribute):
    """The matrix shape of ldmatrix/stmatrix: `#nvvm.ld_st_matrix_shape<m = 8, n = 8>`."""

    name = "nvvm.ld_st_matrix_shape"

    m: IntAttr = param_def()
    n: IntAttr = param_def()

    def __init__(self, m: int, n: int):
        super().__init__(IntAttr(m), IntAttr(n))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr, IntAttr]:
        with parser.in_angle_brackets():
            parser.parse_keyword("m")
            parser.parse_punctuation("=")
            m = parser.parse_integer()
            parser.parse_punctuation(",")
            parser.parse_keyword("n")
            parser.parse_punctuation("=")
            n = parser.parse_integer()
        return IntAttr(m), IntAttr(n)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<m = {self.m.data}, n = {self.n.data}>")

    @property
    def mn(self) -> tuple[int, int]:
        return self.m.data, self.n.data


def _properties(
    layout: str, shape: tuple[int, int], elt: str, num: int | None = None
) -> dict[str, Attribute]:
    """The ops' properties, in the order MLIR prints them (by name)."""
    properties: dict[str, Attribute] = {
        "eltType": LdStMatrixEltTypeAttr(LdStMatrixEltType(elt)),
        "layout": MMALayoutAttr(MMALayout(layout)),
    }
    if num is not None:
        properties["num"] = IntegerAttr(num, i32)
    properties["shape"] = LdStMatrixShapeAttr(*shape)
    return properties


def _callee(verb: str, shape: tuple[int, int], num: int, layout: MMALayout, elt: str) -> str:
    trans = ".trans" if layout == MMALayout.COL else ""
    m, n = shape
    return f"llvm.nvvm.{verb}.sync.aligned.m{m}n{n}.x{num}{trans}.{elt}.p3"


def registers_type(count: int) -> Attribute:
    """What ldmatrix returns for `count` 32-bit registers: i32, or a struct of them."""
    return i32 if count == 1 else LLVMStructType.from_type_list([i32] * count)


@irdl_op_definition
class LdMatrixOp(IRDLOperation):
    """`ldmatrix.sync.aligned.<shape>.x<num>[.trans].shared.<elt>`: the warp loads `num`
    matrices from SMEM, each thread its fragment (one i32, or a struct of them).

    ```mlir
    %r = nvvm.ldmatrix %ptr {eltType = #nvvm.ld_st_matrix_elt_type<b16>,
      layout = #nvvm.mma_layout<row>, num = 4 : i32,
      shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
      : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
    ```
    """

    name = "nvvm.ldmatrix"

    ptr = operand_def(SHARED_PTR)
    num = prop_def(IntegerAttr[I32])
    layout = prop_def(MMALayoutAttr)
    shape = prop_def(LdStMatrixShapeAttr)
    eltType = prop_def(LdStMatrixEltTypeAttr)
    res = result_def()

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$ptr attr-dict `:` functional-type($ptr, $res)"

    def __init__(
        self,
        ptr: SSAValue | Operation,
        *,
        num: int,
        layout: str = "row",
        shape: tuple[int, int] = (8, 8),
        elt: str = "b16",
    ):
        count = num * (2 if shape == (16, 16) else 1)
        super().__init__(
            operands=[ptr],
            properties=_properties(layout, shape, elt, num),
            result_types=[registers_type(count)],
        )

    def verify_(self) -> None:
        num, shape = self.num.value.data, self.shape.mn
        layout, elt = self.layout.data, self.eltType.data
        if shape == (8, 8):
            if num not in (1, 2, 4):
                raise VerifyException("expected num attribute to be 1, 2 or 4 for 8x8 matrix")
            if elt != LdStMatrixEltType.B16:
                raise VerifyException("expected element type to be b16 for 8x8 matrix")
            count = num
        elif shape == (8, 16):
            if num not in (1, 2, 4):
                raise VerifyException("expected num attribute to be 1, 2 or 4 for 8x16 matrix")
            if layout != MMALayout.ROW:
                raise VerifyException("expected layout to be row for 8x16 matrix")
            if elt not in (LdStMatrixEltType.B8X16_B4X16_P64, LdStMatrixEltType.B8X16_B6X16_P32):
                raise VerifyException(
                    "expected element type to be b8x16.b4x16_p64 or b8x16.b6x16_p32 for 8x16 matrix"
                )
            count = num
        elif shape == (16, 16):
            if num not in (1, 2):
                raise VerifyException("expected num attribute to be 1 or 2 for 16x16 matrix")
            if layout != MMALayout.COL:
                raise VerifyException("expected layout to be col for 16x16 matrix")
            if elt == LdStMatrixEltType.B16:
                raise VerifyException(
                    "expected element type to be b8, b8x16.b4x16_p64 or b8x16.b6x16_p32 for "
                    "16x16 matrix"
                )
            count = 2 * num
        else:
            raise VerifyException("expected shape to be 8x8, 8x16 or 16x16")
        if self.res.type != registers_type(count):
            raise VerifyException(
                "expected destination type is i32"
                if count == 1
                else f"expected destination type is a structure of {count} elements of type i32"
            )

    def to_llvm_ir(self, e: IREmitter) -> None:
        callee = _callee(
            "ldmatrix", self.shape.mn, self.num.value.data, self.layout.data, self.eltType.data
        )
        call_bound(e, self.res, callee, [arg(e, self.ptr)])


@irdl_op_definition
class StMatrixOp(IRDLOperation):
    """`stmatrix.sync.aligned.<shape>.x<num>[.trans].shared.<elt>`: the warp stores
    `num` matrices to SMEM, each thread its fragment (one i32 per matrix).

    ```mlir
    nvvm.stmatrix %ptr, %r0, %r1 {eltType = #nvvm.ld_st_matrix_elt_type<b16>,
      layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
      : !llvm.ptr<3>, i32, i32
    ```
    """

    name = "nvvm.stmatrix"

    ptr = operand_def(SHARED_PTR)
    sources = var_operand_def(I32)
    layout = prop_def(MMALayoutAttr)
    shape = prop_def(LdStMatrixShapeAttr)
    eltType = prop_def(LdStMatrixEltTypeAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$ptr `,` $sources attr-dict `:` type(operands)"

    def __init__(
        self,
        ptr: SSAValue | Operation,
        sources: list[SSAValue],
        *,
        layout: str = "row",
        shape: tuple[int, int] = (8, 8),
        elt: str = "b16",
    ):
        super().__init__(operands=[ptr, sources], properties=_properties(layout, shape, elt))

    def verify_(self) -> None:
        num, shape = len(self.sources), self.shape.mn
        if num not in (1, 2, 4):
            raise VerifyException("expected num attribute to be 1, 2 or 4")
        if shape == (8, 8):
            if self.eltType.data != LdStMatrixEltType.B16:
                raise VerifyException("expected element type to be B16 for 8x8 matrix")
        elif shape == (16, 8):
            if self.eltType.data != LdStMatrixEltType.B8:
                raise VerifyException("expected element type to be B8 for 16x8 matrix")
            if self.layout.data != MMALayout.COL:
                raise VerifyException("expected layout to be col for 16x8 matrix")
        else:
            raise VerifyException("expected shape to be 8x8 or 16x8")

    def to_llvm_ir(self, e: IREmitter) -> None:
        callee = _callee(
            "stmatrix", self.shape.mn, len(self.sources), self.layout.data, self.eltType.data
        )
        call(e, callee, [arg(e, self.ptr), *(arg(e, s) for s in self.sources)])
