// The dsmem kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%peer: index, %n: i32) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %cnt = copy.alloc_smem : memref<128xi32, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.peer_arrive %bars[%c0] peer %peer : !copy.barrier<1>
    copy.peer_store %n, %cnt[%c0] peer %peer, %bars[%c0] : i32, memref<128xi32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bars[%c0], %false : !copy.barrier<1>
    copy.cluster_sync
    func.return
  }
}
