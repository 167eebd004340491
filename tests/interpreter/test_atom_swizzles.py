"""sm_100's 128B_ATOM swizzles (`#copy.smem<swizzle = 128, atom = 32 | 64 (, flip)>`) in the
interpreter: where a TMA load puts each byte of a box, against a numpy model written from
cuda.h's words (a 128-byte row's 32- or 64-byte units permuted by the row, odd rows' 8-byte
halves swapped under the flip), and a kernel that loads a tile by TMA, reads it back with
thread loads and stores it by TMA, bit-exact and race-free. No Blackwell GPU is here: the
model is the documentation's, not a measurement (docs/design.md)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, bf16
from xdsl.parser import Parser

import interpreter
from copy_dialect.smem_space import SmemSpaceAttr
from copy_tools.universe import make_context
from interpreter.memory import Smem

MODES = {
    "atom32": (32, False),
    "flip": (32, True),
    "atom64": (64, False),
    "atom16": (16, False),  # the plain 128-byte swizzle, the model's check on itself
}


def model(rows: int, atom: int, flip: bool) -> np.ndarray:
    """The SMEM byte each byte of a box of `rows` 128-byte rows lands at: unit `j` (of `atom`
    bytes) of row `r` at unit `j ^ (r mod (128 / atom))` of the row (16-byte units: the
    8-row period of the 128-byte swizzle), and on odd rows under the flip the two 8-byte
    halves of each 16-byte chunk swapped."""
    r, b = np.divmod(np.arange(rows * 128), 128)
    unit, within = np.divmod(b, atom)
    place = r * 128 + (unit ^ (r % (128 // atom))) * atom + within
    if flip:
        place = np.where(r % 2 == 1, place ^ 8, place)
    return place


@pytest.mark.parametrize("mode", MODES)
def test_tma_places_bytes_as_cuda_h_says(mode: str):
    atom, flip = MODES[mode]
    space = SmemSpaceAttr(128, atom, flip)
    ref = Smem().allocate(MemRefType(bf16, [2, 16, 64], memory_space=space))
    element = ref.slot_offsets((1,), (16, 64)) - ref.base  # slot 1: a box of 16 rows
    places = (element[:, None] + np.arange(2)).reshape(-1)  # each element's 2 bytes
    assert np.array_equal(places, 16 * 128 + model(16, atom, flip))


def kernel(space: str) -> str:
    smem = f"memref<64x64xbf16, {space}>"
    return f"""
builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%src: memref<64x64xbf16>, %out: memref<64x64xbf16>, %back: memref<64x64xbf16>) attributes {{gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>}} {{
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cols = arith.constant 64 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : {smem}
    copy.async_copy %src[%c0, %c0] to %buf barrier %bar[%c0] : memref<64x64xbf16> to {smem}, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    scf.for %j = %c0 to %cols step %c1 {{
      %x = memref.load %buf[%tid, %j] : {smem}
      memref.store %x, %out[%tid, %j] : memref<64x64xbf16>
    }}
    copy.async_copy %buf to %back[%c0, %c0] : {smem} to memref<64x64xbf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}"""  # noqa: E501


@pytest.mark.parametrize("mode", MODES)
def test_load_threads_store_round_trip(mode: str):
    """TMA and the threads agree on every element's place, and the kernel is race-free."""
    atom, flip = MODES[mode]
    space = str(SmemSpaceAttr(128, atom, flip))
    module = Parser(make_context(), kernel(space)).parse_module()
    rng = np.random.default_rng(7)
    src = rng.integers(0, 1 << 16, (64, 64)).astype(np.uint16) & np.uint16(0xBFFF)  # finite
    run = interpreter.run(module, src.copy(), np.zeros_like(src), np.zeros_like(src), grid=(1, 1))
    assert run.violations == [], [str(v) for v in run.violations]
    assert np.array_equal(run.arrays[1], src)
    assert np.array_equal(run.arrays[2], src)
