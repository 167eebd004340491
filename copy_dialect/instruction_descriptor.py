"""`copy.mma_instruction_descriptor`: the 32-bit instruction descriptor of `tcgen05.mma`
(sm_100a), built from the MMA's kind, operand types, shape and majors, so that a kernel
does not assemble the bit fields by hand (the companion of `copy.matrix_descriptor ...
tcgen05`, whose SMEM descriptors the same MMA reads).

The layout (PTX ISA, "Instruction descriptor" of the tcgen05 MMA instructions, for
`.kind::f16`, `.kind::tf32`, `.kind::f8f6f4` and `.kind::i8`; CUTLASS's
`UMMA::InstrDescriptor`, cute/arch/mma_sm100_desc.hpp):

| bits | field |
|---|---|
| 0-1 | sparsity selector (sparse only: which metadata column the MMA reads) |
| 2 | sparse (`tcgen05.mma.sp`) |
| 3 | saturate (kind i8) |
| 4-5 | D's type: f16 0, f32 1, s32 2 |
| 7-9, 10-12 | A's, B's type (the kind's format, `OPERAND_FORMATS`) |
| 13, 14 | negate A, B |
| 15, 16 | A, B major: K 0, MN 1 |
| 17-22 | N >> 3 |
| 24-28 | M >> 4 |
| 30-31 | maximum shift (`.ws` only: 0) |

The 3-bit type formats: f16 0, bf16 1, tf32 2 (kinds f16, tf32); e4m3 0, e5m2 1, e2m3 3,
e3m2 4, e2m1 5 (kind f8f6f4); unsigned 0, signed 1 (kind i8).

Every field is a constant of the op's properties: the op lowers to one i32 constant.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import I32, IntegerAttr, IntegerType, Signedness, UnitAttr, i32
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute, TypeAttribute
from xdsl.irdl import (
    BaseAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.str_enum import StrEnum

from copy_dialect.descriptors import MatrixMajor, MatrixMajorAttr
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import enclosing_target, feature_error, retarget_note
from facts.target import TCGEN05, Feature


class MmaKind(StrEnum):
    """The operand types of a tcgen05 MMA (PTX `.kind::*`, without the block-scaled kinds)."""

    F16 = "f16"
    TF32 = "tf32"
    F8F6F4 = "f8f6f4"
    I8 = "i8"


@irdl_attr_definition
class MmaKindAttr(EnumAttribute[MmaKind], SpacedOpaqueSyntaxAttribute):
    name = "copy.mma_kind"


MMA_I8 = Feature(
    ".kind::i8 MMA", lambda t: t.has_tcgen05 and t.sm in (100, 110) and t.suffix == "a"
)
"""`tcgen05.mma.kind::i8`: sm_100a and sm_110a of the tcgen05 targets (ptxas 13.0: "Feature
'.kind::i8' not supported on .target 'sm_100f'", and likewise for sm_103a and sm_110f)."""

OPERAND_FORMATS: dict[MmaKind, dict[str, int]] = {
    MmaKind.F16: {"f16": 0, "bf16": 1},
    MmaKind.TF32: {"tf32": 2, "f32": 2},
    MmaKind.F8F6F4: {"f8E4M3FN": 0, "f8E5M2": 1, "f6E2M3FN": 3, "f6E3M2FN": 4, "f4E2M1FN": 5},
    MmaKind.I8: {"ui8": 0, "si8": 1, "i8": 1},
}
"""A and B's types of each kind and their 3-bit format (f32 is read as tf32, i8 as signed)."""

D_FORMATS = {"f16": 0, "f32": 1, "i32": 2, "si32": 2}
"""D's 2-bit format."""

D_TYPES: dict[MmaKind, tuple[str, ...]] = {
    MmaKind.F16: ("f32", "f16"),
    MmaKind.TF32: ("f32",),
    MmaKind.F8F6F4: ("f32", "f16"),
    MmaKind.I8: ("i32", "si32"),
}
"""D's types of each kind (PTX ISA: kind::f16 with bf16 operands accumulates in f32 only)."""

NOT_TRANSPOSABLE = ("f6E2M3FN", "f6E3M2FN", "f4E2M1FN")
"""The types that are K-major only (CUTLASS: "Major value of 1 is only valid for E4M3,
E5M2, INT8 (signed and unsigned), F16, BF16 and TF32 source formats")."""

M_OF_GROUP = {1: (64, 128), 2: (128, 256)}
"""The M of an MMA of one CTA or of a CTA pair (CUTLASS's SM100_MMA_*_SS and _2x1SM_SS)."""


def n_step(kind: MmaKind, m: int, group: int) -> tuple[int, int]:
    """(smallest N, step of N) of a shape (CUTLASS's SM100 MMA atoms): kinds f16, tf32 and
    f8f6f4 take N from 8 in steps of 8 at M = 64 and from 16 in steps of 16 otherwise;
    kind i8 takes N = 8 or 16.. in steps of 16 for one CTA, 32.. in steps of 32 for a pair."""
    if kind == MmaKind.I8:
        return (32, 32) if group == 2 else (16, 16)
    return (8, 8) if group == 1 and m == 64 else (16, 16)


def legal_n(kind: MmaKind, m: int, group: int, n: int) -> bool:
    low, step = n_step(kind, m, group)
    if kind == MmaKind.I8 and group == 1 and n == 8:
        return True
    return low <= n <= 256 and n % step == 0


SELECTOR_MAX = 3
"""The sparsity selector is bits 0-1 (PTX ISA, tcgen05 "Instruction descriptor")."""

SPARSE_BIT, SATURATE_BIT, D_BIT, A_BIT, B_BIT = 2, 3, 4, 7, 10
NEGATE_A_BIT, NEGATE_B_BIT, A_MAJOR_BIT, B_MAJOR_BIT, N_BIT, M_BIT = 13, 14, 15, 16, 17, 24


@dataclass(frozen=True)
class InstrDescriptor:
    """The fields of a tcgen05.mma instruction descriptor, as the op's properties give them."""

    kind: MmaKind
    a: str
    b: str
    d: str
    m: int
    n: int
    a_major: MatrixMajor = MatrixMajor.K
    b_major: MatrixMajor = MatrixMajor.K
    negate_a: bool = False
    negate_b: bool = False
    saturate: bool = False
    sparse: bool = False
    selector: int = 0

    @property
    def encoded(self) -> int:
        formats = OPERAND_FORMATS[self.kind]
        return (
            self.selector
            | self.sparse << SPARSE_BIT
            | self.saturate << SATURATE_BIT
            | D_FORMATS[self.d] << D_BIT
            | formats[self.a] << A_BIT
            | formats[self.b] << B_BIT
            | self.negate_a << NEGATE_A_BIT
            | self.negate_b << NEGATE_B_BIT
            | (self.a_major == MatrixMajor.MN) << A_MAJOR_BIT
            | (self.b_major == MatrixMajor.MN) << B_MAJOR_BIT
            | (self.n >> 3) << N_BIT
            | (self.m >> 4) << M_BIT
        )


def type_name(t: Attribute) -> str:
    """A type as the tables name it (`bf16`, `si8`, `f8E4M3FN`)."""
    if isinstance(t, IntegerType) and t.signedness.data == Signedness.SIGNLESS:
        return f"i{t.width.data}"
    return str(t)


@copy_op_definition
class MmaInstructionDescriptorOp(IRDLOperation):
    """
    The 32-bit instruction descriptor (`idesc`) of a `tcgen05.mma` (sm_100a) of `kind`
    with A and B of types `a` and `b` (their majors `a_major`, `b_major`: k by default),
    D of type `d`, the shape M x N (`cta_group 2`: of the CTA pair), the negate, saturate
    and sparse flags, and a sparse MMA's `selector` (the metadata column it reads, 0-3);
    the module docstring gives the bit layout.

    ```mlir
    %d = copy.tmem_alloc : memref<128x256xf32, #copy.tmem>
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 256 a bf16 b bf16 d f32 : i32
    ```

    `nvvm.tcgen05.mma %d, %adesc, %bdesc, %idesc, %enable_input_d {kind = ...}` reads it.
    """

    name = "copy.mma_instruction_descriptor"

    kind = prop_def(MmaKindAttr)
    m = prop_def(IntegerAttr[I32])
    n = prop_def(IntegerAttr[I32])
    a = prop_def(BaseAttr(TypeAttribute))
    b = prop_def(BaseAttr(TypeAttribute))
    d = prop_def(BaseAttr(TypeAttribute))
    cta_group = opt_prop_def(IntegerAttr[I32])
    a_major = opt_prop_def(MatrixMajorAttr)
    b_major = opt_prop_def(MatrixMajorAttr)
    negate_a = opt_prop_def(UnitAttr)
    negate_b = opt_prop_def(UnitAttr)
    saturate = opt_prop_def(UnitAttr)
    sparse = opt_prop_def(UnitAttr)
    selector = opt_prop_def(IntegerAttr[I32])
    result = result_def(I32)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "`kind` $kind `m` $m `n` $n `a` $a `b` $b `d` $d (`cta_group` $cta_group^)? "
        "(`a_major` $a_major^)? (`b_major` $b_major^)? (`negate_a` $negate_a^)? "
        "(`negate_b` $negate_b^)? (`saturate` $saturate^)? (`sparse` $sparse^)? "
        "(`selector` $selector^)? attr-dict "
        "`:` type($result)"
    )

    def __init__(
        self,
        kind: MmaKind | str,
        shape: tuple[int, int],
        types: tuple[Attribute, Attribute, Attribute],
        *,
        cta_group: int | None = None,
        majors: tuple[MatrixMajor | str, MatrixMajor | str] = (MatrixMajor.K, MatrixMajor.K),
        negate: tuple[bool, bool] = (False, False),
        saturate: bool = False,
        sparse: bool = False,
        selector: int | None = None,
    ):
        properties: dict[str, Attribute | None] = {
            "kind": MmaKindAttr(MmaKind(kind)),
            "m": IntegerAttr(shape[0], i32),
            "n": IntegerAttr(shape[1], i32),
            "a": types[0],
            "b": types[1],
            "d": types[2],
            "cta_group": None if cta_group is None else IntegerAttr(cta_group, i32),
            "selector": None if selector is None else IntegerAttr(selector, i32),
        }
        for key, major in zip(("a_major", "b_major"), majors, strict=True):
            if MatrixMajor(major) == MatrixMajor.MN:
                properties[key] = MatrixMajorAttr(MatrixMajor.MN)
        for key, flag in (
            ("negate_a", negate[0]), ("negate_b", negate[1]),
            ("saturate", saturate), ("sparse", sparse),
        ):  # fmt: skip
            if flag:
                properties[key] = UnitAttr()
        super().__init__(properties=properties, result_types=[i32])

    @property
    def group(self) -> int:
        return 1 if self.cta_group is None else self.cta_group.value.data

    @property
    def fields(self) -> InstrDescriptor:
        """The descriptor's fields (of a verified op)."""
        return InstrDescriptor(
            self.kind.data,
            type_name(self.a),
            type_name(self.b),
            type_name(self.d),
            self.m.value.data,
            self.n.value.data,
            MatrixMajor.K if self.a_major is None else self.a_major.data,
            MatrixMajor.K if self.b_major is None else self.b_major.data,
            self.negate_a is not None,
            self.negate_b is not None,
            self.saturate is not None,
            self.sparse is not None,
            0 if self.selector is None else self.selector.value.data,
        )

    def verify_(self) -> None:
        kind = self.kind.data
        a, b, d = type_name(self.a), type_name(self.b), type_name(self.d)
        self._verify_target(kind)
        self._verify_types(kind, a, b, d)
        self._verify_shape(kind)
        self._verify_flags(kind, a, b)

    def _verify_target(self, kind: MmaKind) -> None:
        target = enclosing_target(self)
        if target is None:
            return
        # rule: MI7
        if not TCGEN05.has(target):
            raise feature_error(self, TCGEN05, target, note=retarget_note(TCGEN05))
        # rule: MI7
        if kind == MmaKind.I8 and not MMA_I8.has(target):
            raise feature_error(
                self,
                MMA_I8,
                target,
                uses="with kind i8",
                note=f"{retarget_note(MMA_I8)}, or convert the operands to f8E4M3FN and use "
                "kind f8f6f4 (f32 accumulation)",
            )

    def _verify_types(self, kind: MmaKind, a: str, b: str, d: str) -> None:
        formats = OPERAND_FORMATS[kind]
        for operand, t in (("a", a), ("b", b)):
            # rule: MI1
            if t not in formats:
                fitting = next((k for k, f in OPERAND_FORMATS.items() if t in f), None)
                raise Error(
                    f"kind {kind} multiplies {', '.join(formats)} operands, got {operand} {t}",
                    note=(
                        f"use kind {fitting} for {t} operands (D {D_TYPES[fitting][0]})"
                        if fitting is not None
                        else f"give {operand} one of {', '.join(formats)}"
                    ),
                )
        # rule: MI1
        if kind == MmaKind.F16 and a != b:
            raise Error(
                f"kind f16 multiplies two f16 or two bf16 operands, got a {a} and b {b}",
                note=f"make b {a} (convert the operand before it is stored)",
            )
        want = D_TYPES[kind][:1] if "bf16" in (a, b) else D_TYPES[kind]
        # rule: MI2
        if d not in want:
            raise Error(
                f"kind {kind} with a {a} and b {b} accumulates in {' or '.join(want)}, got d {d}",
                note=f"use d {want[0]}",
            )

    def _verify_shape(self, kind: MmaKind) -> None:
        m, n, group = self.m.value.data, self.n.value.data, self.group
        # rule: MI3
        if group not in M_OF_GROUP:
            raise Error(
                f"cta_group is 1 (one CTA) or 2 (a CTA pair), got {group}",
                note="use cta_group 2 for an MMA of a CTA pair, or leave it out",
            )
        ms = M_OF_GROUP[group]
        # rule: MI3
        if m not in ms:
            fit = min(ms, key=lambda x: abs(x - m))
            raise Error(
                f"an MMA of cta_group {group} has M {' or '.join(map(str, ms))}, got m {m}",
                note=f"use m {fit}"
                + ("" if group == 2 else ", or cta_group 2 for M 256 over a CTA pair"),
            )
        # rule: MI4
        if not legal_n(kind, m, group, n):
            low, step = n_step(kind, m, group)
            fit = min(256, max(low, -(-n // step) * step))
            also = " (or 8)" if kind == MmaKind.I8 and group == 1 else ""
            raise Error(
                f"kind {kind} at m {m}, cta_group {group} takes N from {low} to 256 in steps "
                f"of {step}{also}, got n {n}",
                note=f"use n {fit} (pad the tile of B; the MMA writes {fit} columns of D)",
            )

    def _verify_flags(self, kind: MmaKind, a: str, b: str) -> None:
        for operand, t, major in (("a", a, self.a_major), ("b", b, self.b_major)):
            # rule: MI5
            if major is not None and major.data == MatrixMajor.MN and t in NOT_TRANSPOSABLE:
                raise Error(
                    f"{t} operands are K-major only, got {operand}_major mn",
                    note=f"drop {operand}_major mn: store the tile with K innermost "
                    "(copy.matrix_descriptor ... major k)",
                )
        # rule: MI6
        if kind == MmaKind.I8 and (self.negate_a is not None or self.negate_b is not None):
            raise Error(
                "kind i8 cannot negate its operands",
                note="drop negate_a and negate_b: negate the integers before they are stored",
            )
        self._verify_selector()
        # rule: MI6
        if kind != MmaKind.I8 and self.saturate is not None:
            raise Error(
                f"saturate is for kind i8 (s32 accumulation), got kind {kind}",
                note="drop saturate",
            )

    def _verify_selector(self) -> None:
        if self.selector is None:
            return
        selector = self.selector.value.data
        # rule: MI9
        if self.sparse is None:
            raise Error(
                f"the sparsity selector is a sparse MMA's (tcgen05.mma.sp), got selector "
                f"{selector} without sparse",
                note="add sparse (and issue the MMA as nvvm.tcgen05.mma.sp with its "
                "metadata), or drop the selector",
            )
        # rule: MI9
        if not 0 <= selector <= SELECTOR_MAX:
            raise Error(
                f"the sparsity selector is a 2-bit field (0 to {SELECTOR_MAX}), got selector "
                f"{selector}",
                note="use selector 0 or 1: the metadata column of the MMA's 32 elements of K "
                "in its 64 (kind f16), the pointer moved 2 columns per 64 elements",
            )
