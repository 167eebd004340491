// RUN: copy-opt %s -t ptx --target sm_90a | filecheck %s
// RUN: copy-opt %s -p convert-copy-to-nvvm | filecheck %s --check-prefix=NVVM

// TMA im2col loads through the whole pipeline: the elected thread arrives on the barrier
// expecting the SMEM box's bytes (pixels x channels x element size) and issues
// cp.async.bulk.tensor.Nd...im2col with the coordinates and the im2col offsets innermost
// first (c, w, h, n and s, r), and the L2 policy's operand where the load has one; the load
// with arrive = false leaves the arrival to the
// kernel's own arrive_expect_tx. Each map is a 128-byte tensor-map parameter.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @im2col(%x3: memref<4x33x16xf32>, %x4: memref<2x9x9x64xf16>, %x5: memref<2x5x7x7x32xbf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %m1 = arith.constant -1 : index
    %r = arith.constant 5 : i16
    %s = arith.constant 7 : i16
    %phase = arith.constant false
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<3>
    %b3 = copy.alloc_smem : memref<64x16xf32, #copy.smem>
    copy.im2col_load %x3[%c1, %m1, %c0] offsets [%r] to %b3 barrier %bars[%c0] {lower = array<i64: -2>, upper = array<i64: 0>} : memref<4x33x16xf32> to memref<64x16xf32, #copy.smem>, !copy.barrier<3>
    %b4 = copy.alloc_smem : memref<128x64xf16, #copy.smem<swizzle = 128>>
    copy.im2col_load %x4[%c1, %m1, %c2, %c8] offsets [%r, %s] to %b4 barrier %bars[%c1] l2 evict_last {lower = array<i64: -1, -1>, upper = array<i64: -2, -2>, strides = array<i64: 2, 2>} : memref<2x9x9x64xf16> to memref<128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<3>
    %b5 = copy.alloc_smem : memref<96x32xbf16, #copy.smem<swizzle = 64>>
    copy.barrier_arrive_expect_tx %bars[%c2], 6144 : !copy.barrier<3>
    copy.im2col_load %x5[%c0, %c0, %m1, %m1, %c0] offsets [%r, %r, %s] to %b5 barrier %bars[%c2] {lower = array<i64: 0, -1, -1>, upper = array<i64: -1, -1, -1>, arrive = false} : memref<2x5x7x7x32xbf16> to memref<96x32xbf16, #copy.smem<swizzle = 64>>, !copy.barrier<3>
    copy.barrier_wait %bars[%c0], %phase : !copy.barrier<3>
    copy.barrier_wait %bars[%c1], %phase : !copy.barrier<3>
    copy.barrier_wait %bars[%c2], %phase : !copy.barrier<3>
    func.return
  }
}

// The kernel ABI records each im2col map (box [pixels, channels], corners, element strides
// (1, strides..., 1)); each load is the NVVM op with its offsets, innermost first.
// NVVM: copy.abi = {{.*}}{kind = "im2col_map", arg = 0 : i64, box = array<i64: 64, 16>, swizzle = 16 : i64, oob = "zeros", dtype = "FLOAT32", written = false, l2_promotion = 128 : i64, lower = array<i64: -2>, upper = array<i64: 0>, element_strides = array<i64: 1, 1, 1>}, {kind = "im2col_map", arg = 1 : i64, box = array<i64: 128, 64>, swizzle = 128 : i64, oob = "zeros", dtype = "FLOAT16", written = false, l2_promotion = 128 : i64, lower = array<i64: -1, -1>, upper = array<i64: -2, -2>, element_strides = array<i64: 1, 2, 2, 1>}, {kind = "im2col_map", arg = 2 : i64, box = array<i64: 96, 32>, swizzle = 64 : i64, oob = "zeros", dtype = "BFLOAT16", written = false, l2_promotion = 128 : i64, lower = array<i64: 0, -1, -1>, upper = array<i64: -1, -1, -1>, element_strides = array<i64: 1, 1, 1, 1, 1>}]
// NVVM: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] im2col[%r] {cta_destination} : !llvm.ptr<3>, !llvm.ptr
// NVVM: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] im2col[%s, %r] l2_cache_hint = %{{.*}} {cta_destination} : !llvm.ptr<3>, !llvm.ptr
// NVVM: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] im2col[%s, %r, %r] {cta_destination} : !llvm.ptr<3>, !llvm.ptr

// CHECK-LABEL: .entry im2col(
// CHECK:       .param .align 64 .b8 im2col_param_3[128],
// CHECK:       .param .align 64 .b8 im2col_param_4[128],
// CHECK:       .param .align 64 .b8 im2col_param_5[128]
// CHECK:       mov.b32 [[BYTES3:%r[0-9]+]], 4096;
// CHECK:       mbarrier.arrive.expect_tx.shared.b64 {{%rd[0-9]+}}, [{{%rd[0-9]+}}], [[BYTES3]];
// CHECK:       mov.b16 [[R:%rs[0-9]+]], 5;
// CHECK:       mov.b32 [[ONE:%r[0-9]+]], 1;
// CHECK:       mov.b32 [[MINUS:%r[0-9]+]], -1;
// CHECK:       mov.b32 [[ZERO:%r[0-9]+]], 0;
// (c, w, n) = (0, -1, 1) and the offset r.
// CHECK-NEXT:  cp.async.bulk.tensor.3d.shared::cta.global.im2col.mbarrier::complete_tx::bytes [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {[[ZERO]], [[MINUS]], [[ONE]]}], [{{%rd[0-9]+}}], {[[R]]};
// CHECK:       mov.b32 [[BYTES4:%r[0-9]+]], 16384;
// CHECK:       mbarrier.arrive.expect_tx.shared.b64 {{%rd[0-9]+}}, [{{%rd[0-9]+}}], [[BYTES4]];
// The second load's L2 policy (evict_last, 0x14F0000000000000) is its .L2::cache_hint operand.
// CHECK:       mov.b64 [[LAST:%rd[0-9]+]], 1508705875169116160;
// CHECK:       mov.b16 [[S:%rs[0-9]+]], 7;
// CHECK:       mov.b32 [[TWO:%r[0-9]+]], 2;
// CHECK:       mov.b32 [[EIGHT:%r[0-9]+]], 8;
// (c, w, h, n) = (8, 2, -1, 1) and the offsets (s, r).
// CHECK:       cp.async.bulk.tensor.4d.shared::cta.global.im2col.mbarrier::complete_tx::bytes.L2::cache_hint [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {[[EIGHT]], [[TWO]], [[MINUS]], [[ONE]]}], [{{%rd[0-9]+}}], {[[S]], [[R]]}, [[LAST]];
// The arrive = false load: the kernel's arrive_expect_tx of 6144 bytes, none of its own.
// CHECK:       mov.b32 [[BYTES5:%r[0-9]+]], 6144;
// CHECK:       mbarrier.arrive.expect_tx.shared.b64 {{%rd[0-9]+}}, [{{%rd[0-9]+}}], [[BYTES5]];
// CHECK-NOT:   mbarrier.arrive.expect_tx
// CHECK:       mov.b16 [[R5:%rs[0-9]+]], 5;
// CHECK:       mov.b16 [[S5:%rs[0-9]+]], 7;
// CHECK-NOT:   mbarrier.arrive.expect_tx
// CHECK:       cp.async.bulk.tensor.5d.shared::cta.global.im2col.mbarrier::complete_tx::bytes [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}], {[[S5]], [[R5]], [[R5]]};
// CHECK:       mbarrier.try_wait.parity
