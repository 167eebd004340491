// The gather4 kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%x: memref<1024x256xf32>, %y: memref<1024x256xf32>, %w: memref<1024x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %false = arith.constant false
    %tile = copy.alloc_smem : memref<4x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.gather4 %x rows [%c0, %c1, %c2, %c3] column [%c0] to %tile barrier %bar[%c0] : memref<1024x256xf32> to memref<4x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.scatter4 %tile to %y rows [%c3, %c2, %c1, %c0] column [%c0] : memref<4x64xf32, #copy.smem> to memref<1024x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    copy.gather4_prefetch %w rows [%c0, %c1, %c2, %c3] column [%c0] {width = 64} : memref<1024x256xf32>
    func.return
  }
}
