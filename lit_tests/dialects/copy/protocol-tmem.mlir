// RUN: copy-opt %s --split-input-file --verify-diagnostics

// TMEM handed between warp-specialized roles (sm_100a), proven by the protocol analysis with
// no finding (P14, analysis/protocol/tmem_order.py): the epilogue warps store a bias into the
// accumulator (tcgen05.st), wait for it, fence (nvvm.tcgen05.fence <before>) and arrive on
// %ready; the MMA warp waits on %ready, fences (<after>), issues the tcgen05.mma that
// accumulates onto it and commits to %done (tcgen05.commit fences before the sync itself);
// the epilogue waits on %done, fences (<after>) and loads the accumulator (tcgen05.ld). The
// PTX ISA's pattern for tcgen05 accesses of two threads ordered through a thread
// synchronisation; CuTeDSL's tcgen05 examples put the before fence ahead of the barrier that
// precedes tcgen05.dealloc, as the epilogue does last here.

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

// A CTA pair (cluster 2x1x1, TMEM of cta_group 2, an MMA of M 256): the leader's MMA warp
// commits with multicast_mask 3 (CUTLASS's umma_arrive_multicast_2x1SM), which arrives on
// %done of both CTAs, so each CTA's epilogue warps wait on their own barrier for the
// leader's MMA (the analysis models the pair rank by rank; analysis/protocol/ops_mma.py).
// Each CTA loads its part of the pair's A and B (leader-tracked, partitioned along the rows:
// CTA i rows 128 i ..), all bytes completing on the leader's %full; the M 256 MMA reads A's
// rows from both CTAs and N / 2 = 64 rows of B from each, and writes D's rows 128 i .. to
// CTA i's TMEM (tests/interpreter/test_tmem_fences.py runs it).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tmem_pair_commit(%A: memref<256x64xf16>, %B: memref<256x64xf16>, %C: memref<256x8xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %false = arith.constant false
    %mask = arith.constant 3 : i16
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

// -----

// An MMA known done through a later commit (FA4's S and P in one TMEM buffer, CUTLASS's
// sm100 FMHA): the MMA warp writes S with a tcgen05.mma and commits twice, to %k_free (the
// K slot's release, which only a producer waits on) and then to %s_full; the softmax warps
// wait on %s_full, load S, store P over S's first columns and arrive on %p_full; the MMA
// warp waits on %p_full and issues the PV MMA, which reads P (over S's columns) as A from
// TMEM and accumulates into O. The S MMA and the PV MMA are not one of the ISA's pipelines
// (their accumulators differ), so the PV MMA must know the S MMA done: a tcgen05.commit
// tracks every earlier tcgen05 operation of its thread, so the %s_full phase the MMA warp
// learns through %p_full says so, though the first commit's (%k_free) is never waited on.
// The two commit barriers are one group, the second named by a constant index
// (`llvm.getelementptr %commits[1]`).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tmem_done_by_a_later_commit(%A: memref<128x64xf16>, %B: memref<64x64xf16>, %V: memref<64x64xf16>, %C: memref<128x8xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %tm = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %S = copy.tmem_slice %tm[0] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %P = copy.tmem_slice %tm[0] : memref<128x128xf32, #copy.tmem> -> memref<128x8xf32, #copy.tmem>
    %O = copy.tmem_slice %tm[64] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<1x64x64xf16, #copy.smem<swizzle = 128>>
    %smem_v = copy.alloc_smem : memref<1x64x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 3 : !copy.barrier<1>
    %commits = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %p_full = copy.barrier_init arrivals 4 : !copy.barrier<1>
    %o_done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %s_ptr = builtin.unrealized_conversion_cast %S : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %p_ptr = builtin.unrealized_conversion_cast %P : memref<128x8xf32, #copy.tmem> to !llvm.ptr<6>
    %o_ptr = builtin.unrealized_conversion_cast %O : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %k_free_ptr = builtin.unrealized_conversion_cast %commits : !copy.barrier<2> to !llvm.ptr<3>
    %s_full_ptr = llvm.getelementptr %k_free_ptr[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
    %o_done_ptr = builtin.unrealized_conversion_cast %o_done : !copy.barrier<1> to !llvm.ptr<3>
    %idesc_s = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 : i32
    %idesc_o = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 b_major mn : i32
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %B[%c0, %c0] to %smem_b[%c0] barrier %full[%c0] : memref<64x64xf16> to memref<1x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %V[%c0, %c0] to %smem_v[%c0] barrier %full[%c0] : memref<64x64xf16> to memref<1x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      %da = copy.matrix_descriptor %smem_a[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %db = copy.matrix_descriptor %smem_b[%c0] major k tcgen05 : memref<1x64x64xf16, #copy.smem<swizzle = 128>> -> i64
      %dv = copy.matrix_descriptor %smem_v[%c0] major mn tcgen05 : memref<1x64x64xf16, #copy.smem<swizzle = 128>> -> i64
      %lead = arith.cmpi eq, %t, %c0 : index
      scf.if %lead {
        nvvm.tcgen05.mma %s_ptr, %da, %db, %idesc_s, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        nvvm.tcgen05.commit %k_free_ptr : !llvm.ptr<3>
        nvvm.tcgen05.commit %s_full_ptr : !llvm.ptr<3>
      }
      copy.barrier_wait %p_full[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      scf.if %lead {
        nvvm.tcgen05.mma %o_ptr, %p_ptr, %dv, %idesc_o, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
        nvvm.tcgen05.commit %o_done_ptr : !llvm.ptr<3>
      }
    }, {
    ^bb0(%t: index):
      %c1 = arith.constant 1 : index
      copy.barrier_wait %commits[%c1], %false : !copy.barrier<2>
      nvvm.tcgen05.fence <after>
      %s = copy.tmem_load %S[%c0] shape shape_32x32b num 8 : memref<128x64xf32, #copy.tmem> -> vector<8xf32>
      copy.tmem_wait load
      copy.tmem_store %s, %P[%c0] shape shape_32x32b num 8 : vector<8xf32>, memref<128x8xf32, #copy.tmem>
      copy.tmem_wait store
      nvvm.tcgen05.fence <before>
      copy.barrier_arrive %p_full[%c0] issuer warps : !copy.barrier<1>
      copy.barrier_wait %o_done[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %o = copy.tmem_load %O[%c0] shape shape_32x32b num 8 : memref<128x64xf32, #copy.tmem> -> vector<8xf32>
      copy.tmem_wait load
      vector.store %o, %C[%t, %c0] : memref<128x8xf32>, vector<8xf32>
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %tm : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
