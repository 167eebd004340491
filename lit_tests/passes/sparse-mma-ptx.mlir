// RUN: copy-opt %s -t ptx | filecheck %s

// A structured-sparse MMA (tcgen05.mma.sp, kind::f16 2:4) through the whole pipeline to PTX:
// D (128 x 64, f32) = A (128 x 128, half of each row's elements kept) x B^T (64 x 128), as
// Mosaic GPU issues it. The kept elements of A (128 x 64 f16: one 128-byte swizzle atom a
// row), B (two 64-element atoms of K a row) and the metadata (128 rows of 64 i2 values: two
// 2-bit indices per 4 elements of K, in Mosaic GPU's layout) arrive on one barrier (TMA
// loads and a bulk copy); the metadata are copied into TMEM (tcgen05.cp 128x128b: 4 columns,
// 32 elements of K a column); thread 0 issues four MMAs of 32 elements of K, the first
// overwriting D, A's descriptor 32 bytes further each time and B's 64, the metadata column
// being the pointer's plus the instruction descriptor's selector (0, 1; then the pointer 2
// columns on: the slice at element 32), commits them to an mbarrier every thread waits on,
// and each thread stores its row of D. tests/interpreter/test_sparse_mma.py runs it under
// the interpreter against numpy and links it for every target with tcgen05 (never run on a
// GPU: the project's is an H200).

// CHECK: .target sm_100a
// CHECK: .entry sparse_mma(
// The instruction descriptors: selector 0 or 1, sparse (1 << 2), D f32 (1 << 4), N 64
// (8 << 17), M 128 (8 << 24).
// CHECK: tcgen05.cp.cta_group::1.128x128b
// CHECK: mov.b32 [[SEL0:%r[0-9]+]], 135266324;
// CHECK: tcgen05.mma.sp.cta_group::1.kind::f16.collector::a::discard [%r{{[0-9]+}}], %rd{{[0-9]+}}, %rd{{[0-9]+}}, [%r{{[0-9]+}}], [[SEL0]], %p{{[0-9]+}};
// CHECK: mov.b32 [[SEL1:%r[0-9]+]], 135266325;
// CHECK: tcgen05.mma.sp.cta_group::1.kind::f16.collector::a::discard [%r{{[0-9]+}}], %rd{{[0-9]+}}, %rd{{[0-9]+}}, [%r{{[0-9]+}}], [[SEL1]], %p{{[0-9]+}};
// CHECK: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// CHECK: tcgen05.ld.sync.aligned.32x32b.x64.b32
// CHECK-NOT: .extern .func
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @sparse_mma(%ga: memref<128x64xf16>, %gb: memref<64x128xf16>, %gm: memref<128x64xi2>, %out: memref<128x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %true = arith.constant true
    %leader = arith.cmpi eq, %tid, %c0 : index
    %acc = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
    %meta = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
    %meta2 = copy.tmem_slice %meta[32] : memref<128x512xi2, #copy.tmem> -> memref<128x480xi2, #copy.tmem>
    %a = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %b = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    %m = copy.alloc_smem : memref<128x64xi2, #copy.smem>
    %full = copy.barrier_init arrivals 4 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %d = builtin.unrealized_conversion_cast %acc : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %mp0 = builtin.unrealized_conversion_cast %meta : memref<128x512xi2, #copy.tmem> to !llvm.ptr<6>
    %mp2 = builtin.unrealized_conversion_cast %meta2 : memref<128x480xi2, #copy.tmem> to !llvm.ptr<6>
    %idesc0 = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 sparse selector 0 : i32
    %idesc1 = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 sparse selector 1 : i32
    scf.if %leader {
      copy.async_copy %ga[%c0, %c0] to %a[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %gb[%c0, %c0] to %b[%c0] barrier %full[%c0] : memref<64x128xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %gb[%c0, %c64] to %b[%c1] barrier %full[%c0] : memref<64x128xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %gm[%c0, %c0] to %m barrier %full[%c0] impl bulk oob promise_in_bounds : memref<128x64xi2> to memref<128x64xi2, #copy.smem>, !copy.barrier<1>
    }
    copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
    copy.smem_to_tmem %m to %meta[%c0] shape shape_128x128b metadata : memref<128x64xi2, #copy.smem>, memref<128x512xi2, #copy.tmem>
    %da = copy.matrix_descriptor %a[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
    %db0 = copy.matrix_descriptor %b[%c0] major k tcgen05 : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
    %db1 = copy.matrix_descriptor %b[%c1] major k tcgen05 : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
    scf.if %leader {
      %q2 = arith.constant 2 : i64
      %q4 = arith.constant 4 : i64
      %q6 = arith.constant 6 : i64
      nvvm.tcgen05.mma.sp %d, %da, %db0, %idesc0, %false, %mp0 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
      %da2 = arith.addi %da, %q2 : i64
      %db04 = arith.addi %db0, %q4 : i64
      nvvm.tcgen05.mma.sp %d, %da2, %db04, %idesc1, %true, %mp0 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
      %da4 = arith.addi %da, %q4 : i64
      nvvm.tcgen05.mma.sp %d, %da4, %db1, %idesc0, %true, %mp2 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
      %da6 = arith.addi %da, %q6 : i64
      %db14 = arith.addi %db1, %q4 : i64
      nvvm.tcgen05.mma.sp %d, %da6, %db14, %idesc1, %true, %mp2 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
      nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
    }
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    nvvm.tcgen05.fence <after>
    %v = copy.tmem_load %acc[%c0] shape shape_32x32b num 64 : memref<128x64xf32, #copy.tmem> -> vector<64xf32>
    copy.tmem_wait load
    vector.store %v, %out[%tid, %c0] : memref<128x64xf32>, vector<64xf32>
    copy.tmem_dealloc %meta : memref<128x512xi2, #copy.tmem>
    copy.tmem_dealloc %acc : memref<128x64xf32, #copy.tmem>
    func.return
  }
}
