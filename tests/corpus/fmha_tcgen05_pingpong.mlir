// The data movement of FlashAttention-4's Blackwell (sm_100a) forward kernel
// (flash_attn/cute/flash_fwd_sm100.py; CUTLASS's sm100 FMHA, example 77, alike): two
// 128-row tiles of queries of one head per CTA, ping-ponged between two softmax
// warpgroups, a correction warpgroup that rescales O in TMEM between the PV MMAs and
// stores O, an MMA warp and a load warp; head dim 64, key blocks of 64.
//
// Protocol: 14 warps (448 threads): softmax warpgroups 0 and 1 (warps 0-7), the correction
// warpgroup (warps 8-11), the MMA warp (12), the load warp (13). TMEM: one 256-column
// allocation, S0 and S1 (64 f32 columns each), P0 and P1 over the first 32 columns of S0
// and S1 (two f16 a column, the PV MMA's A), O0 and O1 (64 columns each). Each barrier below
// completes one phase a key block (rings: one a lap of 2 slots); i is the query tile:
// - the load warp: Q0 and Q1 once (q_full, two loads), then for each key block n acquires
//   slot n mod 2 of the K ring and of the V ring (k_empty / v_empty, its phase starting at
//   1) and loads K[n] and V[n] (arriving on k_full / v_full);
// - the MMA warp (its lane 0 issues): per block waits for K[n]; for each i, from block 1 on
//   waits for the PV MMA of block n - 1 (pv_done[i]: it read P_i, which lies in S_i's
//   columns), fences and issues S_i = Q_i K[n]^T (4 MMAs of K 16), committing to s_full[i];
//   commits the K slot's release; waits for V[n]; for each i waits for P_i (p_full[i], the
//   four warps of softmax warpgroup i) and for O_i corrected (o_ready[i], the correction
//   warpgroup's four warps), fences and issues O_i += P_i V[n] (A from TMEM, B = V[n]
//   MN-major; overwriting O_i at block 0), committing to pv_done[i]; then the V slot's
//   release;
// - softmax warpgroup i (warp w reaches TMEM lanes 32 (w mod 4) ..): per block waits on
//   s_full[i], fences, loads its rows of S_i and waits; from block 1 on waits until the
//   correction warpgroup has read its previous row value (scale_empty[i]); writes its row
//   value to SMEM (scale[i], threads' stores) and arrives on scale_full[i]; stores P_i
//   over S_i, waits for the stores, fences before and arrives on p_full[i];
// - the correction warpgroup: per block and i waits on scale_full[i], reads the row value
//   and arrives on scale_empty[i]; from block 1 on waits for the PV MMA of block n - 1
//   (pv_done[i]), fences, loads O_i, adds the row value, stores O_i back, waits for the
//   stores and fences before; then arrives on o_ready[i]. After the last block it waits on
//   pv_done[0] and pv_done[1], loads O0 and O1, writes them to SMEM, fences the async proxy
//   (with its warpgroup's barrier), and its elected thread stores both tiles with TMA and
//   waits for the stores to read SMEM before the TMEM is freed.
//
// The math stand-in (the dialect has no exp or max): P_i is S_i's first 32 columns as the
// PV MMA reads them, each 32-bit column two f16 (FA4 stores exp(S - max) converted to f16
// pairs there); the row value is S_i's first column (FA4's row max and sum), and the
// correction adds it to O_i (FA4 scales O_i by exp(m_old - m_new)).
// tests/corpus/__init__.py holds the numpy model.
//
// Launch: grid (seqlen_q / 256, heads), 448 threads. Q and O are (heads * seqlen_q) x 64,
// K and V (heads * seqlen_k) x 64; seqlen_k is known at run time, a multiple of 64, at
// least one key block (`copy.assume %n_blocks ge 1`).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @fmha_tcgen05_pingpong(%Q: memref<?x64xf16>, %K: memref<?x64xf16>, %V: memref<?x64xf16>, %O: memref<?x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 448, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
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
    %seqlen_q = arith.muli %m_blocks, %c256 : index
    %q_head = arith.muli %head, %seqlen_q : index
    %q_off = arith.muli %m_block, %c256 : index
    %q0 = arith.addi %q_head, %q_off : index
    %q1 = arith.addi %q0, %c128 : index
    %k0 = arith.muli %head, %seqlen_k : index
    %smem_q = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_k = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    %smem_v = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    %smem_scale = copy.alloc_smem : memref<2x128xf32, #copy.smem>
    %smem_o = copy.alloc_smem : memref<2x128x64xf32, #copy.smem>
    %q_full = copy.barrier_init arrivals 2 : !copy.barrier<1>
    %k_full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %k_empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %v_full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %v_empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %s_full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %p_full = copy.barrier_init arrivals 4 : !copy.barrier<2>
    %o_ready = copy.barrier_init arrivals 4 : !copy.barrier<2>
    %pv_done = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %scale_full = copy.barrier_init arrivals 4 : !copy.barrier<2>
    %scale_empty = copy.barrier_init arrivals 4 : !copy.barrier<2>
    %tm = copy.tmem_alloc : memref<128x256xf32, #copy.tmem>
    %S0 = copy.tmem_slice %tm[0] : memref<128x256xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %P0 = copy.tmem_slice %tm[0] : memref<128x256xf32, #copy.tmem> -> memref<128x32xf32, #copy.tmem>
    %O0 = copy.tmem_slice %tm[128] : memref<128x256xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %s0_ptr = builtin.unrealized_conversion_cast %S0 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %o0_ptr = builtin.unrealized_conversion_cast %O0 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %P00 = copy.tmem_slice %tm[0] : memref<128x256xf32, #copy.tmem> -> memref<128x8xf32, #copy.tmem>
    %p00_ptr = builtin.unrealized_conversion_cast %P00 : memref<128x8xf32, #copy.tmem> to !llvm.ptr<6>
    %P01 = copy.tmem_slice %tm[8] : memref<128x256xf32, #copy.tmem> -> memref<128x8xf32, #copy.tmem>
    %p01_ptr = builtin.unrealized_conversion_cast %P01 : memref<128x8xf32, #copy.tmem> to !llvm.ptr<6>
    %P02 = copy.tmem_slice %tm[16] : memref<128x256xf32, #copy.tmem> -> memref<128x8xf32, #copy.tmem>
    %p02_ptr = builtin.unrealized_conversion_cast %P02 : memref<128x8xf32, #copy.tmem> to !llvm.ptr<6>
    %P03 = copy.tmem_slice %tm[24] : memref<128x256xf32, #copy.tmem> -> memref<128x8xf32, #copy.tmem>
    %p03_ptr = builtin.unrealized_conversion_cast %P03 : memref<128x8xf32, #copy.tmem> to !llvm.ptr<6>
    %S1 = copy.tmem_slice %tm[64] : memref<128x256xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %P1 = copy.tmem_slice %tm[64] : memref<128x256xf32, #copy.tmem> -> memref<128x32xf32, #copy.tmem>
    %O1 = copy.tmem_slice %tm[192] : memref<128x256xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %s1_ptr = builtin.unrealized_conversion_cast %S1 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %o1_ptr = builtin.unrealized_conversion_cast %O1 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %P10 = copy.tmem_slice %tm[64] : memref<128x256xf32, #copy.tmem> -> memref<128x8xf32, #copy.tmem>
    %p10_ptr = builtin.unrealized_conversion_cast %P10 : memref<128x8xf32, #copy.tmem> to !llvm.ptr<6>
    %P11 = copy.tmem_slice %tm[72] : memref<128x256xf32, #copy.tmem> -> memref<128x8xf32, #copy.tmem>
    %p11_ptr = builtin.unrealized_conversion_cast %P11 : memref<128x8xf32, #copy.tmem> to !llvm.ptr<6>
    %P12 = copy.tmem_slice %tm[80] : memref<128x256xf32, #copy.tmem> -> memref<128x8xf32, #copy.tmem>
    %p12_ptr = builtin.unrealized_conversion_cast %P12 : memref<128x8xf32, #copy.tmem> to !llvm.ptr<6>
    %P13 = copy.tmem_slice %tm[88] : memref<128x256xf32, #copy.tmem> -> memref<128x8xf32, #copy.tmem>
    %p13_ptr = builtin.unrealized_conversion_cast %P13 : memref<128x8xf32, #copy.tmem> to !llvm.ptr<6>
    %k_empty_ptr = builtin.unrealized_conversion_cast %k_empty : !copy.barrier<2> to !llvm.ptr<3>
    %v_empty_ptr = builtin.unrealized_conversion_cast %v_empty : !copy.barrier<2> to !llvm.ptr<3>
    %s_full_ptr = builtin.unrealized_conversion_cast %s_full : !copy.barrier<2> to !llvm.ptr<3>
    %pv_done_ptr = builtin.unrealized_conversion_cast %pv_done : !copy.barrier<2> to !llvm.ptr<3>
    %idesc_s = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 : i32
    %idesc_o = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 b_major mn : i32
    copy.warp_specialize warps [4, 4, 4, 1, 1] {
    ^bb0(%t: index):
      // Softmax warpgroup 0: rows of Q tile 0; S0 -> P0 (over S0), the row value for the correction.
      %w = arith.divui %t, %c32 : index
      %quarter = arith.remui %w, %c4 : index
      %lanes = arith.muli %quarter, %c32 : index
      %lane = arith.remui %t, %c32 : index
      %row = arith.addi %lanes, %lane : index
      %ci = arith.constant 0 : index
      scf.for %n = %c0 to %n_blocks step %c1 {
        %np = arith.remui %n, %c2 : index
        %mine = arith.cmpi ne, %np, %c0 : index
        %before = arith.xori %mine, %true : i1
        %later = arith.cmpi ne, %n, %c0 : index
        copy.barrier_wait %s_full[%ci], %mine : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        %sv = copy.tmem_load %S0[%c0] shape shape_32x32b num 64 : memref<128x64xf32, #copy.tmem> -> vector<64xf32>
        %pv = copy.tmem_load %S0[%c0] shape shape_32x32b num 32 : memref<128x64xf32, #copy.tmem> -> vector<32xf32>
        copy.tmem_wait load
        scf.if %later {
          copy.barrier_wait %scale_empty[%ci], %before : !copy.barrier<2>
        }
        %x = vector.extract %sv[0] : f32 from vector<64xf32>
        memref.store %x, %smem_scale[%ci, %row] : memref<2x128xf32, #copy.smem>
        copy.barrier_arrive %scale_full[%ci] issuer warps : !copy.barrier<2>
        copy.tmem_store %pv, %P0[%c0] shape shape_32x32b num 32 : vector<32xf32>, memref<128x32xf32, #copy.tmem>
        copy.tmem_wait store
        nvvm.tcgen05.fence <before>
        copy.barrier_arrive %p_full[%ci] issuer warps : !copy.barrier<2>
      }
    }, {
    ^bb0(%t: index):
      // Softmax warpgroup 1: rows of Q tile 1; S1 -> P1 (over S1), the row value for the correction.
      %w = arith.divui %t, %c32 : index
      %quarter = arith.remui %w, %c4 : index
      %lanes = arith.muli %quarter, %c32 : index
      %lane = arith.remui %t, %c32 : index
      %row = arith.addi %lanes, %lane : index
      %ci = arith.constant 1 : index
      scf.for %n = %c0 to %n_blocks step %c1 {
        %np = arith.remui %n, %c2 : index
        %mine = arith.cmpi ne, %np, %c0 : index
        %before = arith.xori %mine, %true : i1
        %later = arith.cmpi ne, %n, %c0 : index
        copy.barrier_wait %s_full[%ci], %mine : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        %sv = copy.tmem_load %S1[%c0] shape shape_32x32b num 64 : memref<128x64xf32, #copy.tmem> -> vector<64xf32>
        %pv = copy.tmem_load %S1[%c0] shape shape_32x32b num 32 : memref<128x64xf32, #copy.tmem> -> vector<32xf32>
        copy.tmem_wait load
        scf.if %later {
          copy.barrier_wait %scale_empty[%ci], %before : !copy.barrier<2>
        }
        %x = vector.extract %sv[0] : f32 from vector<64xf32>
        memref.store %x, %smem_scale[%ci, %row] : memref<2x128xf32, #copy.smem>
        copy.barrier_arrive %scale_full[%ci] issuer warps : !copy.barrier<2>
        copy.tmem_store %pv, %P1[%c0] shape shape_32x32b num 32 : vector<32xf32>, memref<128x32xf32, #copy.tmem>
        copy.tmem_wait store
        nvvm.tcgen05.fence <before>
        copy.barrier_arrive %p_full[%ci] issuer warps : !copy.barrier<2>
      }
    }, {
    ^bb0(%t: index):
      // The correction warpgroup: O0 and O1 in TMEM between the PV MMAs, then the epilogue.
      %w = arith.divui %t, %c32 : index
      %quarter = arith.remui %w, %c4 : index
      %lanes = arith.muli %quarter, %c32 : index
      %lane = arith.remui %t, %c32 : index
      %row = arith.addi %lanes, %lane : index
      scf.for %n = %c0 to %n_blocks step %c1 {
        %np = arith.remui %n, %c2 : index
        %mine = arith.cmpi ne, %np, %c0 : index
        %before = arith.xori %mine, %true : i1
        %later = arith.cmpi ne, %n, %c0 : index
        %ci0 = arith.constant 0 : index
        copy.barrier_wait %scale_full[%ci0], %mine : !copy.barrier<2>
        %x0 = memref.load %smem_scale[%ci0, %row] : memref<2x128xf32, #copy.smem>
        copy.barrier_arrive %scale_empty[%ci0] issuer warps : !copy.barrier<2>
        scf.if %later {
          copy.barrier_wait %pv_done[%ci0], %before : !copy.barrier<2>
          nvvm.tcgen05.fence <after>
          %ov = copy.tmem_load %O0[%c0] shape shape_32x32b num 64 : memref<128x64xf32, #copy.tmem> -> vector<64xf32>
          copy.tmem_wait load
          %xb = vector.broadcast %x0 : f32 to vector<64xf32>
          %ov2 = arith.addf %ov, %xb : vector<64xf32>
          copy.tmem_store %ov2, %O0[%c0] shape shape_32x32b num 64 : vector<64xf32>, memref<128x64xf32, #copy.tmem>
          copy.tmem_wait store
          nvvm.tcgen05.fence <before>
        }
        copy.barrier_arrive %o_ready[%ci0] issuer warps : !copy.barrier<2>
        %ci1 = arith.constant 1 : index
        copy.barrier_wait %scale_full[%ci1], %mine : !copy.barrier<2>
        %x1 = memref.load %smem_scale[%ci1, %row] : memref<2x128xf32, #copy.smem>
        copy.barrier_arrive %scale_empty[%ci1] issuer warps : !copy.barrier<2>
        scf.if %later {
          copy.barrier_wait %pv_done[%ci1], %before : !copy.barrier<2>
          nvvm.tcgen05.fence <after>
          %ov = copy.tmem_load %O1[%c0] shape shape_32x32b num 64 : memref<128x64xf32, #copy.tmem> -> vector<64xf32>
          copy.tmem_wait load
          %xb = vector.broadcast %x1 : f32 to vector<64xf32>
          %ov2 = arith.addf %ov, %xb : vector<64xf32>
          copy.tmem_store %ov2, %O1[%c0] shape shape_32x32b num 64 : vector<64xf32>, memref<128x64xf32, #copy.tmem>
          copy.tmem_wait store
          nvvm.tcgen05.fence <before>
        }
        copy.barrier_arrive %o_ready[%ci1] issuer warps : !copy.barrier<2>
      }
      %last = arith.subi %n_blocks, %c1 : index
      %lp = arith.remui %last, %c2 : index
      %final = arith.cmpi ne, %lp, %c0 : index
      %e0 = arith.constant 0 : index
      copy.barrier_wait %pv_done[%e0], %final : !copy.barrier<2>
      nvvm.tcgen05.fence <after>
      %o0 = copy.tmem_load %O0[%c0] shape shape_32x32b num 64 : memref<128x64xf32, #copy.tmem> -> vector<64xf32>
      copy.tmem_wait load
      vector.store %o0, %smem_o[%e0, %row, %c0] : memref<2x128x64xf32, #copy.smem>, vector<64xf32>
      %e1 = arith.constant 1 : index
      copy.barrier_wait %pv_done[%e1], %final : !copy.barrier<2>
      nvvm.tcgen05.fence <after>
      %o1 = copy.tmem_load %O1[%c0] shape shape_32x32b num 64 : memref<128x64xf32, #copy.tmem> -> vector<64xf32>
      copy.tmem_wait load
      vector.store %o1, %smem_o[%e1, %row, %c0] : memref<2x128x64xf32, #copy.smem>, vector<64xf32>
      nvvm.tcgen05.fence <before>
      copy.fence_async_shared
      copy.async_copy %smem_o[%c0] to %O[%q0, %c0] : memref<2x128x64xf32, #copy.smem> to memref<?x64xf32>
      copy.async_copy %smem_o[%c1] to %O[%q1, %c0] : memref<2x128x64xf32, #copy.smem> to memref<?x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
    }, {
    ^bb0(%t: index):
      // The MMA warp (lane 0 issues): S0 and S1 = Q K[n]^T, then O0 and O1 += P V[n].
      %lead = arith.cmpi eq, %t, %c0 : index
      %q2 = arith.constant 2 : i64
      %q4 = arith.constant 4 : i64
      %q6 = arith.constant 6 : i64
      %v1 = arith.constant 128 : i64
      %v2 = arith.constant 256 : i64
      %v3 = arith.constant 384 : i64
      copy.barrier_wait %q_full[%c0], %false : !copy.barrier<1>
      %dq0 = copy.matrix_descriptor %smem_q[%c0] major k tcgen05 : memref<2x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %dq1 = copy.matrix_descriptor %smem_q[%c1] major k tcgen05 : memref<2x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      scf.for %n = %c0 to %n_blocks step %c1 {
        %s = arith.remui %n, %c2 : index
        %lap = arith.divui %n, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %np = arith.remui %n, %c2 : index
        %mine = arith.cmpi ne, %np, %c0 : index
        %before = arith.xori %mine, %true : i1
        %later = arith.cmpi ne, %n, %c0 : index
        %s64 = arith.index_cast %s : index to i64
        copy.barrier_wait %k_full[%s], %phase : !copy.barrier<2>
        %dk = copy.matrix_descriptor %smem_k[%s] major k tcgen05 : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
        %ci0 = arith.constant 0 : index
        scf.if %later {
          copy.barrier_wait %pv_done[%ci0], %before : !copy.barrier<2>
        }
        nvvm.tcgen05.fence <after>
        scf.if %lead {
          nvvm.tcgen05.mma %s0_ptr, %dq0, %dk, %idesc_s, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          %dq0_2 = arith.addi %dq0, %q2 : i64
          %dk0_2 = arith.addi %dk, %q2 : i64
          nvvm.tcgen05.mma %s0_ptr, %dq0_2, %dk0_2, %idesc_s, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          %dq0_4 = arith.addi %dq0, %q4 : i64
          %dk0_4 = arith.addi %dk, %q4 : i64
          nvvm.tcgen05.mma %s0_ptr, %dq0_4, %dk0_4, %idesc_s, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          %dq0_6 = arith.addi %dq0, %q6 : i64
          %dk0_6 = arith.addi %dk, %q6 : i64
          nvvm.tcgen05.mma %s0_ptr, %dq0_6, %dk0_6, %idesc_s, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          %sf0 = llvm.getelementptr %s_full_ptr[0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
          nvvm.tcgen05.commit %sf0 : !llvm.ptr<3>
        }
        %ci1 = arith.constant 1 : index
        scf.if %later {
          copy.barrier_wait %pv_done[%ci1], %before : !copy.barrier<2>
        }
        nvvm.tcgen05.fence <after>
        scf.if %lead {
          nvvm.tcgen05.mma %s1_ptr, %dq1, %dk, %idesc_s, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          %dq1_2 = arith.addi %dq1, %q2 : i64
          %dk1_2 = arith.addi %dk, %q2 : i64
          nvvm.tcgen05.mma %s1_ptr, %dq1_2, %dk1_2, %idesc_s, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          %dq1_4 = arith.addi %dq1, %q4 : i64
          %dk1_4 = arith.addi %dk, %q4 : i64
          nvvm.tcgen05.mma %s1_ptr, %dq1_4, %dk1_4, %idesc_s, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          %dq1_6 = arith.addi %dq1, %q6 : i64
          %dk1_6 = arith.addi %dk, %q6 : i64
          nvvm.tcgen05.mma %s1_ptr, %dq1_6, %dk1_6, %idesc_s, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          %sf1 = llvm.getelementptr %s_full_ptr[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
          nvvm.tcgen05.commit %sf1 : !llvm.ptr<3>
        }
        scf.if %lead {
          %k_free = llvm.getelementptr %k_empty_ptr[%s64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
          nvvm.tcgen05.commit %k_free : !llvm.ptr<3>
        }
        copy.barrier_wait %v_full[%s], %phase : !copy.barrier<2>
        %dv = copy.matrix_descriptor %smem_v[%s] major mn tcgen05 : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
        copy.barrier_wait %p_full[%ci0], %mine : !copy.barrier<2>
        copy.barrier_wait %o_ready[%ci0], %mine : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        scf.if %lead {
          nvvm.tcgen05.mma %o0_ptr, %p00_ptr, %dv, %idesc_o, %later {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
          %dv0_1 = arith.addi %dv, %v1 : i64
          nvvm.tcgen05.mma %o0_ptr, %p01_ptr, %dv0_1, %idesc_o, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
          %dv0_2 = arith.addi %dv, %v2 : i64
          nvvm.tcgen05.mma %o0_ptr, %p02_ptr, %dv0_2, %idesc_o, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
          %dv0_3 = arith.addi %dv, %v3 : i64
          nvvm.tcgen05.mma %o0_ptr, %p03_ptr, %dv0_3, %idesc_o, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
          %pd0 = llvm.getelementptr %pv_done_ptr[0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
          nvvm.tcgen05.commit %pd0 : !llvm.ptr<3>
        }
        copy.barrier_wait %p_full[%ci1], %mine : !copy.barrier<2>
        copy.barrier_wait %o_ready[%ci1], %mine : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        scf.if %lead {
          nvvm.tcgen05.mma %o1_ptr, %p10_ptr, %dv, %idesc_o, %later {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
          %dv1_1 = arith.addi %dv, %v1 : i64
          nvvm.tcgen05.mma %o1_ptr, %p11_ptr, %dv1_1, %idesc_o, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
          %dv1_2 = arith.addi %dv, %v2 : i64
          nvvm.tcgen05.mma %o1_ptr, %p12_ptr, %dv1_2, %idesc_o, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
          %dv1_3 = arith.addi %dv, %v3 : i64
          nvvm.tcgen05.mma %o1_ptr, %p13_ptr, %dv1_3, %idesc_o, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
          %pd1 = llvm.getelementptr %pv_done_ptr[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
          nvvm.tcgen05.commit %pd1 : !llvm.ptr<3>
        }
        scf.if %lead {
          %v_free = llvm.getelementptr %v_empty_ptr[%s64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
          nvvm.tcgen05.commit %v_free : !llvm.ptr<3>
        }
      }
    }, {
    ^bb0(%t: index):
      // The load warp: Q0 and Q1 once, K[n] and V[n] into 2-stage rings.
      copy.async_copy %Q[%q0, %c0] to %smem_q[%c0] barrier %q_full[%c0] : memref<?x64xf16> to memref<2x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %Q[%q1, %c0] to %smem_q[%c1] barrier %q_full[%c0] : memref<?x64xf16> to memref<2x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      scf.for %n = %c0 to %n_blocks step %c1 {
        %s = arith.remui %n, %c2 : index
        %lap = arith.divui %n, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        %nk = arith.muli %n, %c64 : index
        %krow = arith.addi %k0, %nk : index
        copy.barrier_wait %k_empty[%s], %acquire : !copy.barrier<2>
        copy.async_copy %K[%krow, %c0] to %smem_k[%s] barrier %k_full[%s] : memref<?x64xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
        copy.barrier_wait %v_empty[%s], %acquire : !copy.barrier<2>
        copy.async_copy %V[%krow, %c0] to %smem_v[%s] barrier %v_full[%s] : memref<?x64xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
      }
    }
    copy.tmem_dealloc %tm : memref<128x256xf32, #copy.tmem>
    func.return
  }
}
