// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// `cta_group 2` (tcgen05 `.cta_group::2`): warp 0 of each CTA of a pair allocates and frees
// the same columns together, relinquishes the permit, and a tcgen05.cp lands in both CTAs'
// TMEM. The pair is the CTAs whose cluster rank differs in bit 0 (a 2x1x1 cluster).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  // CHECK-LABEL: func.func @tmem_pair(
  func.func @tmem_pair(%col: index) attributes {copy.cluster = array<i32: 2, 1, 1>} {
    // CHECK: %[[T:.*]] = copy.tmem_alloc cta_group 2 : memref<128x64xf32, #copy.tmem>
    // CHECK-GENERIC: "copy.tmem_alloc"() <{cta_group = 2 : i32}> : () -> memref<128x64xf32, #copy.tmem>
    %t = copy.tmem_alloc cta_group 2 : memref<128x64xf32, #copy.tmem>
    // CHECK: copy.tmem_relinquish cta_group 2
    // CHECK-GENERIC: "copy.tmem_relinquish"() <{cta_group = 2 : i32}> : () -> ()
    copy.tmem_relinquish cta_group 2
    %s = copy.alloc_smem : memref<32x4xf32, #copy.smem>
    // CHECK: copy.smem_to_tmem %{{.*}} to %[[T]][%{{.*}}] shape shape_32x128b multicast warpx4 cta_group 2 : memref<32x4xf32, #copy.smem>, memref<128x64xf32, #copy.tmem>
    copy.smem_to_tmem %s to %t[%col] shape shape_32x128b multicast warpx4 cta_group 2 : memref<32x4xf32, #copy.smem>, memref<128x64xf32, #copy.tmem>
    // CHECK: copy.tmem_dealloc %[[T]] cta_group 2 : memref<128x64xf32, #copy.tmem>
    // CHECK-GENERIC: "copy.tmem_dealloc"(%{{.*}}) <{cta_group = 2 : i32}> : (memref<128x64xf32, #copy.tmem>) -> ()
    copy.tmem_dealloc %t cta_group 2 : memref<128x64xf32, #copy.tmem>
    func.return
  }

  // CHECK-LABEL: func.func @tmem_one(
  func.func @tmem_one() {
    // CHECK: copy.tmem_alloc : memref<128x32xf32, #copy.tmem>
    %t = copy.tmem_alloc : memref<128x32xf32, #copy.tmem>
    // CHECK: copy.tmem_relinquish{{$}}
    copy.tmem_relinquish
    copy.tmem_dealloc %t : memref<128x32xf32, #copy.tmem>
    func.return
  }
}
