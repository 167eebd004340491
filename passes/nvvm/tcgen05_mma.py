"""tcgen05 MMA (sm_100a): `nvvm.tcgen05.mma` and `nvvm.tcgen05.commit` (upstream NVVMOps.td's
`NVVM_Tcgen05MMAOp` and `NVVM_Tcgen05CommitOp`) and their attributes
(`#nvvm.tcgen05_mma_kind`, `#nvvm.tcgen05_mma_collectorop`), in upstream's syntax.

`tcgen05.mma` is issued by one thread: D (in TMEM) = A * B (+ D), A from TMEM or through an
SMEM matrix descriptor, B through an SMEM matrix descriptor (`copy.matrix_descriptor ...
tcgen05`), the shape and types in the 32-bit instruction descriptor
(`copy.mma_instruction_descriptor`). It is asynchronous: `tcgen05.commit` makes an mbarrier
track the completion of the thread's prior tcgen05 async operations (their reads of SMEM
and writes of TMEM) and arrive on it once (`.mbarrier::arrive::one`), on the mbarriers of
the CTAs in `multicast_mask` with the mask.

Both are one call of an LLVM 22 intrinsic: `llvm.nvvm.tcgen05.mma.{shared,tensor}
{.scale_d}{.disable_output_lane.cg<N>}{.ashift}` with the kind, CTA group (unless the name
has it) and collector usage as immediates (kind f16 0, tf32 1, f8f6f4 2, i8 3; collector
discard 0, lastuse 1, fill 2, use 3), and `llvm.nvvm.tcgen05.commit{.mc}{.shared}.cg<N>`.

Deviation from upstream: LLVM 22's intrinsic has one collector immediate (A's), so the op
has upstream's `collectorOp` and not the later `collectorOpB`; the block-scaled and
weight-stationary forms (`tcgen05.mma.block_scale`, `.ws`) are not defined.

`nvvm.tcgen05.mma.sp` (upstream's `NVVM_Tcgen05MMASparseOp`) is the structured-sparse MMA:
A holds K/2 of each row's K elements, and the metadata in TMEM (`sparseMetadata`, after
`enableInputD`) say where each sits (PTX ISA 9.7.16.10.8; `.kind::f16` 2:4: two 2-bit
indices per 4 elements of K); the sparsity selector of the instruction descriptor picks the
metadata's column. Its intrinsic is `llvm.nvvm.tcgen05.mma.sp.{shared,tensor}...`, the
metadata's TMEM pointer after enable-input-d.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    I1,
    I16,
    I32,
    I64,
    AnyOf,
    DenseArrayBase,
    IntegerAttr,
    UnitAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import (
    AngleBracketEnum,
    CTAGroupKind,
    CTAGroupKindAttr,
    addr_space,
    ptr,
    ptr_in,
)
from passes.nvvm.emit import arg, call


class Tcgen05MMAKind(StrEnum):
    """The operand types of an MMA (upstream's Tcgen05MMAKind, in its order)."""

    F16 = "f16"
    TF32 = "tf32"
    F8F6F4 = "f8f6f4"
    I8 = "i8"
    MXF8F6F4 = "mxf8f6f4"
    MXF4 = "mxf4"
    MXF4NVF4 = "mxf4nvf4"


MMA_KINDS = (Tcgen05MMAKind.F16, Tcgen05MMAKind.TF32, Tcgen05MMAKind.F8F6F4, Tcgen05MMAKind.I8)
"""The kinds of the dense, not block-scaled MMA (the block-scaled ones are
`tcgen05.mma.block_scale`'s); a kind's index is its immediate in the intrinsic call."""


@irdl_attr_definition
class Tcgen05MMAKindAttr(AngleBracketEnum, EnumAttribute[Tcgen05MMAKind]):
    """`#nvvm.tcgen05_mma_kind<f16>`."""

    name = "nvvm.tcgen05_mma_kind"


class Tcgen05MMACollectorOp(StrEnum):
    """What the MMA does with A's collector buffer (PTX `.collector::a::*`)."""

    DISCARD = "discard"
    LASTUSE = "lastuse"
    FILL = "fill"
    USE = "use"


COLLECTOR_OPS = tuple(Tcgen05MMACollectorOp)
"""A collector usage's index is its immediate in the intrinsic call."""


@irdl_attr_definition
class Tcgen05MMACollectorOpAttr(AngleBracketEnum, EnumAttribute[Tcgen05MMACollectorOp]):
    """`#nvvm.tcgen05_mma_collectorop<fill>`."""

    name = "nvvm.tcgen05_mma_collectorop"


SCALE_D_MAX = 15
"""scale-input-d is an immediate in [0, 15]: D is scaled by 2 ** -scale (PTX ISA)."""

LANE_MASK_WORDS = {CTAGroupKind.CTA_1: 4, CTAGroupKind.CTA_2: 8}
"""disable-output-lane: one bit per TMEM lane of D, 128 lanes per CTA of the group."""

SCALED_KINDS = (Tcgen05MMAKind.F16, Tcgen05MMAKind.TF32)
"""The kinds that take scale-input-d (PTX ISA: `.kind::f16` and `.kind::tf32`)."""


MMA_PROPERTIES = ("kind", "ctaGroup", "collectorOp", "aShift")
"""The properties of `nvvm.tcgen05.mma`, which its custom form writes in the attr-dict."""


def constant_int(value: SSAValue) -> int | None:
    """The integer an `arith.constant` or `llvm.mlir.constant` defines, if it is one."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp | llvm.ConstantOp):
        attr = owner.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


class MMAOpBase(IRDLOperation):
    """What `nvvm.tcgen05.mma` and `nvvm.tcgen05.mma.sp` share: their properties, their
    custom form (the `MANDATORY` operands, then `scale =` and `mask =`), their verifier and
    their intrinsic call (`Tcgen05MMAOp`, `Tcgen05MMASparseOp`)."""

    MANDATORY: ClassVar[int] = 5
    """The operands before the optional scale and mask."""
    SPARSE: ClassVar[bool] = False

    kind = prop_def(Tcgen05MMAKindAttr)
    ctaGroup = prop_def(CTAGroupKindAttr)
    collectorOp = opt_prop_def(
        Tcgen05MMACollectorOpAttr,
        default_value=Tcgen05MMACollectorOpAttr(Tcgen05MMACollectorOp.DISCARD),
    )
    aShift = opt_prop_def(UnitAttr)

    def __init__(
        self,
        d: SSAValue | Operation,
        a: SSAValue | Operation,
        b: SSAValue | Operation,
        idesc: SSAValue | Operation,
        enable_input_d: SSAValue | Operation,
        *metadata: SSAValue | Operation,
        kind: str = "f16",
        group: str = "cta_1",
        collector: str | None = None,
        a_shift: bool = False,
        scale_input_d: SSAValue | Operation | None = None,
        disable_output_lane: SSAValue | Operation | None = None,
    ):
        """The operands in upstream's order: D, A, B, the instruction descriptor,
        enable-input-d, the sparse MMA's metadata (`Tcgen05MMASparseOp`: one), then the
        optional scale and mask."""
        if len(metadata) != self.MANDATORY - 5:
            raise TypeError(f"{self.name} takes {self.MANDATORY - 5} metadata pointer(s)")
        properties: dict[str, Attribute] = {
            "kind": Tcgen05MMAKindAttr(Tcgen05MMAKind(kind)),
            "ctaGroup": CTAGroupKindAttr(CTAGroupKind(group)),
        }
        if collector is not None:
            properties["collectorOp"] = Tcgen05MMACollectorOpAttr(Tcgen05MMACollectorOp(collector))
        if a_shift:
            properties["aShift"] = UnitAttr()
        super().__init__(
            operands=[
                d, a, b, idesc, enable_input_d, *metadata,
                [] if scale_input_d is None else [scale_input_d],
                [] if disable_output_lane is None else [disable_output_lane],
            ],
            properties=properties,
        )  # fmt: skip

    @classmethod
    def parse(cls, parser: Parser) -> MMAOpBase:
        """Upstream's `$matrixD, $matrixA, $matrixB, $idesc, $enableInputD
        (, $sparseMetadata)? (scale = $scaleInputD)? (mask = $disableOutputLane)? attr-dict :
        (type(operands))`: xDSL's declarative format cannot take `type(operands)` with two
        optional operands."""
        unresolved = [parser.parse_unresolved_operand()]
        for _ in range(cls.MANDATORY - 1):
            parser.parse_punctuation(",")
            unresolved.append(parser.parse_unresolved_operand())
        optional: list[list[UnresolvedOperand]] = [[], []]
        for i, key in enumerate(("scale", "mask")):
            if parser.parse_optional_keyword(key):
                parser.parse_punctuation("=")
                optional[i].append(parser.parse_unresolved_operand())
        extra = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        flat = [*unresolved, *optional[0], *optional[1]]
        operands = parser.resolve_operands(flat, types, parser.pos)
        sizes = [1] * cls.MANDATORY + [len(optional[0]), len(optional[1])]
        properties = {k: v for k, v in extra.items() if k in MMA_PROPERTIES}
        op = cls.create(
            operands=operands,
            properties=properties | {"operandSegmentSizes": DenseArrayBase.from_list(i32, sizes)},
        )
        op.attributes.update({k: v for k, v in extra.items() if k not in MMA_PROPERTIES})
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands[: self.MANDATORY], printer.print_ssa_value)
        if self.scaleInputD is not None:
            printer.print_string(" scale = ")
            printer.print_ssa_value(self.scaleInputD)
        if self.disableOutputLane is not None:
            printer.print_string(" mask = ")
            printer.print_ssa_value(self.disableOutputLane)
        printer.print_op_attributes(
            {
                k: v
                for k, v in (self.properties | self.attributes).items()
                if k != "operandSegmentSizes"
            }
        )
        printer.print_string(" : (")
        printer.print_list([o.type for o in self.operands], printer.print_attribute)
        printer.print_string(")")

    @property
    def a_in_tmem(self) -> bool:
        return isinstance(self.matrixA.type, llvm.LLVMPointerType)

    @property
    def collector(self) -> Tcgen05MMACollectorOp:
        return Tcgen05MMACollectorOp.DISCARD if self.collectorOp is None else self.collectorOp.data

    def verify_(self) -> None:
        kind, group = self.kind.data, self.ctaGroup.data
        if kind not in MMA_KINDS:
            raise VerifyException(
                "attribute 'kind' failed to satisfy constraint: tcgen05 MMA Supported Types "
                "whose value is one of {f16, tf32, f8f6f4, i8}"
            )
        if self.disableOutputLane is not None:
            assert isinstance(t := self.disableOutputLane.type, VectorType)
            words = t.get_shape()[0]
            if words != LANE_MASK_WORDS[group]:
                raise VerifyException(
                    f"Disable Output Lane of length {words} is incompatible with CtaGroupAttr"
                )
        if self.aShift is not None:
            if not self.a_in_tmem:
                raise VerifyException(
                    "A-shift can be applied only when matrix A is in tensor memory"
                )
            if self.collector in (Tcgen05MMACollectorOp.FILL, Tcgen05MMACollectorOp.USE):
                raise VerifyException(
                    "Cannot use collector buffer operation fill or use with ashift"
                )
        if self.scaleInputD is not None:
            self._verify_scale(kind, self.scaleInputD)

    def _verify_scale(self, kind: Tcgen05MMAKind, scale: SSAValue) -> None:
        if kind not in SCALED_KINDS:
            raise VerifyException(
                f"scaleInputD is supported only for kind f16 and tf32, got kind {kind}"
            )
        value = constant_int(scale)
        # An immediate of the PTX instruction (an immarg of the intrinsic).
        if value is None or not 0 <= value <= SCALE_D_MAX:
            got = "a value that is not a constant" if value is None else value
            raise VerifyException(
                f"scaleInputD must be a constant in [0, {SCALE_D_MAX}], got {got}"
            )

    def intrinsic(self) -> str:
        """`llvm.nvvm.tcgen05.mma{.sp}.{shared,tensor}{.scale_d}{.disable_output_lane.cg<N>}
        {.ashift}`."""
        name = "llvm.nvvm.tcgen05.mma." + ("sp." if self.SPARSE else "")
        name += "tensor" if self.a_in_tmem else "shared"
        if self.scaleInputD is not None:
            name += ".scale_d"
        if self.disableOutputLane is not None:
            name += f".disable_output_lane.cg{self._cta_count()}"
        if self.aShift is not None:
            name += ".ashift"
        return name

    def _cta_count(self) -> int:
        return 2 if self.ctaGroup.data == CTAGroupKind.CTA_2 else 1

    def to_llvm_ir(self, e: IREmitter) -> None:
        # d, a, b, idesc, enable-input-d (, the sparse metadata) (, scale) (, mask), then the
        # immediates: kind, the CTA group (unless the name has it), the collector usage
        args = [arg(e, v) for v in self.operands[: self.MANDATORY]]
        if self.scaleInputD is not None:
            args.append(("i64", str(constant_int(self.scaleInputD))))
        if self.disableOutputLane is not None:
            args.append(arg(e, self.disableOutputLane))
        args.append(("i32", str(MMA_KINDS.index(self.kind.data))))
        if self.disableOutputLane is None:
            args.append(("i32", str(self._cta_count())))
        args.append(("i32", str(COLLECTOR_OPS.index(self.collector))))
        call(e, self.intrinsic(), args)


@irdl_op_definition
class Tcgen05MMAOp(MMAOpBase):
    """`tcgen05.mma.cta_group::N.kind::K{.collector::a::C}{.ashift} [d], a, b, idesc,
    {disable_output_lane,} enable_input_d {, scale_input_d}`: D = A * B + D (D = A * B when
    `enableInputD` is false; D * 2 ** -scale + A * B with `scale`), issued by one thread,
    completed through `nvvm.tcgen05.commit`.

    ```mlir
    nvvm.tcgen05.mma %d, %adesc, %bdesc, %idesc, %acc
      {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>}
      : (!llvm.ptr<6>, i64, i64, i32, i1)
    ```
    """

    name = "nvvm.tcgen05.mma"

    matrixD = operand_def(ptr_in(6))
    matrixA = operand_def(AnyOf.get(ptr(6), i64))
    matrixB = operand_def(I64)
    idesc = operand_def(I32)
    enableInputD = operand_def(I1)
    scaleInputD = opt_operand_def(I64)
    disableOutputLane = opt_operand_def(AnyOf.get(VectorType(i32, [4]), VectorType(i32, [8])))

    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class Tcgen05MMASparseOp(MMAOpBase):
    """`tcgen05.mma.sp.cta_group::N.kind::K{.collector::a::C}{.ashift} [d], a, b,
    [sp_meta], idesc, {disable_output_lane,} enable_input_d {, scale_input_d}`: the MMA with
    A structured-sparse (PTX ISA 9.7.16.10.8): A holds K/2 of each row's K elements, the
    metadata at `sparseMetadata` (TMEM) say where; the instruction descriptor has the sparse
    bit and the selector of the metadata's column (`copy.mma_instruction_descriptor ...
    sparse selector s`).

    ```mlir
    nvvm.tcgen05.mma.sp %d, %adesc, %bdesc, %idesc, %acc, %meta
      {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>}
      : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
    ```
    """

    name = "nvvm.tcgen05.mma.sp"

    MANDATORY: ClassVar[int] = 6
    SPARSE: ClassVar[bool] = True

    matrixD = operand_def(ptr_in(6))
    matrixA = operand_def(AnyOf.get(ptr(6), i64))
    matrixB = operand_def(I64)
    idesc = operand_def(I32)
    enableInputD = operand_def(I1)
    sparseMetadata = operand_def(ptr_in(6))
    scaleInputD = opt_operand_def(I64)
    disableOutputLane = opt_operand_def(AnyOf.get(VectorType(i32, [4]), VectorType(i32, [8])))

    irdl_options = (AttrSizedOperandSegments(as_property=True),)


TCGEN05_MMAS = (Tcgen05MMAOp, Tcgen05MMASparseOp)
"""The tcgen05 MMA ops: dense and structured-sparse."""


_CTA_1 = CTAGroupKindAttr(CTAGroupKind.CTA_1)


@irdl_op_definition
class Tcgen05CommitOp(IRDLOperation):
    """`tcgen05.commit.cta_group::N.mbarrier::arrive::one.shared::cluster{.multicast::cluster}
    .b64 [mbar] {, ctaMask}`: the mbarrier at `addr` (shared or generic) tracks the
    completion of the thread's prior tcgen05 async operations and receives one arrival when
    they complete; with `multicast_mask`, the mbarrier at the same offset in each CTA of the
    mask does.

    ```mlir
    nvvm.tcgen05.commit %bar : !llvm.ptr<3>
    nvvm.tcgen05.commit %bar, multicast_mask = %mask {group = #nvvm.cta_group<cta_2>}
      : !llvm.ptr<3>, i16
    ```
    """

    name = "nvvm.tcgen05.commit"

    group = opt_prop_def(CTAGroupKindAttr, default_value=_CTA_1)
    addr = operand_def(ptr_in(0, 3))
    multicastMask = opt_operand_def(I16)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$addr (`,` `multicast_mask` `=` $multicastMask^)? attr-dict `:` type(operands)"
    )

    def __init__(
        self,
        addr: SSAValue | Operation,
        multicast_mask: SSAValue | Operation | None = None,
        group: str | None = None,
    ):
        properties = {} if group is None else {"group": CTAGroupKindAttr(CTAGroupKind(group))}
        super().__init__(operands=[addr, multicast_mask], properties=properties)

    def to_llvm_ir(self, e: IREmitter) -> None:
        # llvm.nvvm.tcgen05.commit{.mc}{.shared}.cg<N>
        cg = "cg2" if (self.group or _CTA_1).data == CTAGroupKind.CTA_2 else "cg1"
        mc = ".mc" if self.multicastMask is not None else ""
        shared = ".shared" if addr_space(self.addr.type) == 3 else ""
        args = [arg(e, self.addr)]
        if self.multicastMask is not None:
            args.append(arg(e, self.multicastMask))
        call(e, f"llvm.nvvm.tcgen05.commit{mc}{shared}.{cg}", args)
