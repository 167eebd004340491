// The cluster launch control kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%out: memref<256xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %resp = copy.alloc_smem : memref<1x16xi8, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %bar[%c0], 16 : !copy.barrier<1>
    copy.try_cancel %resp[%c0] barrier %bar[%c0] : memref<1x16xi8, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    %ok, %x, %y, %z = copy.query_cancel %resp[%c0] : memref<1x16xi8, #copy.smem>
    %t = gpu.thread_id x
    memref.store %x, %out[%t] : memref<256xi32>
    func.return
  }
}
