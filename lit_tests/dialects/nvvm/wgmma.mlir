// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// The warpgroup MMA ops of the nvvm dialect (upstream NVVMOps.td's spelling) in their custom
// form, printed back after a trip through the generic form (CHECK), and in the generic form
// (CHECK-GENERIC). lit_tests/passes/wgmma-ptx.mlir checks their PTX.

// CHECK-LABEL: llvm.func @wgmma(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "wgmma"
llvm.func @wgmma(%da: i64, %db: i64, %acc: !llvm.struct<(f32, f32, f32, f32)>, %iacc: !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32)>) {
  // CHECK-NEXT: nvvm.wgmma.fence.aligned
  // CHECK-GENERIC: "nvvm.wgmma.fence.aligned"() : () -> ()
  nvvm.wgmma.fence.aligned
  // CHECK-NEXT: %{{.*}} = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %{{.*}}, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
  // CHECK-GENERIC: "nvvm.wgmma.mma_async"(%{{.*}}, %{{.*}}, %{{.*}}) <{shape = #nvvm.shape<m = 64, n = 8, k = 16>, typeD = #nvvm.wgmma_type<f32>, scaleD = #nvvm.wgmma_scale_out<one>, typeA = #nvvm.wgmma_type<f16>, scaleA = #nvvm.wgmma_scale_in<one>, layoutA = #nvvm.mma_layout<row>, typeB = #nvvm.wgmma_type<f16>, scaleB = #nvvm.wgmma_scale_in<one>, layoutB = #nvvm.mma_layout<col>}>
  %0 = nvvm.wgmma.mma_async %da, %db, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
  // CHECK-NEXT: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %{{.*}}, <m = 64, n = 8, k = 16>, D[<f32>, <zero>], A[<bf16>, <neg>, <col>], B[<bf16>, <neg>, <row>]
  %1 = nvvm.wgmma.mma_async %da, %db, %0, <m = 64, n = 8, k = 16>, D[<f32>, <zero>], A[<bf16>, <neg>, <col>], B[<bf16>, <neg>, <row>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
  // CHECK-NEXT: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %{{.*}}, <m = 64, n = 16, k = 32>, D[<s32>, <one>, <satfinite>], A[<s8>, <one>, <row>], B[<u8>, <one>, <col>]
  // CHECK-GENERIC: satfinite = #nvvm.mma_int_overflow<satfinite>
  %2 = nvvm.wgmma.mma_async %da, %db, %iacc, <m = 64, n = 16, k = 32>, D[<s32>, <one>, <satfinite>], A[<s8>, <one>, <row>], B[<u8>, <one>, <col>] : !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32)> -> !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32)>
  // CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
  // CHECK-GENERIC: "nvvm.wgmma.commit.group.sync.aligned"() : () -> ()
  nvvm.wgmma.commit.group.sync.aligned
  // CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
  // CHECK-GENERIC: "nvvm.wgmma.wait.group.sync.aligned"() <{group = 1 : i64}> : () -> ()
  nvvm.wgmma.wait.group.sync.aligned 1
  llvm.return
}
