// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// `copy.tmem_slice`: a view of a constant column range of a TMEM ref (lanes and element type
// kept), which loads, stores, copies and shifts take as they take an allocation.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  // CHECK-LABEL: func.func @tmem_slice(
  func.func @tmem_slice(%col: index) {
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    // CHECK: %[[H:.*]] = copy.tmem_slice %{{.*}}[64] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    // CHECK-GENERIC: "copy.tmem_slice"(%{{.*}}) <{column = 64 : i64}> : (memref<128x128xf32, #copy.tmem>) -> memref<128x64xf32, #copy.tmem>
    %h = copy.tmem_slice %acc[64] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    // CHECK: copy.tmem_load %[[H]][%{{.*}}] shape shape_32x32b num 4 : memref<128x64xf32, #copy.tmem> -> vector<4xf32>
    %v = copy.tmem_load %h[%col] shape shape_32x32b num 4 : memref<128x64xf32, #copy.tmem> -> vector<4xf32>
    copy.tmem_wait load
    %p = copy.tmem_alloc : memref<128x64xf16, #copy.tmem>
    // CHECK: copy.tmem_slice %{{.*}}[32] : memref<128x64xf16, #copy.tmem> -> memref<128x16xf16, #copy.tmem>
    %q = copy.tmem_slice %p[32] : memref<128x64xf16, #copy.tmem> -> memref<128x16xf16, #copy.tmem>
    copy.tmem_dealloc %p : memref<128x64xf16, #copy.tmem>
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
