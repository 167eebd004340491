// The tensormap kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<?x?xf32>, %rows: i32, %pitch: i64) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %m = copy.tensormap_global %x slot %c0 of 4 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    copy.tensormap_replace %m global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32
    copy.tensormap_fence_release %m : !copy.tensormap<8x64xf32>
    copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32>
    func.return
  }
}
