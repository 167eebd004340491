// The mbarriers kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%p: i1) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %bars = copy.barrier_init arrivals 4 : !copy.barrier<2>
    copy.barrier_arrive %bars[%c0] : !copy.barrier<2>
    copy.barrier_arrive_drop %bars[%c0] : !copy.barrier<2>
    copy.barrier_arrive_expect_tx %bars[%c0], 256 : !copy.barrier<2>
    copy.barrier_expect_tx %bars[%c0], 512 : !copy.barrier<2>
    copy.barrier_complete_tx %bars[%c0], 64 : !copy.barrier<2>
    copy.barrier_wait %bars[%c0], %false : !copy.barrier<2>
    %done = copy.barrier_test %bars[%c0], %false : !copy.barrier<2>
    copy.barrier_inval %bars : !copy.barrier<2>
    copy.barrier_reinit %bars arrivals 2 : !copy.barrier<2>
    copy.named_barrier_sync 1, 128
    copy.named_barrier_arrive 2, 128
    copy.fence_async_shared
    copy.cluster_sync
    func.return
  }
}
