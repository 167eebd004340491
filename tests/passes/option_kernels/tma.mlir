// The tma kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<4096x4096xf32>, %y: memref<4096x4096xf32>, %w: memref<4096x4096xf32>, %z: memref<64x256xf32>, %n: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %pad = copy.alloc_smem : memref<4xf32, #copy.smem>
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.assume %n ge 1 : index
    copy.prefetch %w[%c0, %c0] {box = array<i64: 64, 64>} : memref<4096x4096xf32>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<4096x4096xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<4096x4096xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
