// RUN: copy-opt %s -t ptx --target sm_90a | filecheck %s
// RUN: copy-opt %s --target sm_90a -p convert-copy-to-nvvm | filecheck %s --check-prefix=ABI

// L2 cache policies made in the kernel (issue I, item 3): a fraction-based policy and
// evict_unchanged have no documented 64-bit encoding, so each distinct policy is made once
// at the kernel's entry by `createpolicy.fractional` and its register is the cache-hint
// operand of every TMA instruction that uses it (the two loads share one). The fraction is
// an exact f32 literal (0.5 = 0f3F000000); the default secondary priority
// (evict_unchanged) is left out. The tensor map's L2 promotion is not in the PTX but in the
// ABI (ABI): the loads of %x with a 256-byte and a 64-byte promotion get two maps.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @fractional(%x: memref<4096x4096xf32>, %y: memref<4096x4096xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %col = arith.muli %bx, %c64 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.prefetch %y[%c0, %col] l2 evict_last fraction 0.5 {box = array<i64: 64, 64>} : memref<4096x4096xf32>
    copy.async_copy %x[%c0, %col] to %tile barrier %bar[%c0] l2 evict_first fraction 0.5 secondary evict_unchanged {l2_promotion = 256 : i64} : memref<4096x4096xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    %true = arith.constant true
    copy.async_copy %x[%c64, %col] to %tile barrier %bar[%c0] l2 evict_first fraction 0.5 {l2_promotion = 64 : i64} : memref<4096x4096xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
    copy.async_copy %tile to %y[%c0, %col] reduce add l2 evict_unchanged : memref<64x64xf32, #copy.smem> to memref<4096x4096xf32>
    copy.async_copy %tile to %y[%c64, %col] l2 evict_last fraction 0.75 secondary evict_first : memref<64x64xf32, #copy.smem> to memref<4096x4096xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }

  // Bulk (non-tensor) copies and prefetches take made policies too; no tensor map, so no
  // tensor-map prefetch.
  func.func @bulk_made(%x: memref<64x256xf32>, %y: memref<64x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %buf = copy.alloc_smem : memref<4x256xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.prefetch %y[%c0, %c0] impl bulk l2 evict_last fraction 0.5 {box = array<i64: 4, 256>} : memref<64x256xf32>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] oob promise_in_bounds l2 evict_unchanged : memref<64x256xf32> to memref<4x256xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %buf to %y[%c0, %c0] oob promise_in_bounds l2 evict_last fraction 0.5 : memref<4x256xf32, #copy.smem> to memref<64x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// CHECK-LABEL: .entry fractional(
// CHECK:       createpolicy.fractional.L2::evict_last.b64 [[LAST:%rd[0-9]+]], 0f3F000000;
// CHECK:       createpolicy.fractional.L2::evict_first.b64 [[FIRST:%rd[0-9]+]], 0f3F000000;
// CHECK:       createpolicy.fractional.L2::evict_unchanged.b64 [[UNCHANGED:%rd[0-9]+]], 0f3F800000;
// CHECK:       createpolicy.fractional.L2::evict_last.L2::evict_first.b64 [[SPLIT:%rd[0-9]+]], 0f3F400000;
// CHECK-NOT:   createpolicy
// CHECK:       cp.async.bulk.prefetch.tensor.2d.L2.global.tile.L2::cache_hint [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [[LAST]];
// CHECK:       cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}], [[FIRST]];
// CHECK:       cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}], [[FIRST]];
// CHECK:       cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group.L2::cache_hint [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}], [[UNCHANGED]];
// CHECK:       cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.L2::cache_hint [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}], [[SPLIT]];
// CHECK-NOT:   createpolicy

// CHECK-LABEL: .entry bulk_made(
// CHECK-NOT:   prefetch.param.tensormap
// CHECK:       createpolicy.fractional.L2::evict_last.b64 [[BLAST:%rd[0-9]+]], 0f3F000000;
// CHECK:       createpolicy.fractional.L2::evict_unchanged.b64 [[BUNCHANGED:%rd[0-9]+]], 0f3F800000;
// CHECK-NOT:   createpolicy
// CHECK:       cp.async.bulk.prefetch.L2.global.L2::cache_hint [{{%rd[0-9]+}}], {{%r[0-9]+}}, [[BLAST]];
// CHECK:       cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint [{{%rd[0-9]+}}], [{{%rd[0-9]+}}], {{%r[0-9]+}}, [{{%rd[0-9]+}}], [[BUNCHANGED]];
// CHECK:       cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [{{%rd[0-9]+}}], [{{%rd[0-9]+}}], {{%r[0-9]+}}, [[BLAST]];
// CHECK-NOT:   createpolicy

// One map of %y (arg 1, the default 128 B), which the prefetch reads and the reduction and
// the store write through; the loads' two maps of %x (arg 0, 256 B and 64 B).
// ABI:         {kind = "tensor_map", arg = 1 : i64, {{[^}]*}}, written = true, l2_promotion = 128 : i64}
// ABI-SAME:    {kind = "tensor_map", arg = 0 : i64, {{[^}]*}}, written = false, l2_promotion = 256 : i64}
// ABI-SAME:    {kind = "tensor_map", arg = 0 : i64, {{[^}]*}}, written = false, l2_promotion = 64 : i64}
// ABI-NOT:     kind = "tensor_map"
