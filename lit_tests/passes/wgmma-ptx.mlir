// A warpgroup's m64n128k16 step on the descriptors of a ring slot of A (64x64 f16, K-major)
// and B (128x64 f16, K-major), both 128B-swizzled, and the next 16 of K (the descriptors plus
// 32 bytes >> 4), through the whole pipeline to PTX.

// RUN: copy-opt %s -t ptx | filecheck %s

// CHECK: .target sm_90a
// CHECK: .entry wgmma_step(
// The descriptors: the slots' addresses in 16-byte units, or-ed with the fields.
// CHECK: bfe.u64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, 4, 14;
// CHECK: or.b64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, 4611686293305360384;
// CHECK: wgmma.fence.sync.aligned;
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%r{{[0-9]+}}, %r{{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK-NOT: .extern .func
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @wgmma_step(%out: memref<128x64xf32>, %slot: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %a = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    %b = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
    %da = copy.matrix_descriptor %a[%slot] major k : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
    %db = copy.matrix_descriptor %b[%slot] major k : memref<2x128x64xf16, #copy.smem<swizzle = 128>> -> i64
    %k16 = arith.constant 2 : i64
    %da1 = arith.addi %da, %k16 : i64
    %db1 = arith.addi %db, %k16 : i64
    %zero = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
    nvvm.wgmma.fence.aligned
    %r0 = nvvm.wgmma.mma_async %da, %db, %zero, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
    %r1 = nvvm.wgmma.mma_async %da1, %db1, %r0, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    %e0 = llvm.extractvalue %r1[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
    %c0 = arith.constant 0 : index
    memref.store %e0, %out[%tid, %c0] : memref<128x64xf32>
    %e63 = llvm.extractvalue %r1[63] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
    %c63 = arith.constant 63 : index
    memref.store %e63, %out[%tid, %c63] : memref<128x64xf32>
    func.return
  }
}
