"""copy.mma_instruction_descriptor's bits against CUTLASS's `UMMA::InstrDescriptor`
(cute/arch/mma_sm100_desc.hpp): a ctypes union with the same C bitfields, in the same order
and widths (two uint16_t words: sparse_id2 2, sparse_flag 1, saturate 1, c_format 2, a gap
of 1, a_format 3, b_format 3, a_negate 1, b_negate 1, a_major 1; then b_major 1, n_dim 6,
a gap of 1, m_dim 5, a gap of 1, max_shift 2), filled through its field names with
CUTLASS's encodings (`to_UMMAFormat`, `to_CFormat`, `M >> 4`, `N >> 3`), must read as the
32-bit value the op lowers to, for every legal combination of kind, types, shape, CTA group,
majors and flags. Also: the legal shapes against CUTLASS's SM100 MMA atoms' static asserts,
and the op's value in the lowered IR."""

from __future__ import annotations

import ctypes
import itertools

import pytest
from xdsl.parser import Parser

from copy_dialect import ops as copy
from copy_dialect.instruction_descriptor import (
    D_TYPES,
    M_OF_GROUP,
    NOT_TRANSPOSABLE,
    OPERAND_FORMATS,
    InstrDescriptor,
    MmaKind,
    legal_n,
)
from copy_tools.universe import make_context
from passes.convert_copy_to_nvvm import ConvertCopyToNVVMPass


class _Bits(ctypes.LittleEndianStructure):
    _fields_ = [  # noqa: RUF012 (ctypes' declaration)
        ("sparse_id2_", ctypes.c_uint16, 2),
        ("sparse_flag_", ctypes.c_uint16, 1),
        ("saturate_", ctypes.c_uint16, 1),
        ("c_format_", ctypes.c_uint16, 2),
        ("_gap0", ctypes.c_uint16, 1),
        ("a_format_", ctypes.c_uint16, 3),
        ("b_format_", ctypes.c_uint16, 3),
        ("a_negate_", ctypes.c_uint16, 1),
        ("b_negate_", ctypes.c_uint16, 1),
        ("a_major_", ctypes.c_uint16, 1),
        ("b_major_", ctypes.c_uint16, 1),
        ("n_dim_", ctypes.c_uint16, 6),
        ("_gap1", ctypes.c_uint16, 1),
        ("m_dim_", ctypes.c_uint16, 5),
        ("_gap2", ctypes.c_uint16, 1),
        ("max_shift_", ctypes.c_uint16, 2),
    ]


class _InstrDescriptor(ctypes.Union):
    _fields_ = [("desc_", ctypes.c_uint32), ("bits", _Bits)]  # noqa: RUF012


# CUTLASS's enums (UMMA::F16F32Format, S8Format, MXF8F6F4Format, CFormat), by type name.
CUTLASS_FORMAT = {
    "f16": 0, "bf16": 1, "tf32": 2, "f32": 2,
    "ui8": 0, "si8": 1, "i8": 1,
    "f8E4M3FN": 0, "f8E5M2": 1, "f6E2M3FN": 3, "f6E3M2FN": 4, "f4E2M1FN": 5,
}  # fmt: skip
CUTLASS_C_FORMAT = {"f16": 0, "f32": 1, "i32": 2, "si32": 2}


def cutlass(d: InstrDescriptor) -> int:
    desc = _InstrDescriptor()
    desc.desc_ = 0
    b = desc.bits
    b.sparse_flag_ = d.sparse
    b.saturate_ = d.saturate
    b.c_format_ = CUTLASS_C_FORMAT[d.d]
    b.a_format_ = CUTLASS_FORMAT[d.a]
    b.b_format_ = CUTLASS_FORMAT[d.b]
    b.a_negate_ = d.negate_a
    b.b_negate_ = d.negate_b
    b.a_major_ = d.a_major == copy.MatrixMajor.MN
    b.b_major_ = d.b_major == copy.MatrixMajor.MN
    b.n_dim_ = d.n >> 3
    b.m_dim_ = d.m >> 4
    return desc.desc_


def _shapes(kind: MmaKind):
    for group, ms in M_OF_GROUP.items():
        for m in ms:
            for n in range(8, 257, 8):
                if legal_n(kind, m, group, n):
                    yield group, m, n


def _descriptors():
    for kind, formats in OPERAND_FORMATS.items():
        pairs = [(a, b) for a in formats for b in formats if kind != MmaKind.F16 or a == b]
        for (a, b), d, (group, m, n) in itertools.product(pairs, D_TYPES[kind], _shapes(kind)):
            if "bf16" in (a, b) and d != "f32":
                continue
            yield group, InstrDescriptor(kind, a, b, d, m, n)


ALL = list(_descriptors())


def test_every_legal_descriptor_matches_cutlass():
    assert len(ALL) > 1000
    for _, d in ALL:
        assert d.encoded == cutlass(d), d


@pytest.mark.parametrize(
    "flags",
    [
        {"a_major": copy.MatrixMajor.MN},
        {"b_major": copy.MatrixMajor.MN},
        {"negate_a": True},
        {"negate_b": True},
        {"sparse": True},
        {"a_major": copy.MatrixMajor.MN, "b_major": copy.MatrixMajor.MN, "negate_b": True},
    ],
)
def test_flags_match_cutlass(flags: dict[str, object]):
    for kind in (MmaKind.F16, MmaKind.TF32, MmaKind.F8F6F4):
        a = next(iter(OPERAND_FORMATS[kind]))
        d = InstrDescriptor(kind, a, a, "f32", 128, 256, **flags)  # type: ignore[arg-type]
        assert d.encoded == cutlass(d)


def test_saturate_matches_cutlass():
    d = InstrDescriptor(MmaKind.I8, "ui8", "si8", "i32", 64, 8, saturate=True)
    assert d.encoded == cutlass(d) == 1 << 3 | 2 << 4 | 1 << 10 | 1 << 17 | 4 << 24


def test_shapes_are_cutlass_atoms():
    """CUTLASS's static asserts (SM100_MMA_F16BF16_SS, _TF32_SS, _F8F6F4_SS, _S8_SS and
    their _2x1SM_SS), written out."""

    def atom(kind: MmaKind, group: int, m: int, n: int) -> bool:
        if group == 1 and kind == MmaKind.I8:
            return m in (64, 128) and (n == 8 or (n % 16 == 0 and 16 <= n <= 256))
        if group == 1:
            return (m == 64 and n % 8 == 0 and 8 <= n <= 256) or (
                m == 128 and n % 16 == 0 and 16 <= n <= 256
            )
        if kind == MmaKind.I8:
            return m in (128, 256) and n % 32 == 0 and 32 <= n <= 256
        return m in (128, 256) and n % 16 == 0 and 16 <= n <= 256

    for kind, group, m, n in itertools.product(MmaKind, (1, 2), (64, 128, 256), range(1, 300)):
        ours = m in M_OF_GROUP[group] and legal_n(kind, m, group, n)
        assert ours == atom(kind, group, m, n), (kind, group, m, n)


def test_transposable_types():
    assert set(NOT_TRANSPOSABLE) == {"f6E2M3FN", "f6E3M2FN", "f4E2M1FN"}


def _lowered_constant(text: str) -> int:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    ConvertCopyToNVVMPass(target="sm_100a").apply(make_context(), module)
    values = [
        op.value.value.data
        for op in module.walk()
        if op.name == "llvm.mlir.constant" and str(op.result.type) == "i32"
    ]
    return values[-1]


def test_the_op_lowers_to_its_value():
    text = """
    builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
      func.func @k(%out: memref<1xi32>) attributes {gpu.kernel} {
        %i = copy.mma_instruction_descriptor kind f8f6f4 m 256 n 240 a f8E5M2 b f4E2M1FN d f16
          cta_group 2 a_major mn negate_b : i32
        %c0 = arith.constant 0 : index
        memref.store %i, %out[%c0] : memref<1xi32>
        func.return
      }
    }
    """
    d = InstrDescriptor(
        MmaKind.F8F6F4, "f8E5M2", "f4E2M1FN", "f16", 256, 240,
        a_major=copy.MatrixMajor.MN, negate_b=True,
    )  # fmt: skip
    assert _lowered_constant(text) == d.encoded == cutlass(d)
