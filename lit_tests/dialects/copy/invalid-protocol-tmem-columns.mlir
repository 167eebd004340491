// RUN: copy-opt %s --split-input-file --verify-diagnostics

// The stage loop of protocol-tmem-columns.mlir with the wrong stage's columns: after the
// wait on stage 0's barrier the epilogue loads %acc[(1 - b) * 64], stage 1, which the MMA
// may still be writing (its commit is not yet waited for).
// rule: P14
// fix: s|        %v = copy.tmem_load|        copy.barrier_wait %done[%other], %false : !copy.barrier<2> nvvm.tcgen05.fence <after> %v = copy.tmem_load|

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @stage_other_column(%A: memref<128x64xf16>, %B: memref<128x64xf16>, %C: memref<128x16xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %one = arith.constant 1 : i64
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %acc0 = copy.tmem_slice %acc[0] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %acc1 = copy.tmem_slice %acc[64] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %d0 = builtin.unrealized_conversion_cast %acc0 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %d1 = builtin.unrealized_conversion_cast %acc1 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %done0 = builtin.unrealized_conversion_cast %done : !copy.barrier<2> to !llvm.ptr<3>
    %done1 = llvm.getelementptr %done0[%one] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 : i32
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %B[%c0, %c0] to %smem_b[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      %da = copy.matrix_descriptor %smem_a[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %db = copy.matrix_descriptor %smem_b[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %lead = arith.cmpi eq, %t, %c0 : index
      scf.if %lead {
        nvvm.tcgen05.mma %d0, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        nvvm.tcgen05.commit %done0 : !llvm.ptr<3>
        // expected-note@+1 {{the access not waited for}}
        nvvm.tcgen05.mma %d1, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        nvvm.tcgen05.commit %done1 : !llvm.ptr<3>
      }
    }, {
    ^bb0(%t: index):
      scf.for %b = %c0 to %c2 step %c1 {
        copy.barrier_wait %done[%b], %false : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        %other = arith.subi %c1, %b : index
        %col = arith.muli %other, %c64 : index
        // expected-error@+2 {{the first warp of role 1 accesses TMEM that role 0's nvvm.tcgen05.mma may still be accessing: no synchronisation orders this op after it}}
        // expected-note@+1 {{in role 0, nvvm.tcgen05.commit after it on a copy.barrier_init barrier; in the first warp of role 1, copy.barrier_wait on that barrier's phase, then nvvm.tcgen05.fence <after>, before this op}}
        %v = copy.tmem_load %acc[%col] shape shape_32x32b num 8 : memref<128x128xf32, #copy.tmem> -> vector<8xf32>
        copy.tmem_wait load
        %at = arith.muli %b, %c8 : index
        vector.store %v, %C[%t, %at] : memref<128x16xf32>, vector<8xf32>
      }
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
// -----

// The same kernel with the epilogue listed as role 0 and the MMA warp as role 1: the walk
// runs role 0 first, so the epilogue's load of stage 1 comes before the MMA that writes
// stage 1, and the error is at the MMA: nothing orders either after the other (another
// schedule runs the MMA first, as in the kernel above).
// rule: P14
// fix: s|        %v = copy.tmem_load|        copy.barrier_wait %done[%other], %false : !copy.barrier<2> nvvm.tcgen05.fence <after> %v = copy.tmem_load|

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @stage_other_column_epilogue_first(%A: memref<128x64xf16>, %B: memref<128x64xf16>, %C: memref<128x16xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %one = arith.constant 1 : i64
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %acc0 = copy.tmem_slice %acc[0] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %acc1 = copy.tmem_slice %acc[64] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %d0 = builtin.unrealized_conversion_cast %acc0 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %d1 = builtin.unrealized_conversion_cast %acc1 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %done0 = builtin.unrealized_conversion_cast %done : !copy.barrier<2> to !llvm.ptr<3>
    %done1 = llvm.getelementptr %done0[%one] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 : i32
    copy.warp_specialize warps [4, 1] {
    ^bb0(%t: index):
      scf.for %b = %c0 to %c2 step %c1 {
        copy.barrier_wait %done[%b], %false : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        %other = arith.subi %c1, %b : index
        %col = arith.muli %other, %c64 : index
        // expected-note@+1 {{the access not waited for}}
        %v = copy.tmem_load %acc[%col] shape shape_32x32b num 8 : memref<128x128xf32, #copy.tmem> -> vector<8xf32>
        copy.tmem_wait load
        %at = arith.muli %b, %c8 : index
        vector.store %v, %C[%t, %at] : memref<128x16xf32>, vector<8xf32>
      }
      nvvm.tcgen05.fence <before>
    }, {
    ^bb0(%t: index):
      copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %B[%c0, %c0] to %smem_b[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      %da = copy.matrix_descriptor %smem_a[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %db = copy.matrix_descriptor %smem_b[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %lead = arith.cmpi eq, %t, %c0 : index
      scf.if %lead {
        nvvm.tcgen05.mma %d0, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        nvvm.tcgen05.commit %done0 : !llvm.ptr<3>
        // expected-error@+2 {{role 1's nvvm.tcgen05.mma may access TMEM that the first warp of role 0's copy.tmem_load is still accessing: no synchronisation orders this op after it}}
        // expected-note@+1 {{in the first warp of role 0, nvvm.tcgen05.fence <before> after it and an arrival on a copy.barrier_init barrier; in role 1, copy.barrier_wait on that barrier's phase, then nvvm.tcgen05.fence <after>, before this op; or give the two other TMEM columns}}
        nvvm.tcgen05.mma %d1, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        nvvm.tcgen05.commit %done1 : !llvm.ptr<3>
      }
    }
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}

