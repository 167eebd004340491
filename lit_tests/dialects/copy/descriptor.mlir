// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// copy.matrix_descriptor: each form (major k or mn, each swizzle, the tile's ranks) in its
// custom syntax, printed back after a trip through the generic form (CHECK), and the generic
// form itself (CHECK-GENERIC). lit_tests/passes/descriptor-ptx.mlir checks the fields.

// CHECK-LABEL: func.func @descriptors
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "descriptors"
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @descriptors(%slot: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %a = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
    %b = copy.alloc_smem : memref<2x2x64x32xbf16, #copy.smem<swizzle = 64>>
    %c = copy.alloc_smem : memref<2x64x32xf8E4M3FN, #copy.smem<swizzle = 32>>
    %u = copy.alloc_smem : memref<2x64x4xf32, #copy.smem>
    %v = copy.alloc_smem : memref<2x4x16x8xf16, #copy.smem>
    // CHECK: %{{.*}} = copy.matrix_descriptor %{{.*}}[%{{.*}}] major k : memref<2x128x64xf16, #copy.smem<swizzle = 128>> -> i64
    // CHECK-GENERIC: "copy.matrix_descriptor"(%{{.*}}, %{{.*}}) <{major = #copy<matrix_major k>}> : (memref<2x128x64xf16, #copy.smem<swizzle = 128>>, index) -> i64
    %da = copy.matrix_descriptor %a[%slot] major k : memref<2x128x64xf16, #copy.smem<swizzle = 128>> -> i64
    // CHECK-NEXT: copy.matrix_descriptor %{{.*}}[%{{.*}}] major mn : memref<2x2x64x32xbf16, #copy.smem<swizzle = 64>> -> i64
    %db = copy.matrix_descriptor %b[%slot] major mn : memref<2x2x64x32xbf16, #copy.smem<swizzle = 64>> -> i64
    // CHECK-NEXT: copy.matrix_descriptor %{{.*}}[%{{.*}}] major k : memref<2x64x32xf8E4M3FN, #copy.smem<swizzle = 32>> -> i64
    %dc = copy.matrix_descriptor %c[%slot] major k : memref<2x64x32xf8E4M3FN, #copy.smem<swizzle = 32>> -> i64
    // CHECK-NEXT: copy.matrix_descriptor %{{.*}}[] major k : memref<2x64x4xf32, #copy.smem> -> i64
    %du = copy.matrix_descriptor %u[] major k : memref<2x64x4xf32, #copy.smem> -> i64
    // CHECK-NEXT: copy.matrix_descriptor %{{.*}}[%{{.*}}] major mn : memref<2x4x16x8xf16, #copy.smem> -> i64
    %dv = copy.matrix_descriptor %v[%slot] major mn : memref<2x4x16x8xf16, #copy.smem> -> i64
    // CHECK-NEXT: copy.matrix_descriptor %{{.*}}[%{{.*}}] major mn tcgen05 : memref<2x64x32xf8E4M3FN, #copy.smem<swizzle = 32>> -> i64
    // CHECK-GENERIC: "copy.matrix_descriptor"(%{{.*}}, %{{.*}}) <{major = #copy<matrix_major mn>, tcgen05}>
    %dt = copy.matrix_descriptor %c[%slot] major mn tcgen05 : memref<2x64x32xf8E4M3FN, #copy.smem<swizzle = 32>> -> i64
    func.return
  }
}
