// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// The TMA load, store and prefetch in upstream NVVM's gather4/scatter4 modes (`mode =
// #nvvm.tma_load_mode<tile_gather4>`, `#nvvm.tma_store_mode<tile_scatter4>`), printed back
// after a trip through the generic form (CHECK), and the generic form (CHECK-GENERIC).

// CHECK-LABEL: llvm.func @gather4_modes(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "gather4_modes"
llvm.func @gather4_modes(%tmap: !llvm.ptr, %smem: !llvm.ptr<3>, %bar: !llvm.ptr<3>, %c: i32, %r0: i32, %r1: i32, %r2: i32, %r3: i32, %hint: i64) {
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {cta_destination, mode = #nvvm.tma_load_mode<tile_gather4>} : !llvm.ptr<3>, !llvm.ptr
  // CHECK-GENERIC: "nvvm.cp.async.bulk.tensor.shared.cluster.global"({{.*}}) <{cta_destination, mode = #nvvm.tma_load_mode<tile_gather4>, operandSegmentSizes = array<i32: 1, 1, 5, 1, 0, 0, 0, 0>}>
  nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmap, %bar, box[%c, %r0, %r1, %r2, %r3] {cta_destination, mode = #nvvm.tma_load_mode<tile_gather4>} : !llvm.ptr<3>, !llvm.ptr
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] l2_cache_hint = %{{.*}} {mode = #nvvm.tma_store_mode<tile_scatter4>} : !llvm.ptr, !llvm.ptr<3>, i32, i32, i32, i32, i32, i64
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.tensor.global.shared.cta"({{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 5, 1, 0>, mode = #nvvm.tma_store_mode<tile_scatter4>}>
  nvvm.cp.async.bulk.tensor.global.shared.cta %tmap, %smem, box[%c, %r0, %r1, %r2, %r3] l2_cache_hint = %hint {mode = #nvvm.tma_store_mode<tile_scatter4>} : !llvm.ptr, !llvm.ptr<3>, i32, i32, i32, i32, i32, i64
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.prefetch %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {mode = #nvvm.tma_load_mode<tile_gather4>} : !llvm.ptr
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.tensor.prefetch"({{.*}}) <{mode = #nvvm.tma_load_mode<tile_gather4>, operandSegmentSizes = array<i32: 1, 5, 0, 0>}>
  nvvm.cp.async.bulk.tensor.prefetch %tmap, box[%c, %r0, %r1, %r2, %r3] {mode = #nvvm.tma_load_mode<tile_gather4>} : !llvm.ptr
  llvm.return
}
