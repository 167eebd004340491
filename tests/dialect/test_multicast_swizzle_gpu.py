"""On a GPU (an H200 here): a multicast TMA load into swizzled SMEM whose rows are narrower
than the swizzle span. TMA pads each row to the span, so CTA r's share of the box starts
`r * share_bytes` (padded) into the slot, not `r * box_bytes / 2`: the lowering placed it at
the unpadded offset, and the peer's half of every tile came back wrong. Each CTA of a (2, 1, 1)
cluster stores the half of the shared tile its rank picks, so both shares are checked.
Without a GPU, under the interpreter, on a smaller x (SMALL: 128 x 64)."""

from __future__ import annotations

import numpy as np
import pytest

from copy_tools import runtime
from tests import device

# (element type, numpy dtype, columns of the tile, swizzle): rows of 64, 32 and 16 bytes under
# 128B and 64B swizzles, and one row of a whole span (the control).
CASES = [
    ("f16", np.float16, 32, 128),
    ("f32", np.float32, 16, 128),
    ("i8", np.int8, 16, 128),
    ("f32", np.float32, 8, 64),
    ("f32", np.float32, 32, 128),
]
ROWS, COLS = 256, 256
SMALL = (128, 64)
"""The interpreted x's rows and columns."""
ATTRS = (
    "gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>"
)


def kernel(elt: str, cols: int, swizzle: int, rows: int = ROWS, columns: int = COLS) -> str:
    x = f"memref<{rows // 32}x32x{columns}x{elt}>"
    tile = f"memref<2x32x{cols}x{elt}, #copy.smem<swizzle = {swizzle}>>"
    return f"""builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @k(%x: {x}, %y: {x}) attributes {{{ATTRS}}} {{
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %cw = arith.constant {cols} : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %by = "gpu.block_id"() <{{dimension = #gpu<dim y>}}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %pair = arith.divui %bx, %c2 : index
    %col = arith.muli %pair, %cw : index
    %half = arith.muli %by, %c2 : index
    %tile = copy.alloc_smem : {tile}
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%half, %c0, %col] to %tile barrier %bar[%c0] {{collective = array<i64: 0>}}
      : {x} to {tile}, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    %mine = arith.addi %half, %rank : index
    copy.async_copy %tile[%rank] to %y[%mine, %c0, %col] : {tile} to {x}
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}"""


@pytest.mark.gpu
@pytest.mark.parametrize(("elt", "dtype", "cols", "swizzle"), CASES, ids=lambda v: str(v))
def test_multicast_shares_of_narrow_swizzled_rows(elt, dtype, cols, swizzle):
    rows, columns = SMALL if device.INTERPRETED else (ROWS, COLS)
    rng = np.random.default_rng(cols * swizzle)
    bits = rng.integers(0, 256, size=(rows // 32, 32, columns * np.dtype(dtype).itemsize))
    x = bits.astype(np.uint8).view(dtype)
    y = (~x.view(np.uint8)).view(dtype)  # poisoned: every byte differs from x's
    program = runtime.compile(kernel(elt, cols, swizzle, rows, columns))
    program(x, y, grid=(2 * columns // cols, rows // 64))
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8))


@pytest.mark.parametrize(("elt", "dtype", "cols", "swizzle"), CASES, ids=lambda v: str(v))
def test_kernels_compile(elt, dtype, cols, swizzle):
    # Here without a GPU too: only the launch is left to the GPU test.
    runtime.compile(kernel(elt, cols, swizzle))
