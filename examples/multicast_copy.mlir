// A multicast TMA load across a cluster of 2: the pair of CTAs shares one 64x64 f32 tile of
// x (viewed as 128 x 32 x 4096: two 32-row halves per tile row). Each CTA issues half of the
// load with .multicast::cluster, so both CTAs receive the whole tile, then each stores the
// half picked by its rank in the cluster.
// Launch: grid (2 * 4096 / 64, 4096 / 64), cluster (2, 1, 1), 128 threads per block.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @multicast_copy(%x: memref<128x32x4096xf32>, %y: memref<128x32x4096xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %pair = arith.divui %bx, %c2 : index
    %col = arith.muli %pair, %c64 : index
    %half = arith.muli %by, %c2 : index
    %tile = copy.alloc_smem : memref<2x32x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%half, %c0, %col] to %tile barrier %bar[%c0] {collective = array<i64: 0>} : memref<128x32x4096xf32> to memref<2x32x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    %mine = arith.addi %half, %rank : index
    copy.async_copy %tile[%rank] to %y[%mine, %c0, %col] : memref<2x32x64xf32, #copy.smem> to memref<128x32x4096xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
