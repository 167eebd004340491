"""FP4 (`f4E2M1FN`, a 16U4_ALIGN8B tensor map) TMA copies under the interpreter, against numpy:
a kernel loads a box of 4-bit codes by TMA at a coordinate of the kernel's, and stores it
whole to another array; the test unpacks the nibbles of what it wrote and compares them with
numpy's slice of the codes, out-of-bounds elements zero (the only fill of a packed map, PK2).
Bit-exact and race-free; a box that starts at an odd element, which splits a byte, and a
thread access of 4-bit elements are refused as not modelled. No Blackwell GPU is here: the
copy of a packed box as the copy of its bytes is cuda.h's "16 x U4 packed values ... no
gaps", not a measurement."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from copy_tools import runtime
from copy_tools.universe import make_context
from interpreter.packed import pack_fp4, unpack_fp4
from interpreter.values import InterpretError

ROWS, COLS = 128, 256
BOX = (64, 128)
GMEM = f"memref<{ROWS}x{COLS}xf4E2M1FN>"
OUT = f"memref<{BOX[0]}x{BOX[1]}xf4E2M1FN>"
SMEM = f"memref<{BOX[0]}x{BOX[1]}xf4E2M1FN, #copy.smem>"

KERNEL = f"""
builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%x: {GMEM}, %y: {OUT}, %r: index, %c: index) attributes {{gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : {SMEM}
    copy.async_copy %x[%r, %c] to %buf barrier %bar[%c0] : {GMEM} to {SMEM}, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    copy.async_copy %buf to %y[%c0, %c0] : {SMEM} to {OUT}
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}"""  # noqa: E501

CODES = np.random.default_rng(11).integers(0, 16, (ROWS, COLS)).astype(np.uint8)


def expected(r: int, c: int) -> np.ndarray:
    """numpy's box of the codes at (r, c), zero outside the array."""
    rows, cols = np.meshgrid(r + np.arange(BOX[0]), c + np.arange(BOX[1]), indexing="ij")
    inside = (rows >= 0) & (rows < ROWS) & (cols >= 0) & (cols < COLS)
    return np.where(inside, CODES[rows % ROWS, cols % COLS], 0).astype(np.uint8)


def run(r: int, c: int):
    module = Parser(make_context(), KERNEL).parse_module()
    out = np.zeros((BOX[0], BOX[1] // 2), np.uint8)
    return interpreter.run(module, pack_fp4(CODES), out, r, c, grid=(1, 1))


def test_pack_and_unpack_are_inverse():
    assert np.array_equal(unpack_fp4(pack_fp4(CODES)), CODES)
    assert pack_fp4(np.array([[1, 2]])).tolist() == [[0x21]]  # element 2i: the low nibble


@pytest.mark.parametrize(("r", "c"), [(0, 0), (64, 128), (10, 34), (100, 200), (-8, -32)])
def test_fp4_box_is_numpys(r: int, c: int):
    result = run(r, c)
    assert result.violations == [], [str(v) for v in result.violations]
    assert np.array_equal(unpack_fp4(result.arrays[1]), expected(r, c))


def test_a_box_at_an_odd_element_is_not_modelled():
    with pytest.raises(InterpretError, match="splits a byte"):
        run(0, 33)


def test_the_arguments_are_the_bytes():
    module = Parser(make_context(), KERNEL).parse_module()
    with pytest.raises(ValueError, match="expected the bytes of"):
        interpreter.run(module, CODES, np.zeros(BOX, np.uint8), 0, 0, grid=(1, 1))


def test_runtime_call_under_copy_interpret(monkeypatch):
    """The runtime takes an FP4 array as its bytes (runtime.arrays.PACKED_ELEMENTS) and, under
    COPY_INTERPRET, runs the kernel on the interpreter."""
    monkeypatch.setenv(runtime.INTERPRET_ENV, "1")
    program = runtime.compile(KERNEL, target="sm_100a")
    out = np.zeros((BOX[0], BOX[1] // 2), np.uint8)
    program(pack_fp4(CODES), out, 64, 128, grid=(1, 1, 1))
    assert np.array_equal(unpack_fp4(out), expected(64, 128))
    with pytest.raises(ValueError, match=r"of shape \(128, 128\) \(the bytes of its f4E2M1FN"):
        program(CODES, out, 0, 0, grid=(1, 1, 1))


def test_a_thread_access_of_fp4_is_not_modelled():
    text = KERNEL.replace(
        "    %f = arith.constant false\n",
        f"    %f = arith.constant false\n    %v = memref.load %buf[%c0, %c0] : {SMEM}\n",
    )
    module = Parser(make_context(), text).parse_module()
    out = np.zeros((BOX[0], BOX[1] // 2), np.uint8)
    with pytest.raises(InterpretError, match="thread access of f4E2M1FN"):
        interpreter.run(module, pack_fp4(CODES), out, 0, 0, grid=(1, 1))
