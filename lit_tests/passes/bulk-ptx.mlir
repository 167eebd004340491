// RUN: copy-opt %s -t ptx --target sm_90a | filecheck %s

// Bulk (non-tensor) copies in PTX: `impl bulk` and the lowering's own choice of a bulk copy
// for a plain, unswizzled, in-bounds copy of whole rows. A bulk copy has no tensor map: the
// kernel takes its arrays' pointers only. A multicast bulk load issues this CTA's share
// (half the box at rank * 2048 bytes) to both CTAs of the cluster.

// CHECK-LABEL: .entry bulk_rows(
// CHECK-NOT: .b8
// CHECK: )
// CHECK: mbarrier.arrive.expect_tx.shared.b64 {{.*}}, [[TX:%r[0-9]+]];
// CHECK: cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint [{{%rd[0-9]+}}], [{{%rd[0-9]+}}], [[TX]], [{{%rd[0-9]+}}], {{%rd[0-9]+}};
// CHECK: cp.async.bulk.global.shared::cta.bulk_group [{{%rd[0-9]+}}], [{{%rd[0-9]+}}], [[TX]];
// CHECK: cp.async.bulk.prefetch.L2.global [{{%rd[0-9]+}}], {{%r[0-9]+}};
// CHECK-NOT: cp.async.bulk.tensor
// CHECK: ret;
module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @bulk_rows(%x: memref<64x256xf32>, %y: memref<64x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %false = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %row = arith.muli %bx, %c4 : index
    %buf = copy.alloc_smem : memref<4x256xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row, %c0] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds l2 evict_first : memref<64x256xf32> to memref<4x256xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %buf to %y[%row, %c0] oob promise_in_bounds : memref<4x256xf32, #copy.smem> to memref<64x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    copy.prefetch %x[%row, %c0] impl bulk {box = array<i64: 4, 256>} : memref<64x256xf32>
    func.return
  }

  // CHECK-LABEL: .entry bulk_multicast(
  // CHECK: mov.b32 [[BOX:%r[0-9]+]], 4096;
  // CHECK: mbarrier.arrive.expect_tx.shared.b64 {{.*}}, [[BOX]];
  // CHECK: mov.u32 {{%r[0-9]+}}, %cluster_ctarank;
  // CHECK: mov.b32 [[SHARE:%r[0-9]+]], 2048;
  // CHECK: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{{%rd[0-9]+}}], [{{%rd[0-9]+}}], [[SHARE]], [{{%rd[0-9]+}}], {{%rs[0-9]+}};
  func.func @bulk_multicast(%x: memref<64x256xf32>, %y: memref<64x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<4x256xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds {collective = array<i64: 0>} : memref<64x256xf32> to memref<4x256xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    func.return
  }

  // A copy that may leave the array (oob zeros, the load's default) stays a tensor copy.
  // CHECK-LABEL: .entry tensor_when_oob(
  // CHECK: .param .align 64 .b8
  // CHECK: cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes
  func.func @tensor_when_oob(%x: memref<64x256xf32>, %row: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<4x256xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row, %c0] to %buf barrier %bar[%c0] : memref<64x256xf32> to memref<4x256xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    func.return
  }
}
