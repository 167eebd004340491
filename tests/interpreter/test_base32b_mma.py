"""tcgen05.mma reading a 32-byte-atom operand (`#copy.smem<swizzle = 128, atom = 32>`, the
descriptor's layout type 1, SWIZZLE_128B_BASE32B) in the interpreter: the kind::tf32 kernel of
lit_tests/passes/tcgen05-mma-ptx.mlir (B MN-major, A in TMEM, D scaled, lanes 0-31 left out)
with B's buffer in that swizzle, filled by the threads through the dialect's layout and read
by the MMA through the descriptor's decode (interpreter.mma: CUTLASS's canonical
((8,n),(4,k)):((1,LBO),(4,SBO)) under Swizzle<2,5,2>), bit-exact against the numpy model of
test_tcgen05_mma. The two sides agree only where the descriptor's SBO and the decode's swizzle
are the layout's. No Blackwell GPU is here: not run on one."""

from __future__ import annotations

import numpy as np

from tests.interpreter.test_tcgen05_mma import (
    A_ROWS_AND_D_INIT,
    CHUNKS,
    filled,
    k_order,
    operand,
    run,
)

SPACE = "#copy.smem<swizzle = 128, atom = 32>"


def test_the_tf32_kernel_with_a_32_byte_atom_b_is_bit_exact():
    rng = np.random.default_rng(1)
    gb = rng.standard_normal((2 * 2 * 32, 32)).astype(np.float32)
    ga = rng.standard_normal((128, 8)).astype(np.float32)
    fill_b = ("b", "gb", (2, 2, 32, 32), f"memref<2x2x32x32xf32, {SPACE}>", "f32")
    extra = A_ROWS_AND_D_INIT
    chunk = CHUNKS[1].replace("#copy.smem<swizzle = 128>>", f"{SPACE}>")
    assert SPACE in chunk
    text = filled(chunk, [fill_b], extra).replace(
        "%slot: index, %gb: memref<128x32xf32>, %lanes: vector<4xi32>",
        "%slot: index, %lanes: vector<4xi32>, %ga: memref<128x8xf32>, %gb: memref<128x32xf32>",
    )
    lanes = np.array([-1, 0, 0, 0], np.int32)  # lanes 0-31 keep D
    result = run(text, np.zeros((128, 8), np.float32), 1, lanes, ga, gb)
    assert result.violations == [], [str(v) for v in result.violations]
    tf32 = np.uint32(0xFFFFE000)
    a = (ga.view(np.uint32) & tf32).view(np.float32)
    b = operand(gb, (2, 2, 32, 32), 1, False, 128, 32, 64, 8)
    b = (b.view(np.uint32) & tf32).view(np.float32)
    d = k_order(a, b, np.full((128, 64), 3.0 * 0.5, np.float32))
    d[:32] = 0
    d[:32, :8] = 3.0
    assert np.array_equal(result.arrays[0], d[:, :8])
