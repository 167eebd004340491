// The descriptor kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%out: memref<1xi64>, %slot: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %b = copy.alloc_smem : memref<2x64x64xbf16, #copy.smem<swizzle = 128>>
    %d = copy.matrix_descriptor %b[%slot] major k : memref<2x64x64xbf16, #copy.smem<swizzle = 128>> -> i64
    memref.store %d, %out[%c0] : memref<1xi64>
    func.return
  }
}
