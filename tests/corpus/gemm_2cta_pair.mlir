// The data movement of CUTLASS's sm100 2-SM GEMM (KernelTmaWarpSpecialized2SmSm100 with
// tcgen05 MMAs of cta_group::2 and PipelineTmaUmmaAsync): a CTA pair (cluster 2x1x1)
// computes a 256-row tile; each CTA loads its 128 rows of A and its 128 rows of B into its
// own SMEM with leader-tracked TMA loads (.cta_group::2, partitioned along the rows), whose
// bytes all land on the full barrier of the pair's leader (the even CTA). f16 in, f32 out,
// 64-wide k-blocks, a 4-stage ring.
//
// Protocol: 2 roles per CTA (160 threads): a producer warp and an MMA/epilogue warpgroup.
// In both CTAs the producer acquires slot k mod 4 (its own empty[s], the producer's phase
// starting at 1) and issues its A and B loads on full[s]; the leader's loads arrive on the
// leader's full[s] expecting both CTAs' boxes (arrivals 2: one per operand), the peer's
// only deliver bytes there. In the leader, the warpgroup waits on full[s], reads the slots
// (the 2-SM MMA reads both CTAs' slots; the stand-in reads the leader's own), meets at
// named barrier 3 and releases the slot in both CTAs (tcgen05.commit multicast to the
// pair: an arrival on its own empty[s] and one on the peer's); after the K loop it tells
// the peer that the MMAs are done (the handshake: a remote arrival on the peer's acc_full)
// and stores its tile. The peer's warpgroup waits for that handshake before exiting. Each
// producer waits, after its loop, for the release of every slot (load_tail): neither CTA
// exits while the other may still arrive on its barriers or the leader's MMA read its SMEM.
//
// The math stand-in: thread t of the leader reads, of each k-block, one element of each
// 16-byte unit of A row t and B row t of its own slots (columns 8q + t mod 8, memref.load),
// sums them in f32 and writes the sum to row t of the leader's 128x128 tile. What cannot be
// expressed: the leader's reads of the peer's SMEM (no remote SMEM read, no math op that
// declares its operands), so the peer's slots are filled and released but read by no op.
//
// Launch: grid (2, M / 256), cluster (2, 1, 1), 160 threads.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @gemm_2cta_pair(%A: memref<512x512xf16>, %B: memref<256x512xf16>, %C: memref<512x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    %true = arith.constant true
    %false = arith.constant false
    %zero = arith.constant 0.0 : f32
    %k_tiles = arith.constant 8 : index
    %k_end = arith.constant 12 : index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %is_leader = arith.cmpi eq, %rank, %c0 : index
    // The pair's tile: rows m_pair .. + 256 of C, columns 0 .. + 256 (the leader writes
    // its 128 rows and the first 128 columns in the stand-in).
    %m_pair = arith.muli %by, %c256 : index
    %smem_a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_c = copy.alloc_smem : memref<128x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %acc_full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      scf.for %k = %c0 to %k_tiles step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
        %k0 = arith.muli %k, %c64 : index
        copy.async_copy %A[%m_pair, %k0] to %smem_a[%s] barrier %full[%s] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<512x512xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
        copy.async_copy %B[%c0, %k0] to %smem_b[%s] barrier %full[%s] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<256x512xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
      }
      // load_tail
      scf.for %k = %k_tiles to %k_end step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
      }
    }, {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      scf.if %is_leader {
        %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%sum = %zero) -> (f32) {
          %s = arith.remui %k, %c4 : index
          %lap = arith.divui %k, %c4 : index
          %lp = arith.remui %lap, %c2 : index
          %phase = arith.cmpi ne, %lp, %c0 : index
          copy.barrier_wait %full[%s], %phase : !copy.barrier<4>
          %sa = scf.for %q = %c0 to %c8 step %c1 iter_args(%x = %sum) -> (f32) {
            %col = arith.muli %q, %c8 : index
            %colx = arith.addi %col, %lane8 : index
            %v = memref.load %smem_a[%s, %t, %colx] : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
            %w = arith.extf %v : f16 to f32
            %y = arith.addf %x, %w : f32
            scf.yield %y : f32
          }
          %sb = scf.for %q = %c0 to %c8 step %c1 iter_args(%x = %sa) -> (f32) {
            %col = arith.muli %q, %c8 : index
            %colx = arith.addi %col, %lane8 : index
            %v = memref.load %smem_b[%s, %t, %colx] : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
            %w = arith.extf %v : f16 to f32
            %y = arith.addf %x, %w : f32
            scf.yield %y : f32
          }
          // tcgen05.commit to both CTAs' empty[s]
          copy.named_barrier_sync 3, 128
          copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<4>
          copy.peer_arrive %empty[%s] peer %peer : !copy.barrier<4>
          scf.yield %sb : f32
        }
        // The handshake: the pair's MMAs are done.
        copy.peer_arrive %acc_full[%c0] peer %peer : !copy.barrier<1>
        scf.for %c = %c0 to %c16 step %c1 {
          %col = arith.muli %c, %c8 : index
          %accv = vector.broadcast %acc : f32 to vector<8xf32>
          vector.store %accv, %smem_c[%t, %col] : memref<128x128xf32, #copy.smem>, vector<8xf32>
        }
        copy.fence_async_shared
        copy.async_copy %smem_c to %C[%m_pair, %c0] : memref<128x128xf32, #copy.smem> to memref<512x256xf32>
        copy.commit_group bulk
        copy.wait_group bulk 0 read_only
      } else {
        copy.barrier_wait %acc_full[%c0], %false : !copy.barrier<1>
      }
    }
    func.return
  }
}
