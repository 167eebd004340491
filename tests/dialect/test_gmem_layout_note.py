"""C1's note for a row-major GMEM ref whose rows are not a multiple of 16 bytes apart
suggests a layout with one stride per dim, the rows padded and every outer stride scaled
with them: applied, the kernel verifies and lowers to a cubin, for every rank TMA takes
(2 to 5) and for a dynamic extent. (The note used to suggest `strided<[padded, 1]>` for any
rank; on a 3-D ref that layout verified and lowered with an ABI of 3 dims and 2 strides.)
A layout with fewer strides than dims is now B10's error, whose note gives the same
layout."""

from __future__ import annotations

import re

import pytest
from xdsl.parser import Parser

from analysis.verify import verification_errors
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from passes.pipeline import compile_module

KERNEL = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: GMEM) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<8x4xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[INDICES] to %buf barrier %bar[%c0]
      : GMEM to memref<8x4xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    func.return
  }
}
"""

SHAPES = {
    # the misaligned ref (rows of 3 f32: 12 bytes), the layout the note suggests
    "rank2": ("memref<8x3xf32>", "memref<8x3xf32, strided<[4, 1]>>"),
    "rank3": ("memref<4x8x3xf32>", "memref<4x8x3xf32, strided<[32, 4, 1]>>"),
    "rank4": ("memref<2x4x8x3xf32>", "memref<2x4x8x3xf32, strided<[128, 32, 4, 1]>>"),
    "rank5": ("memref<2x2x4x8x3xf32>", "memref<2x2x4x8x3xf32, strided<[256, 128, 32, 4, 1]>>"),
    "dynamic": ("memref<?x?x8x3xf32>", "memref<?x?x8x3xf32, strided<[?, 32, 4, 1]>>"),
}
SUGGESTED = re.compile(r"\((memref<.*>>)\)")


def kernel(gmem: str) -> str:
    rank = gmem.count("x")  # each dim is followed by an x
    return KERNEL.replace("GMEM", gmem).replace("INDICES", ", ".join(["%c0"] * rank))


def errors(text: str) -> list[tuple[object, Exception]]:
    return verification_errors(Parser(make_context(), text).parse_module())


@pytest.mark.parametrize("name", SHAPES)
def test_the_padded_layout_the_note_suggests_verifies_and_lowers(name):
    gmem, want = SHAPES[name]
    (found,) = errors(kernel(gmem))
    _, error = found
    assert isinstance(error, CopyVerifyException)
    assert "multiple of 16 bytes" in str(error)
    assert error.note is not None
    match = SUGGESTED.search(error.note)
    assert match, error.note
    assert match.group(1) == want
    fixed = Parser(make_context(), kernel(want)).parse_module()
    compiled = compile_module(fixed, make_context())
    assert compiled.cubin


@pytest.mark.parametrize("name", ["rank3", "rank5"])
def test_a_layout_with_fewer_strides_than_dims_is_an_error(name):
    gmem, want = SHAPES[name]
    short = gmem.replace(">", ", strided<[4, 1]>>")
    (found,) = errors(kernel(short))
    _, error = found
    assert isinstance(error, CopyVerifyException)
    rank = gmem.count("x")
    assert str(error) == (
        f"Expected one stride per dim in the layout of {short} ({rank}), got 2"
    )
    assert error.note is not None
    assert error.note.endswith(want)
    assert errors(kernel(want)) == []
