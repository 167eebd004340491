// The cluster kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%x: memref<512x512xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 128>>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {collective = array<i64: 0>} : memref<512x512xf16> to memref<64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.cluster_sync
    func.return
  }
}
