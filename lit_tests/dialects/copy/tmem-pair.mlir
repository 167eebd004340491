// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// `cta_group 2` (tcgen05 `.cta_group::2`): warp 0 of each CTA of a pair allocates and frees
// the same columns together, relinquishes the permit, and the even CTA's tcgen05.cp lands in
// both CTAs' TMEM, its commit multicast to both CTAs' barriers. The pair is the CTAs whose
// cluster rank differs in bit 0 (a 2x1x1 cluster).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  // CHECK-LABEL: func.func @tmem_pair(
  func.func @tmem_pair(%col: index) attributes {copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %false = arith.constant false
    %both = arith.constant 3 : i16
    %b = gpu.block_id x
    %tid = gpu.thread_id x
    %rank = arith.remui %b, %c2 : index
    %even = arith.cmpi eq, %rank, %c0 : index
    %first = arith.cmpi eq, %tid, %c0 : index
    // CHECK: %[[T:.*]] = copy.tmem_alloc cta_group 2 : memref<128x64xf32, #copy.tmem>
    // CHECK-GENERIC: "copy.tmem_alloc"() <{cta_group = 2 : i32}> : () -> memref<128x64xf32, #copy.tmem>
    %t = copy.tmem_alloc cta_group 2 : memref<128x64xf32, #copy.tmem>
    // CHECK: copy.tmem_relinquish cta_group 2
    // CHECK-GENERIC: "copy.tmem_relinquish"() <{cta_group = 2 : i32}> : () -> ()
    copy.tmem_relinquish cta_group 2
    %s = copy.alloc_smem : memref<32x4xf32, #copy.smem>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    // CHECK: copy.smem_to_tmem %{{.*}} to %[[T]][%{{.*}}] shape shape_32x128b multicast warpx4 cta_group 2 : memref<32x4xf32, #copy.smem>, memref<128x64xf32, #copy.tmem>
    // The even CTA copies into the pair's TMEM and commits the copy to both CTAs' %done:
    // it reads SMEM and writes TMEM until then (P2, P7, P14).
    scf.if %even {
      copy.smem_to_tmem %s to %t[%col] shape shape_32x128b multicast warpx4 cta_group 2 : memref<32x4xf32, #copy.smem>, memref<128x64xf32, #copy.tmem>
      scf.if %first {
        nvvm.tcgen05.commit %done_ptr, multicast_mask = %both {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
      }
    }
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    nvvm.tcgen05.fence <before>
    copy.cluster_sync
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
