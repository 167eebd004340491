// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// gpu.shuffle, the upstream op xDSL 0.75's gpu dialect lacks (copy_dialect/upstream_gpu.py),
// in MLIR's syntax and each mode, printed back after a trip through the generic form (CHECK),
// and in the generic form itself (CHECK-GENERIC).

// CHECK-LABEL: func.func @shuffle(
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "shuffle"
func.func @shuffle(%v: f32, %i: i32, %offset: i32, %width: i32) {
  // CHECK-NEXT: %{{.*}}, %{{.*}} = gpu.shuffle xor %{{.*}}, %{{.*}}, %{{.*}} : f32
  // CHECK-GENERIC: %{{.*}}, %{{.*}} = "gpu.shuffle"(%{{.*}}, %{{.*}}, %{{.*}}) <{mode = #gpu<shuffle_mode xor>}> : (f32, i32, i32) -> (f32, i1)
  %0, %1 = gpu.shuffle xor %v, %offset, %width : f32
  // CHECK-NEXT: %{{.*}}, %{{.*}} = gpu.shuffle up %{{.*}}, %{{.*}}, %{{.*}} : i32
  // CHECK-GENERIC-NEXT: %{{.*}}, %{{.*}} = "gpu.shuffle"(%{{.*}}, %{{.*}}, %{{.*}}) <{mode = #gpu<shuffle_mode up>}> : (i32, i32, i32) -> (i32, i1)
  %2, %3 = gpu.shuffle up %i, %offset, %width : i32
  // CHECK-NEXT: %{{.*}}, %{{.*}} = gpu.shuffle down %{{.*}}, %{{.*}}, %{{.*}} : f32
  // CHECK-GENERIC-NEXT: <{mode = #gpu<shuffle_mode down>}>
  %4, %5 = gpu.shuffle down %v, %offset, %width : f32
  // CHECK-NEXT: %{{.*}}, %{{.*}} = gpu.shuffle idx %{{.*}}, %{{.*}}, %{{.*}} : i32
  // CHECK-GENERIC-NEXT: <{mode = #gpu<shuffle_mode idx>}>
  %6, %7 = gpu.shuffle idx %i, %offset, %width : i32
  func.return
}
