"""Rule TR19 under the interpreter: a TMA store writes whole 16-byte chunks of the innermost
dim, so into a tensor whose innermost extent is not a multiple of 16 bytes it overwrites the
bytes after the extent up to the chunk's end. The verifier refuses static extents and the
runtime the arrays it launches with; a tensor map whose extent the kernel rewrites
(`copy.tensormap_replace`) and a dynamic extent run directly still reach it. The run
reports TR19 and writes what the H200 wrote (facts/hardware.py's measurements: a 64-byte
box loaded through the map, zero-filled past the extent, and stored back)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from copy_tools.universe import make_context
from facts.hardware import STORE_OVERRUN_BOX_BYTES, STORE_OVERRUNS

DTYPES = {"f32": np.float32, "f16": np.float16, "i8": np.int8}

REWRITTEN = """
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @k(%y: memref<?x{e}>, %n: i32)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<{box}x{e}, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %m = copy.tensormap_global %y slot %c0 of 1 : memref<?x{e}> -> !copy.tensormap<{box}x{e}>
    copy.tensormap_replace %m global_dim[0] to %n : !copy.tensormap<{box}x{e}>, i32
    copy.tensormap_fence_release %m : !copy.tensormap<{box}x{e}>
    copy.tensormap_fence_acquire %m : !copy.tensormap<{box}x{e}>
    copy.async_copy %y[%c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<{box}x{e}>)
      : memref<?x{e}> to memref<{box}x{e}, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %buf to %y[%c0] map(%m : !copy.tensormap<{box}x{e}>)
      : memref<{box}x{e}, #copy.smem> to memref<?x{e}>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}
"""


def rewritten(element):
    box = STORE_OVERRUN_BOX_BYTES // np.dtype(DTYPES[element]).itemsize
    text = REWRITTEN.format(e=element, box=box)
    return Parser(make_context(), text).parse_module(), box


@pytest.mark.parametrize("o", STORE_OVERRUNS, ids=lambda o: f"{o.element}-n{o.n}")
def test_a_store_through_a_rewritten_map_overwrites_what_the_h200_did(o):
    module, box = rewritten(o.element)
    y = np.arange(1, 2 * box + 1).astype(DTYPES[o.element])  # no zeros: the fill shows
    run = interpreter.run(module, y, np.int32(o.n))
    assert {v.rule for v in run.violations} == {"TR19"}, [str(v) for v in run.violations]
    (out,) = run.arrays[:1]
    zeroed = np.nonzero(out == 0)[0]
    assert list(zeroed) == list(range(o.n, o.n + o.overwritten))
    untouched = np.ones(y.shape, dtype=bool)
    untouched[zeroed] = False
    assert np.array_equal(out[untouched], y[untouched])


@pytest.mark.parametrize("element", sorted(DTYPES))
def test_an_extent_of_whole_chunks_is_clean(element):
    module, box = rewritten(element)
    n = 16 // np.dtype(DTYPES[element]).itemsize * 3
    y = np.arange(1, 2 * box + 1).astype(DTYPES[element])
    run = interpreter.run(module, y, np.int32(n))
    assert run.violations == [], [str(v) for v in run.violations]
    assert np.array_equal(run.arrays[0], y)


DYNAMIC = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<16xf32>, %y: memref<?xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<16xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0] to %buf barrier %bar[%c0] impl tma
      : memref<16xf32> to memref<16xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %buf to %y[%c0] impl tma : memref<16xf32, #copy.smem> to memref<?xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
"""


def test_a_dynamic_extent_run_directly_is_reported():
    """The array ends at the extent: the chunk's rest lies past it (reported, not written)."""
    module = Parser(make_context(), DYNAMIC).parse_module()
    x = np.arange(1, 17, dtype=np.float32)
    run = interpreter.run(module, x, np.zeros(13, np.float32))
    assert {v.rule for v in run.violations} == {"TR19"}, [str(v) for v in run.violations]
    assert np.array_equal(run.arrays[1], x[:13])
    run = interpreter.run(module, x, np.zeros(12, np.float32))
    assert run.violations == [], [str(v) for v in run.violations]
