// RUN: copy-opt %s -t ptx --target sm_90a | filecheck %s

// Named L2 cache policies through the whole pipeline: each copy's TMA instruction takes the
// `.L2::cache_hint` form with the policy's 64-bit operand (evict_first 0x12F0000000000000 on
// the load, evict_last 0x14F0000000000000 on the prefetch and the reduction, evict_normal
// 0x1000000000000000 on the store); a copy without a policy takes the plain form.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @policies(%x: memref<4096x4096xf32>, %y: memref<4096x4096xf32>, %z: memref<4096x4096xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %col = arith.muli %bx, %c64 : index
    %row = arith.muli %by, %c64 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.prefetch %z[%row, %col] l2 evict_last {box = array<i64: 64, 64>} : memref<4096x4096xf32>
    copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] l2 evict_first : memref<4096x4096xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%row, %col] reduce add l2 evict_last : memref<64x64xf32, #copy.smem> to memref<4096x4096xf32>
    copy.async_copy %tile to %z[%row, %col] l2 evict_normal : memref<64x64xf32, #copy.smem> to memref<4096x4096xf32>
    copy.async_copy %tile to %y[%row, %col] : memref<64x64xf32, #copy.smem> to memref<4096x4096xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// CHECK-LABEL: .entry policies(
// CHECK:       mov.b64 [[PREFETCH:%rd[0-9]+]], 1508705875169116160;
// CHECK:       cp.async.bulk.prefetch.tensor.2d.L2.global.tile.L2::cache_hint [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [[PREFETCH]];
// CHECK:       mov.b64 [[FIRST:%rd[0-9]+]], 1364590687093260288;
// CHECK:       cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}], [[FIRST]];
// The reduction's policy is the prefetch's: one register holds it.
// CHECK:       cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group.L2::cache_hint [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}], [[PREFETCH]];
// CHECK:       mov.b64 [[NORMAL:%rd[0-9]+]], 1152921504606846976;
// CHECK-NEXT:  cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.L2::cache_hint [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}], [[NORMAL]];
// CHECK:       cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}];
