// RUN: copy-opt %s --split-input-file --verify-diagnostics

// TMEM handed between roles without the tcgen05 fences (P14, analysis/protocol/tmem_order.py),
// one mistake per chunk, each the kernel of protocol-tmem.mlir with one op removed: the
// epilogue's tcgen05.st hand-off to the MMA warp without its before fence; the epilogue's
// tcgen05.ld of the accumulator without the after fence; the MMA warp's tcgen05.mma after the
// bias without the after fence; the MMA's end signalled by a plain arrival instead of
// tcgen05.commit; then the CTA pair's commit multicast (its mask missing the peer, a mask
// beyond the cluster). `// fix: s|OLD|NEW|` lines give the edit the note describes
// (tests/tools/test_fix_notes.py). The interpreter catches the same kernels at run time
// (tests/interpreter/test_tmem_fences.py).

// rule: P14
// fix: s|      copy.barrier_arrive %ready|      nvvm.tcgen05.fence <before> copy.barrier_arrive %ready|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tmem_handoff(%A: memref<128x64xf16>, %B: memref<128x64xf16>, %C: memref<128x8xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<1>
    %ready = copy.barrier_init arrivals 4 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %d = builtin.unrealized_conversion_cast %acc : memref<128x128xf32, #copy.tmem> to !llvm.ptr<6>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 128 a f16 b f16 d f32 : i32
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %B[%c0, %c0] to %smem_b[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      copy.barrier_wait %ready[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %da = copy.matrix_descriptor %smem_a[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %db = copy.matrix_descriptor %smem_b[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %lead = arith.cmpi eq, %t, %c0 : index
      scf.if %lead {
        // expected-error@+2 {{the first warp of role 1's copy.tmem_store of this TMEM is handed to role 0 through a thread synchronisation that no tcgen05.fence::before_thread_sync orders it before: the TMEM access may still be in flight}}
        // expected-note@+1 {{in the first warp of role 1, nvvm.tcgen05.fence <before> after it and before the arrival or barrier this side syncs on}}
        nvvm.tcgen05.mma %d, %da, %db, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
      }
    }, {
    ^bb0(%t: index):
      %f1 = arith.constant 1.0 : f32
      %one = vector.broadcast %f1 : f32 to vector<8xf32>
      // expected-note@+1 {{the access not fenced before the sync}}
      copy.tmem_store %one, %acc[%c0] shape shape_32x32b num 8 : vector<8xf32>, memref<128x128xf32, #copy.tmem>
      copy.tmem_wait store
      copy.barrier_arrive %ready[%c0] issuer warps : !copy.barrier<1>
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %v = copy.tmem_load %acc[%c0] shape shape_32x32b num 8 : memref<128x128xf32, #copy.tmem> -> vector<8xf32>
      copy.tmem_wait load
      vector.store %v, %C[%t, %c0] : memref<128x8xf32>, vector<8xf32>
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}

// -----

// rule: P14
// fix: s|      %v = copy.tmem_load|      nvvm.tcgen05.fence <after> %v = copy.tmem_load|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tmem_handoff(%A: memref<128x64xf16>, %B: memref<128x64xf16>, %C: memref<128x8xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<1>
    %ready = copy.barrier_init arrivals 4 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %d = builtin.unrealized_conversion_cast %acc : memref<128x128xf32, #copy.tmem> to !llvm.ptr<6>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 128 a f16 b f16 d f32 : i32
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %B[%c0, %c0] to %smem_b[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      copy.barrier_wait %ready[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %da = copy.matrix_descriptor %smem_a[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %db = copy.matrix_descriptor %smem_b[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %lead = arith.cmpi eq, %t, %c0 : index
      scf.if %lead {
        // expected-note@+1 {{the other thread's access}}
        nvvm.tcgen05.mma %d, %da, %db, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
      }
    }, {
    ^bb0(%t: index):
      %f1 = arith.constant 1.0 : f32
      %one = vector.broadcast %f1 : f32 to vector<8xf32>
      copy.tmem_store %one, %acc[%c0] shape shape_32x32b num 8 : vector<8xf32>, memref<128x128xf32, #copy.tmem>
      copy.tmem_wait store
      nvvm.tcgen05.fence <before>
      copy.barrier_arrive %ready[%c0] issuer warps : !copy.barrier<1>
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
      // expected-error@+2 {{the first warp of role 1 accesses TMEM that role 0's nvvm.tcgen05.mma touched, after a thread synchronisation but with no tcgen05.fence::after_thread_sync between them: the access may be issued before the other's is ordered}}
      // expected-note@+1 {{add nvvm.tcgen05.fence <after> after the wait or barrier and before this op}}
      %v = copy.tmem_load %acc[%c0] shape shape_32x32b num 8 : memref<128x128xf32, #copy.tmem> -> vector<8xf32>
      copy.tmem_wait load
      vector.store %v, %C[%t, %c0] : memref<128x8xf32>, vector<8xf32>
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}

// -----

// rule: P14
// fix: s|      %da = copy.matrix_descriptor|      nvvm.tcgen05.fence <after> %da = copy.matrix_descriptor|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tmem_handoff(%A: memref<128x64xf16>, %B: memref<128x64xf16>, %C: memref<128x8xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<1>
    %ready = copy.barrier_init arrivals 4 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %d = builtin.unrealized_conversion_cast %acc : memref<128x128xf32, #copy.tmem> to !llvm.ptr<6>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 128 a f16 b f16 d f32 : i32
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %B[%c0, %c0] to %smem_b[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      copy.barrier_wait %ready[%c0], %false : !copy.barrier<1>
      %da = copy.matrix_descriptor %smem_a[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %db = copy.matrix_descriptor %smem_b[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %lead = arith.cmpi eq, %t, %c0 : index
      scf.if %lead {
        // expected-error@+2 {{role 0 accesses TMEM that the first warp of role 1's copy.tmem_store touched, after a thread synchronisation but with no tcgen05.fence::after_thread_sync between them: the access may be issued before the other's is ordered}}
        // expected-note@+1 {{add nvvm.tcgen05.fence <after> after the wait or barrier and before this op}}
        nvvm.tcgen05.mma %d, %da, %db, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
      }
    }, {
    ^bb0(%t: index):
      %f1 = arith.constant 1.0 : f32
      %one = vector.broadcast %f1 : f32 to vector<8xf32>
      // expected-note@+1 {{the other thread's access}}
      copy.tmem_store %one, %acc[%c0] shape shape_32x32b num 8 : vector<8xf32>, memref<128x128xf32, #copy.tmem>
      copy.tmem_wait store
      nvvm.tcgen05.fence <before>
      copy.barrier_arrive %ready[%c0] issuer warps : !copy.barrier<1>
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %v = copy.tmem_load %acc[%c0] shape shape_32x32b num 8 : memref<128x128xf32, #copy.tmem> -> vector<8xf32>
      copy.tmem_wait load
      vector.store %v, %C[%t, %c0] : memref<128x8xf32>, vector<8xf32>
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}

// -----

// rule: P14
// fix: s|      copy.barrier_arrive %done[%c0] issuer elected : !copy.barrier<1>|      scf.if %lead { nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3> }|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tmem_handoff(%A: memref<128x64xf16>, %B: memref<128x64xf16>, %C: memref<128x8xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<1>
    %ready = copy.barrier_init arrivals 4 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %d = builtin.unrealized_conversion_cast %acc : memref<128x128xf32, #copy.tmem> to !llvm.ptr<6>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 128 a f16 b f16 d f32 : i32
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %B[%c0, %c0] to %smem_b[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      copy.barrier_wait %ready[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %da = copy.matrix_descriptor %smem_a[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %db = copy.matrix_descriptor %smem_b[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %lead = arith.cmpi eq, %t, %c0 : index
      scf.if %lead {
        // expected-note@+1 {{the access not fenced before the sync}}
        nvvm.tcgen05.mma %d, %da, %db, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
      }
      copy.barrier_arrive %done[%c0] issuer elected : !copy.barrier<1>
    }, {
    ^bb0(%t: index):
      %f1 = arith.constant 1.0 : f32
      %one = vector.broadcast %f1 : f32 to vector<8xf32>
      copy.tmem_store %one, %acc[%c0] shape shape_32x32b num 8 : vector<8xf32>, memref<128x128xf32, #copy.tmem>
      copy.tmem_wait store
      nvvm.tcgen05.fence <before>
      copy.barrier_arrive %ready[%c0] issuer warps : !copy.barrier<1>
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      // expected-error@+2 {{role 0's nvvm.tcgen05.mma of this TMEM is handed to the first warp of role 1 through a thread synchronisation that no tcgen05.fence::before_thread_sync orders it before: the TMEM access may still be in flight}}
      // expected-note@+1 {{in role 0, nvvm.tcgen05.commit (a tcgen05.mma or tcgen05.cp ends only through a commit, which fences before the sync itself) on the barrier this side waits on}}
      %v = copy.tmem_load %acc[%c0] shape shape_32x32b num 8 : memref<128x128xf32, #copy.tmem> -> vector<8xf32>
      copy.tmem_wait load
      vector.store %v, %C[%t, %c0] : memref<128x8xf32>, vector<8xf32>
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}

// -----

// The CTA pair of protocol-tmem.mlir with the leader's commit multicast to itself alone
// (mask 1): CTA 1's epilogue waits on its own %done, on which nothing arrives, and the
// cluster barrier at the end never completes (P6).
// rule: P6
// fix: none -- the finding is the hang the mask causes, reported at the cluster barrier with the blocked wait of CTA 1 as its note; the edit is at the commit (multicast_mask 3)
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tmem_pair_commit(%A: memref<256x64xf16>, %B: memref<256x64xf16>, %C: memref<256x8xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %false = arith.constant false
    %mask = arith.constant 1 : i16
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %is_leader = arith.cmpi eq, %rank, %c0 : index
    %row = arith.muli %rank, %c128 : index
    %acc = copy.tmem_alloc cta_group 2 : memref<128x128xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %d = builtin.unrealized_conversion_cast %acc : memref<128x128xf32, #copy.tmem> to !llvm.ptr<6>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 256 n 128 a f16 b f16 d f32 cta_group 2 : i32
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<256x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %B[%c0, %c0] to %smem_b[%c0] barrier %full[%c0] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<256x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      scf.if %is_leader {
        copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
        %da = copy.matrix_descriptor %smem_a[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
        %db = copy.matrix_descriptor %smem_b[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
        %lead = arith.cmpi eq, %t, %c0 : index
        scf.if %lead {
          nvvm.tcgen05.mma %d, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          nvvm.tcgen05.commit %done_ptr, multicast_mask = %mask {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
        }
      }
    }, {
    ^bb0(%t: index):
      // expected-note@+1 {{role 1 of CTA 1 is blocked here, at copy.barrier_wait on barrier 0 of %done (phase 0)}}
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %v = copy.tmem_load %acc[%c0] shape shape_32x32b num 8 : memref<128x128xf32, #copy.tmem> -> vector<8xf32>
      copy.tmem_wait load
      %out = arith.addi %row, %t : index
      vector.store %v, %C[%out, %c0] : memref<256x8xf32>, vector<8xf32>
      nvvm.tcgen05.fence <before>
    }
    // expected-error@+2 {{this wait on the cluster barrier never returns: generation 2 has 160 of the 320 threads of the cluster's CTAs arriving}}
    // expected-note@+1 {{make every thread of every CTA arrive (copy.cluster_sync outside conditions on the rank or the thread, in every role that runs)}}
    copy.cluster_sync
    copy.tmem_dealloc %acc cta_group 2 : memref<128x128xf32, #copy.tmem>
    func.return
  }
}

// -----

// The pair's commit with a mask that names a CTA beyond the cluster (bit 2 of a pair).
// rule: P5
// fix: s|%mask = arith.constant 4 : i16|%mask = arith.constant 3 : i16|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tmem_pair_commit(%A: memref<256x64xf16>, %B: memref<256x64xf16>, %C: memref<256x8xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %false = arith.constant false
    %mask = arith.constant 4 : i16
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %is_leader = arith.cmpi eq, %rank, %c0 : index
    %row = arith.muli %rank, %c128 : index
    %acc = copy.tmem_alloc cta_group 2 : memref<128x128xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %d = builtin.unrealized_conversion_cast %acc : memref<128x128xf32, #copy.tmem> to !llvm.ptr<6>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 256 n 128 a f16 b f16 d f32 cta_group 2 : i32
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<256x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %B[%c0, %c0] to %smem_b[%c0] barrier %full[%c0] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<256x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      scf.if %is_leader {
        copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
        %da = copy.matrix_descriptor %smem_a[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
        %db = copy.matrix_descriptor %smem_b[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
        %lead = arith.cmpi eq, %t, %c0 : index
        scf.if %lead {
          nvvm.tcgen05.mma %d, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          // expected-error@+2 {{this tcgen05.commit multicasts its arrival with mask 0x4, which names no CTA or one beyond the cluster's 2: the barriers of the CTAs it arrives on, and so their phases, are not known}}
          // expected-note@+1 {{give multicast_mask as a constant or a value of the CTA's rank in the cluster (bit r: CTA r; a CTA pair's leader: 3, both CTAs of the pair)}}
          nvvm.tcgen05.commit %done_ptr, multicast_mask = %mask {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
        }
      }
    }, {
    ^bb0(%t: index):
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %v = copy.tmem_load %acc[%c0] shape shape_32x32b num 8 : memref<128x128xf32, #copy.tmem> -> vector<8xf32>
      copy.tmem_wait load
      %out = arith.addi %row, %t : index
      vector.store %v, %C[%out, %c0] : memref<256x8xf32>, vector<8xf32>
      nvvm.tcgen05.fence <before>
    }
    copy.cluster_sync
    copy.tmem_dealloc %acc cta_group 2 : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
