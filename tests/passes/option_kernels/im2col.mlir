// The im2col kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<2x9x9x16xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %m1 = arith.constant -1 : index
    %t = arith.constant 1 : i16
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    func.return
  }
}
