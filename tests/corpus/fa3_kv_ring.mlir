// The data movement of FlashAttention-3's Hopper forward kernel (hopper/mainloop_fwd_sm90_
// tma_gmma_ws.hpp with the intra-warpgroup overlap, IntraWGOverlap) at head dim 64: one
// 128-row block of queries of one head per CTA, over K and V blocks of 128 keys.
//
// Protocol: 3 warpgroups (384 threads). Warpgroup 0 is the producer (setmaxnreg 24,
// warp 0 runs the loop): it loads the Q tile once (arriving on q_full), then for
// each key block n acquires slot n mod 2 of the K ring and of the V ring (each its own
// full/empty pair, pipeline_k and pipeline_v, the producer's phase starting at 1) and loads
// K[n] and V[n] with arriving TMA loads. The two consumer warpgroups split the Q tile's
// rows; each waits for Q, then computes S = Q K[0]^T, and in the steady state overlaps the
// next block's QK^T with the current block's PV: wait K[n], read it, release it; then wait
// V[n - 1], read it, release it; the last V block after the loop. Each slot's empty barrier
// counts the 8 consumer warps. The epilogue: each consumer warpgroup writes its 64 rows of
// O to SMEM and fences; the 256 consumer threads meet at named barrier 4; consumer
// warpgroup 0's elected thread stores the 128x64 O tile with TMA and waits for the store to
// read SMEM before exiting.
//
// The key length is known at run time (K's rows / heads); at least one key block
// (the prologue reads K[0], as FA3's does), which the kernel states with
// `copy.assume %n_blocks ge 1` (the protocol analysis then tries no empty key loop;
// --debug-guards and the interpreter check it).
//
// The math stand-in (no wgmma in the dialect yet): thread t of consumer warpgroup w reads
// one element of each 16-byte unit of Q row 64w + t / 2, columns 32 (t mod 2) .. + 32, and,
// of each key block, of K row t and V row t (columns 8q + t mod 8, memref.load of the
// swizzled slots), sums them in f32
// and writes the sum to columns 32 (t mod 2) .. + 32 of its row of O.
// tests/corpus/__init__.py holds the numpy model.
//
// Launch: grid (seqlen_q / 128, heads), 384 threads. Q is (heads * seqlen_q) x 64, K and V
// (heads * seqlen_k) x 64, O (heads * seqlen_q) x 64.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @fa3_kv_ring(%Q: memref<?x64xf16>, %K: memref<?x64xf16>, %V: memref<?x64xf16>, %O: memref<?x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 384, 1, 1>} {
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
      %acc1 = scf.for %n = %c1 to %n_blocks step %c1 iter_args(%sum = %acc0) -> (f32) {
        // S = Q K[n]^T, issued before the PV of block n - 1.
        %s = arith.remui %n, %c2 : index
        %lap = arith.divui %n, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
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
      %acc1 = scf.for %n = %c1 to %n_blocks step %c1 iter_args(%sum = %acc0) -> (f32) {
        %s = arith.remui %n, %c2 : index
        %lap = arith.divui %n, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
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
