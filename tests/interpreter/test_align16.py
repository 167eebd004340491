"""Packed values 16 to a 16-byte unit (`#copy.smem<align16>`, the 16U4_ALIGN16B and
16U6_ALIGN16B tensor maps) under the interpreter: where a TMA load puts each data byte of a
box, against a numpy model of cuda.h's words (FP4: 8 bytes of data then 8 of gap per 16
values; FP6: 12 and 4), under each swizzle the map types take, and an FP6 tile loaded by TMA
into an align16 buffer and stored back, unpacked and compared with numpy, bit-exact and
race-free. No Blackwell GPU is here: the model is the documentation's (docs/design.md)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, f4E2M1FN, f6E2M3FN
from xdsl.parser import Parser

import interpreter
from copy_dialect import layout
from copy_dialect.smem_space import SmemSpaceAttr
from copy_tools.universe import make_context
from interpreter.memory import Smem
from interpreter.packed import allocate, pack, unpack

SWIZZLES = {"none": (16, 16), "128": (128, 16), "atom32": (128, 32)}
ELEMENTS = {"fp4": (f4E2M1FN, 4), "fp6": (f6E2M3FN, 6)}


def model(rows: int, data: int, swizzle: int) -> np.ndarray:
    """The SMEM byte of each data byte of a box of `rows` rows of 128 values: data byte `j`
    of a row in byte `j mod data` of the row's 16-byte unit `j div data`, then the swizzle."""
    r, j = np.divmod(np.arange(rows * 8 * data), 8 * data)
    linear = r * 128 + (j // data) * 16 + j % data
    return layout.swizzled(linear, swizzle)


@pytest.mark.parametrize("swizzle", SWIZZLES)
@pytest.mark.parametrize("element", ELEMENTS)
def test_align16_places_data_bytes_as_cuda_h_says(element: str, swizzle: str):
    t, bits = ELEMENTS[element]
    span, atom = SWIZZLES[swizzle]
    space = SmemSpaceAttr(span, atom, align16=True)
    ref = allocate(Smem(), MemRefType(t, [2, 16, 128], memory_space=space))
    data = 16 * bits // 8
    places = ref.slot_offsets((1,), (16, 8 * data)) - ref.base
    want = layout.swizzled(16 * 128 + model(16, data, 16), layout.Swizzle(span, atom, align16=True))
    assert np.array_equal(places, want)


def test_pack_and_unpack_6_bits():
    codes = np.random.default_rng(2).integers(0, 64, (3, 128)).astype(np.uint8)
    packed = pack(codes, 6)
    assert packed.shape == (3, 96)
    assert np.array_equal(unpack(packed, 6), codes)
    assert pack(np.array([[1, 2, 3, 4]]), 6).tolist() == [[0x81, 0x30, 0x10]]


KERNEL = """
builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%x: memref<64x256xf6E2M3FN>, %y: memref<32x128xf6E2M3FN>, %r: index, %c: index) attributes {{gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : {smem}
    copy.async_copy %x[%r, %c] to %buf barrier %bar[%c0] : memref<64x256xf6E2M3FN> to {smem}, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    copy.async_copy %buf to %y[%c0, %c0] : {smem} to memref<32x128xf6E2M3FN>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}"""  # noqa: E501


@pytest.mark.parametrize("swizzle", SWIZZLES)
@pytest.mark.parametrize(("r", "c"), [(0, 0), (16, 128), (40, 128)])
def test_fp6_round_trip_through_align16(swizzle: str, r: int, c: int):
    span, atom = SWIZZLES[swizzle]
    smem = f"memref<32x128xf6E2M3FN, {SmemSpaceAttr(span, atom, align16=True)}>"
    module = Parser(make_context(), KERNEL.format(smem=smem)).parse_module()
    codes = np.random.default_rng(r + c).integers(0, 64, (64, 256)).astype(np.uint8)
    out = np.zeros((32, 96), np.uint8)
    run = interpreter.run(module, pack(codes, 6), out, r, c, grid=(1, 1))
    assert run.violations == [], [str(v) for v in run.violations]
    rows = np.arange(r, r + 32)
    want = np.where((rows < 64)[:, None], codes[rows % 64][:, c : c + 128], 0)
    assert np.array_equal(unpack(run.arrays[1], 6), want)
