// The cp_async kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<1000x256xf16>, %i: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<32x256xf16, #copy.smem>
    copy.async_copy %x[%i, %c0] to %buf impl cp_async oob promise_in_bounds : memref<1000x256xf16> to memref<32x256xf16, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}
