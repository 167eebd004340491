// The data movement of a Blackwell (sm_100a) attention forward kernel with S, P and O in
// TMEM, as CUTLASS's sm100 FMHA (example 77) and FlashAttention-4 write it, reduced to one
// 128-row block of queries of one head per CTA and one softmax warpgroup that also does the
// correction (FA4 ping-pongs two query tiles between two softmax warpgroups and corrects O
// in a warpgroup of its own): head dim 64, key blocks of 64.
//
// Protocol: 6 warps (192 threads). TMEM: one 128-column allocation, S in columns 0-63
// (f32), P over S's first 32 columns (two f16 a column: what the PV MMA reads as A), O in
// columns 64-127. Three roles:
// - the load warp: Q once (q_full), then for each key block n acquires slot n mod 2 of the
//   K ring and of the V ring (k_empty / v_empty, the producer's phase starting at 1) and
//   loads K[n] and V[n] (arriving on k_full / v_full);
// - the MMA warp (its lane 0 issues): waits for K[n]; from block 1 on waits for the PV MMA
//   of block n - 1 (pv_done), which reads P in S's columns, then fences and issues the 4
//   MMAs of S = Q K[n]^T (K 16 each) into S; commits to k_empty[s] (the K slot is free) and
//   to s_full; waits for P (p_full, the softmax's four warps), fences, waits for V[n] and
//   issues the 4 MMAs of O += P V[n] with A from TMEM (P's columns 8j .. 8j + 7) and B =
//   V[n] (MN-major: keys x head dim), overwriting O at block 0; commits to v_empty[s] and
//   to pv_done. It learns that S's MMAs are done through s_full (the softmax's arrival on
//   p_full carries it), not through k_empty, which only the load warp waits on;
// - the softmax warpgroup (warps 2-5; warp w reaches TMEM lanes 32 (w mod 4) ..): per block
//   waits on s_full, fences, loads its rows of S (tcgen05.ld 32x32b) and waits; from block
//   1 on it corrects O: waits on pv_done (block n - 1's O), fences, loads O, adds S and
//   stores O back; then stores P over S's first columns, waits for the stores, fences
//   before and arrives on p_full (one arrival a warp). After the last block it waits on
//   pv_done, fences, loads O, writes it to SMEM, fences the async proxy, meets at named
//   barrier 4 and its elected thread stores the tile with TMA, waiting for the store to
//   read SMEM before the TMEM is freed.
//
// The math stand-in (the dialect has no exp or max): P is S's first 32 columns as the PV
// MMA reads them, each 32-bit column two f16 (FA4 stores exp(S - max) converted to f16
// pairs there), and the correction adds S to O (FA4 scales O by exp(m_old - m_new)).
// tests/corpus/__init__.py holds the numpy model.
//
// Launch: grid (seqlen_q / 128, heads), 192 threads. Q and O are (heads * seqlen_q) x 64, K
// and V (heads * seqlen_k) x 64; seqlen_k is known at run time, a multiple of 64, at least
// one key block (`copy.assume %n_blocks ge 1`).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @fmha_tcgen05(%Q: memref<?x64xf16>, %K: memref<?x64xf16>, %V: memref<?x64xf16>, %O: memref<?x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 192, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %false = arith.constant false
    %m_block = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %head = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %m_blocks = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %heads = "gpu.grid_dim"() <{dimension = #gpu<dim y>}> : () -> index
    %rows_k = memref.dim %K, %c0 : memref<?x64xf16>
    %seqlen_k = arith.divui %rows_k, %heads : index
    %n_blocks = arith.divui %seqlen_k, %c64 : index
    copy.assume %n_blocks ge 1 : index
    %seqlen_q = arith.muli %m_blocks, %c128 : index
    %q_head = arith.muli %head, %seqlen_q : index
    %q_off = arith.muli %m_block, %c128 : index
    %q0 = arith.addi %q_head, %q_off : index
    %k0 = arith.muli %head, %seqlen_k : index
    %smem_q = copy.alloc_smem : memref<128x64xf16, #copy.smem<swizzle = 128>>
    %smem_k = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    %smem_v = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    %smem_o = copy.alloc_smem : memref<128x64xf32, #copy.smem>
    %q_full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %k_full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %k_empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %v_full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %v_empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %s_full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %p_full = copy.barrier_init arrivals 4 : !copy.barrier<1>
    %pv_done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %tm = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %S = copy.tmem_slice %tm[0] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %P = copy.tmem_slice %tm[0] : memref<128x128xf32, #copy.tmem> -> memref<128x32xf32, #copy.tmem>
    %P0 = copy.tmem_slice %tm[0] : memref<128x128xf32, #copy.tmem> -> memref<128x8xf32, #copy.tmem>
    %P1 = copy.tmem_slice %tm[8] : memref<128x128xf32, #copy.tmem> -> memref<128x8xf32, #copy.tmem>
    %P2 = copy.tmem_slice %tm[16] : memref<128x128xf32, #copy.tmem> -> memref<128x8xf32, #copy.tmem>
    %P3 = copy.tmem_slice %tm[24] : memref<128x128xf32, #copy.tmem> -> memref<128x8xf32, #copy.tmem>
    %Ot = copy.tmem_slice %tm[64] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %s_ptr = builtin.unrealized_conversion_cast %S : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %o_ptr = builtin.unrealized_conversion_cast %Ot : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %p0_ptr = builtin.unrealized_conversion_cast %P0 : memref<128x8xf32, #copy.tmem> to !llvm.ptr<6>
    %p1_ptr = builtin.unrealized_conversion_cast %P1 : memref<128x8xf32, #copy.tmem> to !llvm.ptr<6>
    %p2_ptr = builtin.unrealized_conversion_cast %P2 : memref<128x8xf32, #copy.tmem> to !llvm.ptr<6>
    %p3_ptr = builtin.unrealized_conversion_cast %P3 : memref<128x8xf32, #copy.tmem> to !llvm.ptr<6>
    %k_empty_ptr = builtin.unrealized_conversion_cast %k_empty : !copy.barrier<2> to !llvm.ptr<3>
    %v_empty_ptr = builtin.unrealized_conversion_cast %v_empty : !copy.barrier<2> to !llvm.ptr<3>
    %s_full_ptr = builtin.unrealized_conversion_cast %s_full : !copy.barrier<1> to !llvm.ptr<3>
    %pv_done_ptr = builtin.unrealized_conversion_cast %pv_done : !copy.barrier<1> to !llvm.ptr<3>
    %idesc_s = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 : i32
    %idesc_o = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 b_major mn : i32
    copy.warp_specialize warps [1, 1, 4] {
    ^bb0(%t: index):
      // The load warp: Q once, then K[n] and V[n] into a 2-stage ring each.
      copy.async_copy %Q[%q0, %c0] to %smem_q barrier %q_full[%c0] : memref<?x64xf16> to memref<128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      scf.for %n = %c0 to %n_blocks step %c1 {
        %s = arith.remui %n, %c2 : index
        %lap = arith.divui %n, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        %nk = arith.muli %n, %c64 : index
        %row = arith.addi %k0, %nk : index
        copy.barrier_wait %k_empty[%s], %acquire : !copy.barrier<2>
        copy.async_copy %K[%row, %c0] to %smem_k[%s] barrier %k_full[%s] : memref<?x64xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
        copy.barrier_wait %v_empty[%s], %acquire : !copy.barrier<2>
        copy.async_copy %V[%row, %c0] to %smem_v[%s] barrier %v_full[%s] : memref<?x64xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
      }
    }, {
    ^bb0(%t: index):
      // The MMA warp: its lane 0 issues S = Q K[n]^T into S, then O += P V[n] with P (in
      // TMEM, over S's first columns) as A.
      %lead = arith.cmpi eq, %t, %c0 : index
      %q2 = arith.constant 2 : i64
      %q4 = arith.constant 4 : i64
      %q6 = arith.constant 6 : i64
      %v1 = arith.constant 128 : i64
      %v2 = arith.constant 256 : i64
      %v3 = arith.constant 384 : i64
      copy.barrier_wait %q_full[%c0], %false : !copy.barrier<1>
      %dq = copy.matrix_descriptor %smem_q[] major k tcgen05 : memref<128x64xf16, #copy.smem<swizzle = 128>> -> i64
      scf.for %n = %c0 to %n_blocks step %c1 {
        %s = arith.remui %n, %c2 : index
        %lap = arith.divui %n, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %np = arith.remui %n, %c2 : index
        %mine = arith.cmpi ne, %np, %c0 : index
        %before = arith.xori %mine, %true : i1
        %later = arith.cmpi ne, %n, %c0 : index
        copy.barrier_wait %k_full[%s], %phase : !copy.barrier<2>
        // S is free once the PV of block n - 1 has read P (which lies in S's columns).
        scf.if %later {
          copy.barrier_wait %pv_done[%c0], %before : !copy.barrier<1>
        }
        nvvm.tcgen05.fence <after>
        %dk = copy.matrix_descriptor %smem_k[%s] major k tcgen05 : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
        scf.if %lead {
          nvvm.tcgen05.mma %s_ptr, %dq, %dk, %idesc_s, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          %dq2 = arith.addi %dq, %q2 : i64
          %dk2 = arith.addi %dk, %q2 : i64
          nvvm.tcgen05.mma %s_ptr, %dq2, %dk2, %idesc_s, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          %dq4 = arith.addi %dq, %q4 : i64
          %dk4 = arith.addi %dk, %q4 : i64
          nvvm.tcgen05.mma %s_ptr, %dq4, %dk4, %idesc_s, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          %dq6 = arith.addi %dq, %q6 : i64
          %dk6 = arith.addi %dk, %q6 : i64
          nvvm.tcgen05.mma %s_ptr, %dq6, %dk6, %idesc_s, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          %s64 = arith.index_cast %s : index to i64
          %k_free = llvm.getelementptr %k_empty_ptr[%s64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
          nvvm.tcgen05.commit %k_free : !llvm.ptr<3>
          nvvm.tcgen05.commit %s_full_ptr : !llvm.ptr<3>
        }
        // P is in TMEM (and O corrected) once the softmax warpgroup arrives.
        copy.barrier_wait %p_full[%c0], %mine : !copy.barrier<1>
        nvvm.tcgen05.fence <after>
        copy.barrier_wait %v_full[%s], %phase : !copy.barrier<2>
        %dv = copy.matrix_descriptor %smem_v[%s] major mn tcgen05 : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
        scf.if %lead {
          nvvm.tcgen05.mma %o_ptr, %p0_ptr, %dv, %idesc_o, %later {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
          %dv1 = arith.addi %dv, %v1 : i64
          nvvm.tcgen05.mma %o_ptr, %p1_ptr, %dv1, %idesc_o, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
          %dv2 = arith.addi %dv, %v2 : i64
          nvvm.tcgen05.mma %o_ptr, %p2_ptr, %dv2, %idesc_o, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
          %dv3 = arith.addi %dv, %v3 : i64
          nvvm.tcgen05.mma %o_ptr, %p3_ptr, %dv3, %idesc_o, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
          %s64 = arith.index_cast %s : index to i64
          %v_free = llvm.getelementptr %v_empty_ptr[%s64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
          nvvm.tcgen05.commit %v_free : !llvm.ptr<3>
          nvvm.tcgen05.commit %pv_done_ptr : !llvm.ptr<3>
        }
      }
    }, {
    ^bb0(%t: index):
      // The softmax warpgroup (warps 2-5): thread t holds a row of S, P and O.
      %w = arith.divui %t, %c32 : index
      %w2 = arith.addi %w, %c2 : index
      %quarter = arith.remui %w2, %c4 : index
      %lanes = arith.muli %quarter, %c32 : index
      %lane = arith.remui %t, %c32 : index
      %row = arith.addi %lanes, %lane : index
      scf.for %n = %c0 to %n_blocks step %c1 {
        %np = arith.remui %n, %c2 : index
        %mine = arith.cmpi ne, %np, %c0 : index
        %before = arith.xori %mine, %true : i1
        %later = arith.cmpi ne, %n, %c0 : index
        copy.barrier_wait %s_full[%c0], %mine : !copy.barrier<1>
        nvvm.tcgen05.fence <after>
        %sv = copy.tmem_load %S[%c0] shape shape_32x32b num 64 : memref<128x64xf32, #copy.tmem> -> vector<64xf32>
        %pv = copy.tmem_load %S[%c0] shape shape_32x32b num 32 : memref<128x64xf32, #copy.tmem> -> vector<32xf32>
        copy.tmem_wait load
        // Correction: O of block n - 1 is complete; rescale it in TMEM before PV[n].
        scf.if %later {
          copy.barrier_wait %pv_done[%c0], %before : !copy.barrier<1>
          nvvm.tcgen05.fence <after>
          %ov = copy.tmem_load %Ot[%c0] shape shape_32x32b num 64 : memref<128x64xf32, #copy.tmem> -> vector<64xf32>
          copy.tmem_wait load
          %ov2 = arith.addf %ov, %sv : vector<64xf32>
          copy.tmem_store %ov2, %Ot[%c0] shape shape_32x32b num 64 : vector<64xf32>, memref<128x64xf32, #copy.tmem>
        }
        copy.tmem_store %pv, %P[%c0] shape shape_32x32b num 32 : vector<32xf32>, memref<128x32xf32, #copy.tmem>
        copy.tmem_wait store
        nvvm.tcgen05.fence <before>
        copy.barrier_arrive %p_full[%c0] issuer warps : !copy.barrier<1>
      }
      // Epilogue: the last PV complete, O through SMEM and a TMA store.
      %last = arith.subi %n_blocks, %c1 : index
      %lp = arith.remui %last, %c2 : index
      %final = arith.cmpi ne, %lp, %c0 : index
      copy.barrier_wait %pv_done[%c0], %final : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %o = copy.tmem_load %Ot[%c0] shape shape_32x32b num 64 : memref<128x64xf32, #copy.tmem> -> vector<64xf32>
      copy.tmem_wait load
      vector.store %o, %smem_o[%row, %c0] : memref<128x64xf32, #copy.smem>, vector<64xf32>
      copy.fence_async_shared
      copy.named_barrier_sync 4, 128
      copy.async_copy %smem_o to %O[%q0, %c0] : memref<128x64xf32, #copy.smem> to memref<?x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %tm : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
