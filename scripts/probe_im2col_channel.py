"""On a GPU: does a TMA im2col load whose channel coordinate is not a multiple of 16 bytes
run (rule IC13)? An f16 NHWC tensor, its first 16 pixels' 8 channels from channel c, for
several c, each in its own process (a fault kills the context); `probe_im2col_channel.py C
guards` runs one with --debug-guards, whose IC13 guard traps first.

On an H100 (2026-12-05): c = 0, 8, 16 (0, 16, 32 bytes) ran and read x[..., c:c+8]; c = 1,
2, 3, 4, 6 (2 to 12 bytes) gave CUDA_ERROR_ILLEGAL_INSTRUCTION; with the guards, c = 3
printed "copy-dialect guard IC13: ... got 3 (6 bytes)" and the launch failed."""

import subprocess
import sys

import numpy as np

KERNEL = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @probe(%x: memref<1x4x4x32xf16>, %y: memref<16x8xf16>, %c: index)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %t = arith.constant 0 : i16
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<16x8xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.im2col_load %x[%c0, %c0, %c0, %c] offsets [%t, %t] to %buf barrier %bar[%c0]
        {lower = array<i64: 0, 0>, upper = array<i64: 0, 0>}
        : memref<1x4x4x32xf16> to memref<16x8xf16, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %buf to %y[%c0, %c0] : memref<16x8xf16, #copy.smem> to memref<16x8xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
"""


def one(c: int, guards: bool = False) -> None:
    from copy_tools import runtime

    program = runtime.compile(KERNEL, debug_guards=guards)
    x = np.arange(16 * 32, dtype=np.float16).reshape(1, 4, 4, 32)
    y = np.full((16, 8), -7, np.float16)
    program(x, y, c, grid=(1, 1, 1))
    want = x.reshape(16, 32)[:, c : c + 8]
    same = np.array_equal(y, want)
    print(f"c={c} ({2 * c} bytes): ran; y == x[..., c:c+8]: {same}; y[0] = {y[0].tolist()}")


if __name__ == "__main__":
    if len(sys.argv) > 2:
        one(int(sys.argv[1]), guards=True)
    elif len(sys.argv) > 1:
        one(int(sys.argv[1]))
    else:
        for c in (0, 8, 3, 4, 1, 2, 6, 16):
            r = subprocess.run(
                [sys.executable, __file__, str(c)], capture_output=True, text=True, timeout=60
            )
            tail = (r.stdout + r.stderr).strip().splitlines()
            print(f"c={c}: rc={r.returncode}: {tail[-1][:200] if tail else ''}")
