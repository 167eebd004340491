// RUN: copy-opt %s -t ptx --target sm_100a | filecheck %s
// RUN: copy-opt %s -p convert-copy-to-nvvm | filecheck %s --check-prefix=NVVM

// TMA gather4, scatter4 and the gather4 prefetch through the whole pipeline. Each array gets
// one tiled tensor map whose box is one row of the tile ([1, W]), shared by the ops that
// read or write it. The elected thread prefetches four rows into L2 (with the evict_last
// policy's operand), arrives on the slot's barrier expecting the 4-row tile's bytes (4 x 64
// bf16 = 512, 4 x 32 f32 = 512) and issues the gather4 into this CTA's own SMEM
// (.shared::cta) with the coordinates {col, row0, row1, row2, row3}; the tile goes back to
// four rows in the bulk group.

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @gather4(%x: memref<1024x256xbf16>, %y: memref<64x64xf32>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %tiles = copy.alloc_smem : memref<2x4x64xbf16, #copy.smem>
    %ftile = copy.alloc_smem : memref<4x32xf32, #copy.smem<swizzle = 128>>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    copy.gather4_prefetch %x rows [%r0, %r1, %r2, %r3] column [%c64] l2 evict_last {width = 64} : memref<1024x256xbf16>
    copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tiles[%c1] barrier %bars[%c1] : memref<1024x256xbf16> to memref<2x4x64xbf16, #copy.smem>, !copy.barrier<2>
    copy.gather4 %y rows [%c5, %c0, %c1, %c5] column [%c0] to %ftile barrier %bars[%c0] l2 evict_first : memref<64x64xf32> to memref<4x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<2>
    copy.barrier_wait %bars[%c1], %phase : !copy.barrier<2>
    copy.barrier_wait %bars[%c0], %phase : !copy.barrier<2>
    copy.scatter4 %tiles[%c1] to %x rows [%r3, %r2, %r1, %r0] column [%c0] : memref<2x4x64xbf16, #copy.smem> to memref<1024x256xbf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// CHECK-LABEL: .entry gather4(
// CHECK: .param .align 64 .b8 gather4_param_6[128],
// CHECK: .param .align 64 .b8 gather4_param_7[128]
// CHECK: cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4.L2::cache_hint [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], %rd{{[0-9]+}};
// CHECK: mov.b32 [[BYTES:%r[0-9]+]], 512;
// CHECK: mbarrier.arrive.expect_tx.shared.b64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}], [[BYTES]];
// CHECK: cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes [%rd{{[0-9]+}}+512], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], [%rd{{[0-9]+}}];
// CHECK: mbarrier.arrive.expect_tx.shared.b64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}], [[BYTES]];
// The constant rows and column of the f32 gather: {0, 5, 0, 1, 5}.
// CHECK: mov.b32 [[FIVE:%r[0-9]+]], 5;
// CHECK: cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes.L2::cache_hint [%rd{{[0-9]+}}], [%rd{{[0-9]+}}, {[[ZERO:%r[0-9]+]], [[FIVE]], [[ZERO]], %r{{[0-9]+}}, [[FIVE]]}], [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], [%rd{{[0-9]+}}+512];
// CHECK: cp.async.bulk.commit_group;

// The kernel ABI records one map per array, its box one row; the bf16 map is written
// through (the scatter4). Each op is upstream NVVM's, with its mode.
// NVVM: kind = "tensor_map", arg = 0 : i64, box = array<i64: 1, 64>, swizzle = 16 : i64, oob = "zeros", dtype = "BFLOAT16", written = true, l2_promotion = 128 : i64}
// NVVM-SAME: kind = "tensor_map", arg = 1 : i64, box = array<i64: 1, 32>, swizzle = 128 : i64, oob = "zeros", dtype = "FLOAT32", written = false, l2_promotion = 128 : i64}
// NVVM: nvvm.cp.async.bulk.tensor.prefetch %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] l2_cache_hint = %{{.*}} {mode = #nvvm.tma_load_mode<tile_gather4>} : !llvm.ptr
// NVVM: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {cta_destination, mode = #nvvm.tma_load_mode<tile_gather4>} : !llvm.ptr<3>, !llvm.ptr
// NVVM: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] l2_cache_hint = %{{.*}} {cta_destination, mode = #nvvm.tma_load_mode<tile_gather4>} : !llvm.ptr<3>, !llvm.ptr
// NVVM: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {mode = #nvvm.tma_store_mode<tile_scatter4>} : !llvm.ptr, !llvm.ptr<3>, i32, i32, i32, i32, i32
