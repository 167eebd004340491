// The data movement of FlashAttention-3's Hopper forward kernel with the inter-warpgroup
// pingpong (hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp with UseSchedulerBarrier: the two
// consumer warpgroups take turns issuing their QK^T GEMMs through named barriers, so that
// one warpgroup's softmax overlaps the other's GEMMs) on top of the intra-warpgroup
// overlap of fa3_kv_ring: head dim 64, one 128-row block of queries per CTA, K and V
// blocks of 128 keys.
//
// Protocol: as fa3_kv_ring (a producer warpgroup loading Q once and K[n] and V[n] into two
// 2-stage rings; two consumer warpgroups each reading K[n], then V[n - 1], and releasing
// each slot; an epilogue through SMEM and a TMA store), with the warp scheduler barriers:
// consumer warpgroup w waits on named barrier 5 + w (bar.sync, 256 threads) before it reads
// K[n] (its QK^T GEMM) and, once it has, arrives on the other's (bar.arrive 5 + (1 - w),
// 256); warpgroup 1 arrives on warpgroup 0's barrier first (mma_init), so warpgroup 0 goes
// first. Warpgroup 1's last arrival meets no sync: the kernel ends with it pending, as
// FA3's does (a named barrier's state ends with the CTA).
//
// The math stand-in is fa3_kv_ring's (the scheduler barriers change no value):
// tests/corpus/__init__.py holds the numpy model.
//
// Launch: grid (seqlen_q / 128, heads), 384 threads.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @fa3_pingpong(%Q: memref<?x64xf16>, %K: memref<?x64xf16>, %V: memref<?x64xf16>, %O: memref<?x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 384, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %false = arith.constant false
    %zero = arith.constant 0.0 : f32
    %m_block = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %head = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %m_blocks = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %heads = "gpu.grid_dim"() <{dimension = #gpu<dim y>}> : () -> index
    %rows_k = memref.dim %K, %c0 : memref<?x64xf16>
    %seqlen_k = arith.divui %rows_k, %heads : index
    %n_blocks = arith.divui %seqlen_k, %c128 : index
    copy.assume %n_blocks ge 1 : index
    %seqlen_q = arith.muli %m_blocks, %c128 : index
    %q_head = arith.muli %head, %seqlen_q : index
    %q_off = arith.muli %m_block, %c128 : index
    %q0 = arith.addi %q_head, %q_off : index
    %k0 = arith.muli %head, %seqlen_k : index
    %smem_q = copy.alloc_smem : memref<128x64xf16, #copy.smem<swizzle = 128>>
    %smem_k = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_v = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_o = copy.alloc_smem : memref<128x64xf32, #copy.smem>
    %q_full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %k_full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %k_empty = copy.barrier_init arrivals 8 : !copy.barrier<2>
    %v_full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %v_empty = copy.barrier_init arrivals 8 : !copy.barrier<2>
    copy.warp_specialize warps [4, 4, 4] maxnreg [24, 240, 240] {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      %warp = arith.divui %t, %c32 : index
      %is_dma = arith.cmpi eq, %warp, %c0 : index
      scf.if %is_dma {
        copy.async_copy %Q[%q0, %c0] to %smem_q barrier %q_full[%c0] : memref<?x64xf16> to memref<128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
        scf.for %n = %c0 to %n_blocks step %c1 {
          %s = arith.remui %n, %c2 : index
          %lap = arith.divui %n, %c2 : index
          %lp = arith.remui %lap, %c2 : index
          %phase = arith.cmpi ne, %lp, %c0 : index
          %acquire = arith.xori %phase, %true : i1
          %nk = arith.muli %n, %c128 : index
          %row = arith.addi %k0, %nk : index
          copy.barrier_wait %k_empty[%s], %acquire : !copy.barrier<2>
          copy.async_copy %K[%row, %c0] to %smem_k[%s] barrier %k_full[%s] : memref<?x64xf16> to memref<2x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
          copy.barrier_wait %v_empty[%s], %acquire : !copy.barrier<2>
          copy.async_copy %V[%row, %c0] to %smem_v[%s] barrier %v_full[%s] : memref<?x64xf16> to memref<2x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
        }
      }
    }, {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      // Consumer warpgroup 0: rows 0-63 of the Q tile; it stores O.
      %half = arith.remui %t, %c2 : index
      %r = arith.divui %t, %c2 : index
      %cq = arith.muli %half, %c32 : index
      copy.barrier_wait %q_full[%c0], %false : !copy.barrier<1>
      %accq = scf.for %j = %c0 to %c4 step %c1 iter_args(%x = %zero) -> (f32) {
        %j8 = arith.muli %j, %c8 : index
        %col = arith.addi %cq, %j8 : index
        %colx = arith.addi %col, %lane8 : index
        %v = memref.load %smem_q[%r, %colx] : memref<128x64xf16, #copy.smem<swizzle = 128>>
        %w = arith.extf %v : f16 to f32
        %y = arith.addf %x, %w : f32
        scf.yield %y : f32
      }
      // S = Q K[0]^T
      copy.named_barrier_sync 5, 256
      copy.barrier_wait %k_full[%c0], %false : !copy.barrier<2>
      %acc0 = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %accq) -> (f32) {
        %col = arith.muli %j, %c8 : index
        %colx = arith.addi %col, %lane8 : index
        %v = memref.load %smem_k[%c0, %t, %colx] : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
        %w = arith.extf %v : f16 to f32
        %y = arith.addf %x, %w : f32
        scf.yield %y : f32
      }
      copy.barrier_arrive %k_empty[%c0] issuer warps : !copy.barrier<2>
      copy.named_barrier_arrive 6, 256
      %acc1 = scf.for %n = %c1 to %n_blocks step %c1 iter_args(%sum = %acc0) -> (f32) {
        // S = Q K[n]^T, issued before the PV of block n - 1.
        %s = arith.remui %n, %c2 : index
        %lap = arith.divui %n, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        copy.named_barrier_sync 5, 256
        copy.barrier_wait %k_full[%s], %phase : !copy.barrier<2>
        %sk = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %sum) -> (f32) {
          %col = arith.muli %j, %c8 : index
          %colx = arith.addi %col, %lane8 : index
          %v = memref.load %smem_k[%s, %t, %colx] : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
          %w = arith.extf %v : f16 to f32
          %y = arith.addf %x, %w : f32
          scf.yield %y : f32
        }
        copy.barrier_arrive %k_empty[%s] issuer warps : !copy.barrier<2>
        copy.named_barrier_arrive 6, 256
        // O += P V[n - 1]
        %n1 = arith.subi %n, %c1 : index
        %sv = arith.remui %n1, %c2 : index
        %lapv = arith.divui %n1, %c2 : index
        %lpv = arith.remui %lapv, %c2 : index
        %phasev = arith.cmpi ne, %lpv, %c0 : index
        copy.barrier_wait %v_full[%sv], %phasev : !copy.barrier<2>
        %svv = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %sk) -> (f32) {
          %col = arith.muli %j, %c8 : index
          %colx = arith.addi %col, %lane8 : index
          %v = memref.load %smem_v[%sv, %t, %colx] : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
          %w = arith.extf %v : f16 to f32
          %y = arith.addf %x, %w : f32
          scf.yield %y : f32
        }
        copy.barrier_arrive %v_empty[%sv] issuer warps : !copy.barrier<2>
        scf.yield %svv : f32
      }
      // The last PV.
      %last = arith.subi %n_blocks, %c1 : index
      %sl = arith.remui %last, %c2 : index
      %lapl = arith.divui %last, %c2 : index
      %lpl = arith.remui %lapl, %c2 : index
      %phasel = arith.cmpi ne, %lpl, %c0 : index
      copy.barrier_wait %v_full[%sl], %phasel : !copy.barrier<2>
      %acc = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %acc1) -> (f32) {
        %col = arith.muli %j, %c8 : index
        %colx = arith.addi %col, %lane8 : index
        %v = memref.load %smem_v[%sl, %t, %colx] : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
        %w = arith.extf %v : f16 to f32
        %y = arith.addf %x, %w : f32
        scf.yield %y : f32
      }
      copy.barrier_arrive %v_empty[%sl] issuer warps : !copy.barrier<2>
      // Epilogue: O through SMEM; warpgroup 0 stores the tile once both halves are fenced.
      scf.for %c = %c0 to %c4 step %c1 {
        %c8c = arith.muli %c, %c8 : index
        %col = arith.addi %cq, %c8c : index
        %accv = vector.broadcast %acc : f32 to vector<8xf32>
        vector.store %accv, %smem_o[%r, %col] : memref<128x64xf32, #copy.smem>, vector<8xf32>
      }
      copy.fence_async_shared
      copy.named_barrier_sync 4, 256
      copy.async_copy %smem_o to %O[%q0, %c0] : memref<128x64xf32, #copy.smem> to memref<?x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
    }, {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      // Consumer warpgroup 1: rows 64-127 of the Q tile.
      %half = arith.remui %t, %c2 : index
      %r0 = arith.divui %t, %c2 : index
      %r = arith.addi %r0, %c64 : index
      %cq = arith.muli %half, %c32 : index
      copy.named_barrier_arrive 5, 256
      copy.barrier_wait %q_full[%c0], %false : !copy.barrier<1>
      %accq = scf.for %j = %c0 to %c4 step %c1 iter_args(%x = %zero) -> (f32) {
        %j8 = arith.muli %j, %c8 : index
        %col = arith.addi %cq, %j8 : index
        %colx = arith.addi %col, %lane8 : index
        %v = memref.load %smem_q[%r, %colx] : memref<128x64xf16, #copy.smem<swizzle = 128>>
        %w = arith.extf %v : f16 to f32
        %y = arith.addf %x, %w : f32
        scf.yield %y : f32
      }
      copy.named_barrier_sync 6, 256
      copy.barrier_wait %k_full[%c0], %false : !copy.barrier<2>
      %acc0 = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %accq) -> (f32) {
        %col = arith.muli %j, %c8 : index
        %colx = arith.addi %col, %lane8 : index
        %v = memref.load %smem_k[%c0, %t, %colx] : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
        %w = arith.extf %v : f16 to f32
        %y = arith.addf %x, %w : f32
        scf.yield %y : f32
      }
      copy.barrier_arrive %k_empty[%c0] issuer warps : !copy.barrier<2>
      copy.named_barrier_arrive 5, 256
      %acc1 = scf.for %n = %c1 to %n_blocks step %c1 iter_args(%sum = %acc0) -> (f32) {
        %s = arith.remui %n, %c2 : index
        %lap = arith.divui %n, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        copy.named_barrier_sync 6, 256
        copy.barrier_wait %k_full[%s], %phase : !copy.barrier<2>
        %sk = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %sum) -> (f32) {
          %col = arith.muli %j, %c8 : index
          %colx = arith.addi %col, %lane8 : index
          %v = memref.load %smem_k[%s, %t, %colx] : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
          %w = arith.extf %v : f16 to f32
          %y = arith.addf %x, %w : f32
          scf.yield %y : f32
        }
        copy.barrier_arrive %k_empty[%s] issuer warps : !copy.barrier<2>
        copy.named_barrier_arrive 5, 256
        %n1 = arith.subi %n, %c1 : index
        %sv = arith.remui %n1, %c2 : index
        %lapv = arith.divui %n1, %c2 : index
        %lpv = arith.remui %lapv, %c2 : index
        %phasev = arith.cmpi ne, %lpv, %c0 : index
        copy.barrier_wait %v_full[%sv], %phasev : !copy.barrier<2>
        %svv = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %sk) -> (f32) {
          %col = arith.muli %j, %c8 : index
          %colx = arith.addi %col, %lane8 : index
          %v = memref.load %smem_v[%sv, %t, %colx] : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
          %w = arith.extf %v : f16 to f32
          %y = arith.addf %x, %w : f32
          scf.yield %y : f32
        }
        copy.barrier_arrive %v_empty[%sv] issuer warps : !copy.barrier<2>
        scf.yield %svv : f32
      }
      %last = arith.subi %n_blocks, %c1 : index
      %sl = arith.remui %last, %c2 : index
      %lapl = arith.divui %last, %c2 : index
      %lpl = arith.remui %lapl, %c2 : index
      %phasel = arith.cmpi ne, %lpl, %c0 : index
      copy.barrier_wait %v_full[%sl], %phasel : !copy.barrier<2>
      %acc = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %acc1) -> (f32) {
        %col = arith.muli %j, %c8 : index
        %colx = arith.addi %col, %lane8 : index
        %v = memref.load %smem_v[%sl, %t, %colx] : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
        %w = arith.extf %v : f16 to f32
        %y = arith.addf %x, %w : f32
        scf.yield %y : f32
      }
      copy.barrier_arrive %v_empty[%sl] issuer warps : !copy.barrier<2>
      scf.for %c = %c0 to %c4 step %c1 {
        %c8c = arith.muli %c, %c8 : index
        %col = arith.addi %cq, %c8c : index
        %accv = vector.broadcast %acc : f32 to vector<8xf32>
        vector.store %accv, %smem_o[%r, %col] : memref<128x64xf32, #copy.smem>, vector<8xf32>
      }
      copy.fence_async_shared
      copy.named_barrier_sync 4, 256
    }
    func.return
  }
}
