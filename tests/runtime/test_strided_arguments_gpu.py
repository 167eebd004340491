"""On a GPU (an H200 here), or on the CPU under the interpreter: kernels whose GMEM
arguments have a strided layout (rows padded to a pitch, `strided<[pitch, 1]>`) run on views
of padded arrays, numpy (copied in as the span they cover, copied back element by element)
and PyTorch (in place, on a GPU only): a cp.async copy, thread accesses and TMA copies, each
matching numpy bit for bit, and leaving every element of the padded arrays outside the views
(the padding, filled with a sentinel) untouched."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from copy_tools import runtime
from tests import device
from tests.runtime.test_runtime_gpu import random, same_bits

pytestmark = device.marks()

TARGET = "sm_90a"
ROWS, COLS = 130, 60
"""Rows of 240 bytes (no whole number of 16-byte chunks, C1's case), and a tail of rows that
no tile divides."""
X_PITCH, Y_PITCH = 68, 72
"""The padded rows, in elements (272 and 288 bytes: multiples of 16, as TMA needs)."""
SENTINEL = np.float32(-12345.5)
"""The padding's value, which no element of `random` has."""


def layout(pitch: int) -> str:
    return f"memref<{ROWS}x{COLS}xf32, strided<[{pitch}, 1]>>"


BLOCK_ID = '"gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index'
THREAD_ID = '"gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index'


def cp_async_kernel() -> str:
    """`y = x` by tiles of 32x64: a zero-filling cp.async load of x into SMEM, then thread
    stores of the in-bounds elements into y. Grid: one block per 32 rows."""
    x, y = layout(X_PITCH), layout(Y_PITCH)
    return f"""builtin.module attributes {{copy.target = #copy.target<"{TARGET}">}} {{
  func.func @strided_cp_async(%x: {x}, %y: {y})
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>}} {{
    %block = {BLOCK_ID}
    %tid = {THREAD_ID}
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    %tile = arith.constant 2048 : index
    %rows = arith.constant {ROWS} : index
    %cols = arith.constant {COLS} : index
    %row0 = arith.muli %block, %c32 : index
    %buf = copy.alloc_smem : memref<32x64xf32, #copy.smem>
    copy.async_copy %x[%row0, %c0] to %buf impl cp_async oob zeros
      : {x} to memref<32x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    scf.for %i = %tid to %tile step %c256 {{
      %r = arith.divui %i, %c64 : index
      %c = arith.remui %i, %c64 : index
      %row = arith.addi %row0, %r : index
      %row_in = arith.cmpi ult, %row, %rows : index
      %col_in = arith.cmpi ult, %c, %cols : index
      %inside = arith.andi %row_in, %col_in : i1
      scf.if %inside {{
        %v = memref.load %buf[%r, %c] : memref<32x64xf32, #copy.smem>
        memref.store %v, %y[%row, %c] : {y}
      }}
    }}
    func.return
  }}
}}"""


def thread_kernel() -> str:
    """`y = x` by thread loads and stores, one block per row (the SMEM buffer, unused, makes
    the function a kernel of convert-copy-to-nvvm)."""
    x, y = layout(X_PITCH), layout(Y_PITCH)
    return f"""builtin.module attributes {{copy.target = #copy.target<"{TARGET}">}} {{
  func.func @strided_threads(%x: {x}, %y: {y})
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>}} {{
    %row = {BLOCK_ID}
    %tid = {THREAD_ID}
    %cols = arith.constant {COLS} : index
    %step = arith.constant 64 : index
    %unused = copy.alloc_smem : memref<1x64xf32, #copy.smem>
    scf.for %j = %tid to %cols step %step {{
      %v = memref.load %x[%row, %j] : {x}
      memref.store %v, %y[%row, %j] : {y}
    }}
    func.return
  }}
}}"""


def tma_kernel() -> str:
    """`y = x` by tiles of 64 rows: a TMA load of x into SMEM, then a TMA store into y (the
    tail tile's loads zero-filled, its stores clipped). Grid: one block per 64 rows."""
    x, y = layout(X_PITCH), layout(Y_PITCH)
    smem = f"memref<64x{COLS}xf32, #copy.smem>"
    return f"""builtin.module attributes {{copy.target = #copy.target<"{TARGET}">}} {{
  func.func @strided_tma(%x: {x}, %y: {y})
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>}} {{
    %block = {BLOCK_ID}
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %row0 = arith.muli %block, %c64 : index
    %phase = arith.constant false
    %buf = copy.alloc_smem : {smem}
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row0, %c0] to %buf barrier %bar[%c0] : {x} to {smem}, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %buf to %y[%row0, %c0] : {smem} to {y}
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}"""


KERNELS = {
    # name: (source, grid)
    "cp_async": (cp_async_kernel, (-(-ROWS // 32),)),
    "threads": (thread_kernel, (ROWS,)),
    "tma": (tma_kernel, (-(-ROWS // 64),)),
}


def padded(values: np.ndarray, pitch: int, start: int) -> np.ndarray:
    """A (ROWS, pitch) array of SENTINEL with `values` at columns start..start + COLS."""
    out = np.full((ROWS, pitch), SENTINEL, np.float32)
    out[:, start : start + COLS] = values
    return out


def padding_untouched(array: np.ndarray, start: int) -> bool:
    """Every element outside columns start..start + COLS is still the sentinel, bit for bit."""
    outside = np.ones(array.shape, bool)
    outside[:, start : start + COLS] = False
    return bool((array.view(np.uint32)[outside] == SENTINEL.view(np.uint32)).all())


def launch(name: str, kind: str, start: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Runs kernel `name` on views (numpy or torch) `start` columns into padded x and y;
    returns the values x had and the padded x and y after the launch, on the host."""
    source, grid = KERNELS[name]
    program = runtime.compile(source())
    values = random((ROWS, COLS), "f32", seed=zlib.crc32(f"{name}{kind}{start}".encode()))
    x_padded = padded(values, X_PITCH, start)
    y_padded = np.full((ROWS, Y_PITCH), SENTINEL, np.float32)
    if kind == "numpy":
        view = slice(start, start + COLS)
        program(x_padded[:, view], y_padded[:, view], grid=grid)
        return values, x_padded, y_padded
    torch = pytest.importorskip("torch")
    x_device = torch.from_numpy(x_padded).cuda()
    y_device = torch.from_numpy(y_padded).cuda()
    view = slice(start, start + COLS)
    program(x_device[:, view], y_device[:, view], grid=grid)
    return values, x_device.cpu().numpy(), y_device.cpu().numpy()


@pytest.mark.parametrize("start", [0, 4], ids=lambda n: f"start{n}")
@pytest.mark.parametrize(
    "kind",
    [
        "numpy",
        pytest.param(
            "torch",
            marks=pytest.mark.skipif(
                not device.GPU, reason="PyTorch views on the device need a GPU"
            ),
        ),
    ],
)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_a_strided_argument_takes_a_view_of_a_padded_array(name, kind, start):
    values, x_padded, y_padded = launch(name, kind, start)
    assert same_bits(y_padded[:, start : start + COLS], values)
    assert padding_untouched(y_padded, start)
    assert same_bits(x_padded, padded(values, X_PITCH, start))  # x only read


def test_a_contiguous_array_is_refused_before_launch():
    """The array the kernel used to run past: contiguous rows of 60, where it addresses rows
    68 elements apart."""
    program = runtime.compile(cp_async_kernel())
    x = np.zeros((ROWS, COLS), np.float32)
    y = np.zeros((ROWS, Y_PITCH), np.float32)[:, :COLS]
    with pytest.raises(ValueError, match=r"with strides \(68, 1\) elements .* got \(60, 1\)"):
        program(x, y, grid=(5,))
