"""Warpgroup MMA (sm_90a): `nvvm.wgmma.fence.aligned`, `nvvm.wgmma.commit.group.sync.aligned`,
`nvvm.wgmma.wait.group.sync.aligned` and `nvvm.wgmma.mma_async` (upstream NVVMOps.td's
`NVVM_Wgmma*Op`) and their attributes (`#nvvm.shape`, `#nvvm.wgmma_type`,
`#nvvm.wgmma_scale_in`, `#nvvm.wgmma_scale_out`, `#nvvm.mma_int_overflow`), in upstream's
syntax. The fence, commit and wait are one LLVM 22 intrinsic call each
(`llvm.nvvm.wgmma.{fence,commit_group,wait_group}.sync.aligned`); `mma_async` is inline PTX
as upstream's `getPtx` writes it: the accumulator's registers tied in and out, the
descriptors as `l` registers, scale-d a predicate set from the constant, and, for
f16/bf16, the transposes from the layouts (A: `col` transposes; B: `row` does).

Deviation from upstream: the accumulator is a struct of f32 or i32 (an f16 accumulator,
upstream's struct of `vector<2xf16>`, is not taken).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, Float32Type, IntAttr, IntegerAttr, IntegerType, i64
from xdsl.dialects.llvm import LLVMStructType
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import AngleBracketEnum
from passes.nvvm.emit import IntrinsicOp, arg, call
from passes.nvvm.matrix import MMALayout, MMALayoutAttr


class WGMMAType(StrEnum):
    F16 = "f16"
    TF32 = "tf32"
    U8 = "u8"
    S8 = "s8"
    B1 = "b1"
    BF16 = "bf16"
    E4M3 = "e4m3"
    E5M2 = "e5m2"
    F32 = "f32"
    S32 = "s32"


@irdl_attr_definition
class WGMMATypeAttr(AngleBracketEnum, EnumAttribute[WGMMAType]):
    """An operand type of wgmma: `#nvvm.wgmma_type<f16>`."""

    name = "nvvm.wgmma_type"


class WGMMAScaleIn(StrEnum):
    ONE = "one"
    NEG = "neg"


@irdl_attr_definition
class WGMMAScaleInAttr(AngleBracketEnum, EnumAttribute[WGMMAScaleIn]):
    """imm-scale-a/b: `#nvvm.wgmma_scale_in<neg>` negates the operand."""

    name = "nvvm.wgmma_scale_in"


class WGMMAScaleOut(StrEnum):
    ZERO = "zero"
    ONE = "one"


@irdl_attr_definition
class WGMMAScaleOutAttr(AngleBracketEnum, EnumAttribute[WGMMAScaleOut]):
    """scale-d: `#nvvm.wgmma_scale_out<zero>` computes D = A * B, ignoring D's input."""

    name = "nvvm.wgmma_scale_out"


class MMAIntOverflow(StrEnum):
    WRAPPED = "wrapped"
    SATFINITE = "satfinite"


@irdl_attr_definition
class MMAIntOverflowAttr(AngleBracketEnum, EnumAttribute[MMAIntOverflow]):
    """An integer MMA's overflow: `#nvvm.mma_int_overflow<satfinite>`."""

    name = "nvvm.mma_int_overflow"


@irdl_attr_definition
class MMAShapeAttr(ParametrizedAttribute):
    """An MMA shape: `#nvvm.shape<m = 64, n = 128, k = 16>`."""

    name = "nvvm.shape"

    m: IntAttr = param_def()
    n: IntAttr = param_def()
    k: IntAttr = param_def()

    def __init__(self, m: int, n: int, k: int):
        super().__init__(IntAttr(m), IntAttr(n), IntAttr(k))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr, IntAttr, IntAttr]:
        with parser.in_angle_brackets():
            values = []
            for i, key in enumerate("mnk"):
                if i:
                    parser.parse_punctuation(",")
                parser.parse_keyword(key)
                parser.parse_punctuation("=")
                values.append(IntAttr(parser.parse_integer()))
        return values[0], values[1], values[2]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<m = {self.m.data}, n = {self.n.data}, k = {self.k.data}>")

    @property
    def mnk(self) -> tuple[int, int, int]:
        return self.m.data, self.n.data, self.k.data


@irdl_op_definition
class WgmmaFenceAlignedOp(IntrinsicOp):
    """`wgmma.fence.sync.aligned`: orders the warpgroup's register and SMEM accesses before
    the next `wgmma.mma_async`.

    ```mlir
    nvvm.wgmma.fence.aligned
    ```
    """

    name = "nvvm.wgmma.fence.aligned"

    INTRINSIC: ClassVar[str] = "llvm.nvvm.wgmma.fence.sync.aligned"


@irdl_op_definition
class WgmmaGroupSyncAlignedOp(IntrinsicOp):
    """`wgmma.commit_group.sync.aligned`: the uncommitted `wgmma.mma_async`s become a group.

    ```mlir
    nvvm.wgmma.commit.group.sync.aligned
    ```
    """

    name = "nvvm.wgmma.commit.group.sync.aligned"

    INTRINSIC: ClassVar[str] = "llvm.nvvm.wgmma.commit_group.sync.aligned"


@irdl_op_definition
class WgmmaWaitGroupSyncOp(IRDLOperation):
    """`wgmma.wait_group.sync.aligned N`: waits until at most `N` wgmma groups are pending
    (their reads of SMEM done, their accumulators written).

    ```mlir
    nvvm.wgmma.wait.group.sync.aligned 0
    ```
    """

    name = "nvvm.wgmma.wait.group.sync.aligned"

    group = prop_def(IntegerAttr[I64])

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "attr-dict $group"

    def __init__(self, group: int = 0):
        super().__init__(properties={"group": IntegerAttr(group, i64)})

    def to_llvm_ir(self, e: IREmitter) -> None:
        call(e, "llvm.nvvm.wgmma.wait_group.sync.aligned", [("i64", str(self.group.value.data))])


K_OF = {
    WGMMAType.F16: 16, WGMMAType.BF16: 16, WGMMAType.TF32: 8, WGMMAType.E4M3: 32,
    WGMMAType.E5M2: 32, WGMMAType.S8: 32, WGMMAType.U8: 32, WGMMAType.B1: 256,
}  # fmt: skip
"""The K of each multiplicand type (PTX ISA: .m64nNk16, k8, k32, k256)."""

FLOAT_D = {WGMMAType.F32}
INT_TYPES = {WGMMAType.S8, WGMMAType.U8, WGMMAType.B1}
TRANSPOSABLE = {WGMMAType.F16, WGMMAType.BF16}


def accumulator_type(n: int, d: WGMMAType) -> LLVMStructType:
    """The struct a thread holds of an m64nN accumulator: N / 2 f32 (or s32)."""
    element = Float32Type() if d == WGMMAType.F32 else IntegerType(32)
    return LLVMStructType.from_type_list([element] * (n // 2))


@irdl_op_definition
class WgmmaMmaAsyncOp(IRDLOperation):
    """`wgmma.mma_async.sync.aligned.m64nNkK.<d>.<a>.<b>`: the warpgroup's D = A * B (+ D),
    A and B read from SMEM through descriptors, D in each thread's registers (a struct).

    ```mlir
    %r = nvvm.wgmma.mma_async %da, %db, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>],
      A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
      : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
    ```
    """

    name = "nvvm.wgmma.mma_async"

    descriptorA = operand_def(I64)
    descriptorB = operand_def(I64)
    inouts = operand_def(LLVMStructType)
    shape = prop_def(MMAShapeAttr)
    typeA = prop_def(WGMMATypeAttr)
    typeB = prop_def(WGMMATypeAttr)
    typeD = prop_def(WGMMATypeAttr)
    scaleD = prop_def(WGMMAScaleOutAttr)
    scaleA = prop_def(WGMMAScaleInAttr)
    scaleB = prop_def(WGMMAScaleInAttr)
    layoutA = prop_def(MMALayoutAttr)
    layoutB = prop_def(MMALayoutAttr)
    satfinite = opt_prop_def(MMAIntOverflowAttr)
    res = result_def(LLVMStructType)

    def __init__(
        self,
        descriptor_a: SSAValue | Operation,
        descriptor_b: SSAValue | Operation,
        inouts: SSAValue | Operation,
        *,
        shape: tuple[int, int, int],
        types: tuple[str, str, str] = ("f16", "f16", "f32"),
        scale_d: str = "one",
        scales: tuple[str, str] = ("one", "one"),
        layouts: tuple[str, str] = ("row", "col"),
        satfinite: str | None = None,
    ):
        a, b, d = types
        properties: dict[str, Attribute] = {
            "shape": MMAShapeAttr(*shape),
            "typeA": WGMMATypeAttr(WGMMAType(a)),
            "typeB": WGMMATypeAttr(WGMMAType(b)),
            "typeD": WGMMATypeAttr(WGMMAType(d)),
            "scaleD": WGMMAScaleOutAttr(WGMMAScaleOut(scale_d)),
            "scaleA": WGMMAScaleInAttr(WGMMAScaleIn(scales[0])),
            "scaleB": WGMMAScaleInAttr(WGMMAScaleIn(scales[1])),
            "layoutA": MMALayoutAttr(MMALayout(layouts[0])),
            "layoutB": MMALayoutAttr(MMALayout(layouts[1])),
        }
        if satfinite is not None:
            properties["satfinite"] = MMAIntOverflowAttr(MMAIntOverflow(satfinite))
        inouts_type = SSAValue.get(inouts).type
        super().__init__(
            operands=[descriptor_a, descriptor_b, inouts],
            properties=properties,
            result_types=[inouts_type],
        )

    @classmethod
    def parse(cls, parser: Parser) -> WgmmaMmaAsyncOp:
        unresolved = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            unresolved.append(parser.parse_unresolved_operand())
        parser.parse_punctuation(",")
        shape = MMAShapeAttr.new(MMAShapeAttr.parse_parameters(parser))
        properties: dict[str, Attribute] = {"shape": shape}

        def enum(attr: type, key: str) -> None:
            properties[key] = attr(attr.parse_parameter(parser))

        parser.parse_punctuation(",")
        parser.parse_characters("D")
        with parser.in_square_brackets():
            enum(WGMMATypeAttr, "typeD")
            parser.parse_punctuation(",")
            enum(WGMMAScaleOutAttr, "scaleD")
            if parser.parse_optional_punctuation(","):
                enum(MMAIntOverflowAttr, "satfinite")
        for operand in "AB":
            parser.parse_punctuation(",")
            parser.parse_characters(operand)
            with parser.in_square_brackets():
                enum(WGMMATypeAttr, f"type{operand}")
                parser.parse_punctuation(",")
                enum(WGMMAScaleInAttr, f"scale{operand}")
                parser.parse_punctuation(",")
                enum(MMALayoutAttr, f"layout{operand}")
        extra = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        inouts_type = parser.parse_type()
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        operands = parser.resolve_operands(unresolved, [i64, i64, inouts_type], parser.pos)
        op = cls.create(operands=operands, properties=properties, result_types=[result_type])
        op.attributes.update(extra)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(
            [self.descriptorA, self.descriptorB, self.inouts], printer.print_ssa_value
        )
        printer.print_string(", ")
        self.shape.print_parameters(printer)
        satfinite = "" if self.satfinite is None else f", <{self.satfinite.data.value}>"
        printer.print_string(
            f", D[<{self.typeD.data.value}>, <{self.scaleD.data.value}>{satfinite}]"
            f", A[<{self.typeA.data.value}>, <{self.scaleA.data.value}>, "
            f"<{self.layoutA.data.value}>]"
            f", B[<{self.typeB.data.value}>, <{self.scaleB.data.value}>, "
            f"<{self.layoutB.data.value}>]"
        )
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" : {self.inouts.type} -> {self.res.type}")

    def verify_(self) -> None:
        m, n, k = self.shape.mnk
        a, b, d = self.typeA.data, self.typeB.data, self.typeD.data
        if m != 64:
            raise VerifyException(f"expected m = 64 for wgmma, got {m}")
        if a not in K_OF or b not in K_OF:
            raise VerifyException(f"unsupported input types {a} and {b}")
        if K_OF[a] != k or K_OF[b] != k:
            raise VerifyException(f"shape 'k' must be {K_OF[a]} for input type {a}")
        step = 16 if a in INT_TYPES and n > 32 else 8
        if not 8 <= n <= 256 or n % step:
            raise VerifyException(f"shape 'n' = {n} is not valid for input type {a}")
        if d == WGMMAType.S32:
            if a not in INT_TYPES or b not in INT_TYPES:
                raise VerifyException(f"input types {a} and {b} need an f32 or f16 accumulator")
        elif d in FLOAT_D:
            if a in INT_TYPES or b in INT_TYPES:
                raise VerifyException(f"input types {a} and {b} need an s32 accumulator")
        else:
            raise VerifyException(
                f"accumulator type {d}: this dialect takes f32 or s32 accumulators"
            )
        if (a != b) and not {a, b} <= {WGMMAType.E4M3, WGMMAType.E5M2} | INT_TYPES:
            raise VerifyException(f"input types {a} and {b} must be the same")
        if a not in TRANSPOSABLE and (
            self.layoutA.data != MMALayout.ROW or self.layoutB.data != MMALayout.COL
        ):
            raise VerifyException(
                f"given layouts layout_a = {self.layoutA.data} and layout_b = "
                f"{self.layoutB.data} for input types {a} and {b} requires transpose. However, "
                "this is only supported for: f16 and bf16"
            )
        if self.satfinite is not None and d != WGMMAType.S32:
            raise VerifyException("satfinite is for an s32 accumulator")
        want = accumulator_type(n, d)
        if self.inouts.type != want or self.res.type != want:
            raise VerifyException(
                f"expected the accumulator (in and out) to be {want} for m64n{n} {d}, got "
                f"{self.inouts.type} -> {self.res.type}"
            )

    def ptx(self) -> str:
        """The inline PTX: $0.. the accumulator's registers, then descriptors A and B."""
        _, n, k = self.shape.mnk
        a, b, d = self.typeA.data, self.typeB.data, self.typeD.data
        regs = n // 2
        satfinite = ".satfinite" if self.satfinite == MMAIntOverflowAttr(
            MMAIntOverflow.SATFINITE) else ""  # fmt: skip
        scale_d = 1 if self.scaleD.data == WGMMAScaleOut.ONE else 0
        tail = ""
        if d != WGMMAType.S32:
            tail += "".join(
                f", {-1 if s.data == WGMMAScaleIn.NEG else 1}" for s in (self.scaleA, self.scaleB)
            )
        if a in TRANSPOSABLE:
            trans_a = 1 if self.layoutA.data == MMALayout.COL else 0
            trans_b = 1 if self.layoutB.data == MMALayout.ROW else 0
            tail += f", {trans_a}, {trans_b}"
        accumulators = ", ".join(f"${i}" for i in range(regs))
        return (
            "{\n.reg .pred p;\n"
            f"setp.ne.b32 p, {scale_d}, 0;\n"
            f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{d}.{a}.{b}{satfinite} "
            f"{{{accumulators}}}, ${regs * 2}, ${regs * 2 + 1}, p{tail};\n}}\n"
        )

    def to_llvm_ir(self, e: IREmitter) -> None:
        struct = e.type(self.inouts.type)
        assert isinstance(t := self.inouts.type, LLVMStructType)
        elements = [e.type(x) for x in t.types]
        regs = len(elements)
        inputs: list[tuple[str, str]] = []
        source = e.value(self.inouts)
        for i, element in enumerate(elements):
            name = e.fresh()
            e.emit(f"{name} = extractvalue {struct} {source}, {i}")
            inputs.append((element, name))
        inputs += [arg(e, self.descriptorA), arg(e, self.descriptorB)]
        out = "f" if isinstance(t.types.data[0], Float32Type) else "r"
        constraints = ",".join(
            [*(f"={out}" for _ in range(regs)), *(str(i) for i in range(regs)), "l", "l"]
        )
        text = self.ptx().replace("\\", "\\5C").replace('"', "\\22").replace("\n", "\\0A")
        args = ", ".join(f"{ty} {v}" for ty, v in inputs)
        name = e.fresh()
        e.emit(f'{name} = call {struct} asm sideeffect "{text}", "{constraints}"({args})')
        e.bind(self.res, name)
