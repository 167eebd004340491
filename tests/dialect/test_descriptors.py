"""copy.matrix_descriptor's fields against the SMEM layout (copy_dialect.layout, which
`copy-layout` draws and TMA writes): for every swizzle, operand type, major-ness and tile a
GEMM takes, the place of each 16-byte unit of the tile in CUTLASS's canonical GMMA layout
(cute/arch/mma_sm90_desc.hpp, in 16-byte units, with the descriptor's LBO and SBO) is where
the layout puts it; and the bits sit where the PTX ISA's Matrix Descriptor Format says."""

from __future__ import annotations

import itertools

import pytest
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Block
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from copy_dialect import layout
from copy_dialect import ops as copy
from copy_dialect.descriptors import Descriptor, MatrixMajor, descriptor
from copy_dialect.memory import bitwidth
from copy_tools.universe import make_context

TYPES = {"f16": 16, "bf16": 16, "f32": 32, "f8E4M3FN": 8, "i8": 8}
SWIZZLES = (32, 64, 128)


def _ref(shape: tuple[int, ...], element: str, swizzle: int) -> MemRefType:
    space = "#copy.smem" if swizzle == 16 else f"#copy.smem<swizzle = {swizzle}>"
    text = f"memref<{'x'.join(map(str, shape))}x{element}, {space}>"
    t = Parser(make_context(), text).parse_type()
    assert isinstance(t, MemRefType)
    return t


def _offset(t: MemRefType, indices: tuple[int, ...]) -> int:
    """Where the layout puts element `indices` of `t`, from its start."""
    bits = bitwidth(t.element_type)
    assert bits is not None
    return layout.element_offset(list(indices), t.get_shape(), bits, copy.swizzle_of(t))


def _tiles(major: MatrixMajor, swizzle: int, bits: int):
    """The tiles (shapes in elements) a GEMM's slot takes for each form."""
    row = (swizzle if swizzle != 16 else 16) * 8 // bits
    if swizzle == 16:
        yield from ((kc, mn, row) for kc in (2, 4) for mn in (64, 128))
    elif major == MatrixMajor.K:
        yield from ((mn, row) for mn in (64, 128, 256))
    else:
        yield from ((atoms, k, row) for atoms in (1, 2, 4) for k in (16, 32, 64))


@pytest.mark.parametrize(
    ("element", "swizzle", "major"),
    [
        (e, s, m)
        for e, s, m in itertools.product(TYPES, (*SWIZZLES, 16), MatrixMajor)
        if m == MatrixMajor.K or TYPES[e] == 16
    ],
)
def test_fields_place_every_unit_where_the_layout_does(element, swizzle, major):
    bits = TYPES[element]
    per_unit = 128 // bits
    for tile in _tiles(major, swizzle, bits):
        t = _ref(tile, element, swizzle)
        d = descriptor(t, major)
        s = layout.row_pitch(tile[-1] * bits // 8, swizzle)
        for index in itertools.product(*(range(n) for n in tile[:-1])):
            for unit in range(tile[-1] // per_unit):
                if swizzle != 16 and major == MatrixMajor.K:
                    (r,) = index  # ((8,n),W):((W,SBO),1)
                    canonical = (r % 8) * s + (r // 8) * d.stride + unit * 16
                elif swizzle != 16:
                    a, k = (
                        index if len(index) == 2 else (0, *index)
                    )  # ((W,n),(8,k)):((1,LBO),(W,SBO))
                    canonical = unit * 16 + a * d.leading + (k % 8) * s + (k // 8) * d.stride
                elif major == MatrixMajor.K:
                    kc, r = index  # ((8,n),2):((1,SBO),LBO)
                    canonical = (r % 8) * 16 + (r // 8) * d.stride + kc * d.leading
                else:
                    mc, k = index  # ((1,n),(8,k)):((X,SBO),(1,LBO))
                    canonical = mc * d.stride + (k % 8) * 16 + (k // 8) * d.leading
                element_index = (*index, unit * per_unit)
                assert _offset(t, element_index) == layout.swizzled(canonical, swizzle), (
                    tile,
                    element_index,
                )


def test_bits_are_the_ptx_matrix_descriptor_format():
    d = Descriptor(leading=4096, stride=1024, swizzle=128)
    value = d.encoded(0x2_0400)  # a slot at 132 KiB + 1 KiB of the shared window
    assert value & 0x3FFF == 0x2_0400 >> 4  # bits 0-13: start address >> 4
    assert (value >> 16) & 0x3FFF == 4096 >> 4  # bits 16-29: LBO >> 4
    assert (value >> 32) & 0x3FFF == 1024 >> 4  # bits 32-45: SBO >> 4
    assert (value >> 49) & 0x7 == 0  # bits 49-51: base offset
    assert value >> 62 == 1  # bits 62-63: 128B swizzle
    assert {s: Descriptor(16, 128, s).constant_bits >> 62 for s in (16, 128, 64, 32)} == {
        16: 0, 128: 1, 64: 2, 32: 3}  # fmt: skip
    # The sm_100a form: version 0b001 at 46-48, the 3-bit layout at 61-63 (none 0, 128B 2,
    # 64B 4, 32B 6: upstream's nvvm.tcgen05.mma_smem_desc).
    t = Descriptor(leading=4096, stride=1024, swizzle=64, tcgen05=True).encoded(0x400)
    assert ((t >> 46) & 0x7, (t >> 52) & 1, t >> 61) == (1, 0, 4)  # version, LBO mode, 64B
    assert (t & 0x3FFF, (t >> 16) & 0x3FFF, (t >> 32) & 0x3FFF) == (0x40, 256, 64)
    assert {s: Descriptor(16, 128, s, True).constant_bits >> 61 for s in (16, 128, 64, 32)} == {
        16: 0, 128: 2, 64: 4, 32: 6}  # fmt: skip
    # CUTLASS's K-major 128B f16 tile of 64 rows: LBO 1, SBO 64 (16-byte units).
    k128 = descriptor(_ref((4, 64, 64), "f16", 128), MatrixMajor.K)
    assert (k128.leading, k128.stride) == (16, 1024)


def test_the_gemm_tiles_verify_and_a_bad_one_has_a_fix():
    block = Block(arg_types=[IndexType()])
    for shape, major in (((4, 128, 64), "k"), ((4, 256, 64), "k"), ((4, 2, 64, 64), "mn")):
        alloc = copy.AllocSmemOp(_ref(shape, "bf16", 128))
        copy.MatrixDescriptorOp(alloc, [block.args[0]], major=major).verify()
    bad = copy.AllocSmemOp(_ref((4, 128, 32), "bf16", 128))
    op = copy.MatrixDescriptorOp(bad, [block.args[0]], major="k")
    with pytest.raises(VerifyException, match="128B swizzle's atom") as caught:
        op.verify()
    assert "make the innermost dim 64" in (caught.value.note or "")
