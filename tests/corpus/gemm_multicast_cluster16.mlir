// The data movement of CUTLASS's sm90 warp-specialized GEMM on the largest cluster, 4x4
// (16 CTAs, a non-portable cluster size: cudaFuncAttributeNonPortableClusterSizeAllowed),
// with A and B multicast (KernelTmaWarpSpecialized, ClusterShape 4x4x1,
// SM90_TMA_LOAD_MULTICAST for both operands, PipelineTmaAsync with cluster-wide consumer
// releases and the producer's load_tail): C = A * B^T, A M x K and B N x K (K-major), f16
// in, f32 out, 128x128x64 tiles. The 4 CTAs of a cluster row (same blockIdx.y) share A's
// rows, the 4 of a cluster column (same blockIdx.x) share B's: each CTA loads a quarter of
// each box and multicasts it along its row (A) or column (B).
//
// Protocol: 2 warpgroups (256 threads) per CTA. The producer warp acquires slot k mod 4 of
// the 4-stage ring (empty[s], the producer's phase starting at 1), expects 32768 bytes on
// full[s] (the whole A and B boxes, three quarters of each delivered by peers'
// multicasts) and issues its quarter of the A box multicast along the cluster's x
// (collective dim 0) and its quarter of the B box multicast along its y (dim 1). The
// consumer warpgroup waits on full[s], reads both slots (the wgmma operands; memref loads
// here), meets at named barrier 3 and releases the slot on its own empty[s] and on those
// of its three row peers (which write its A slot) and its three column peers (which write
// its B slot); empty[s] so counts 7.
// After its loop the producer waits for the release of every slot (load_tail). The
// epilogue stores the tile with TMA.
//
// The math stand-in (no wgmma in the dialect yet): thread t reads, of each k-block, one
// element of each 16-byte unit of A row t and of B row t (columns 8q + t mod 8, memref.load
// of the swizzled slots), sums them
// in f32 and writes the sum to the whole row t of the tile. tests/corpus/__init__.py holds
// the numpy model.
//
// Launch: grid (N / 128, M / 128), cluster (4, 4, 1), 256 threads.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @gemm_multicast_cluster16(%A: memref<1024x512xf16>, %B: memref<1024x512xf16>, %C: memref<1024x1024xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>, copy.cluster = array<i32: 4, 4, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %zero = arith.constant 0.0 : f32
    %k_tiles = arith.constant 8 : index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    // The CTA's rank in the cluster (x fastest), its row peers (the other x, sharing A)
    // and its column peers (the other y, sharing B).
    %c12 = arith.constant 12 : index
    %rank_x = arith.remui %bx, %c4 : index
    %rank_y = arith.remui %by, %c4 : index
    %ry4 = arith.muli %rank_y, %c4 : index
    %rank = arith.addi %rank_x, %ry4 : index
    %row_peer1 = arith.xori %rank, %c1 : index
    %row_peer2 = arith.xori %rank, %c2 : index
    %row_peer3 = arith.xori %rank, %c3 : index
    %col_peer1 = arith.xori %rank, %c4 : index
    %col_peer2 = arith.xori %rank, %c8 : index
    %col_peer3 = arith.xori %rank, %c12 : index
    %k_end = arith.addi %k_tiles, %c4 : index
    %smem_a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_c = copy.alloc_smem : memref<128x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 7 : !copy.barrier<4>
    copy.warp_specialize warps [4, 4] maxnreg [40, 232] {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      %warp = arith.divui %t, %c32 : index
      %is_dma = arith.cmpi eq, %warp, %c0 : index
      scf.if %is_dma {
        scf.for %k = %c0 to %k_tiles step %c1 {
          %s = arith.remui %k, %c4 : index
          %lap = arith.divui %k, %c4 : index
          %lp = arith.remui %lap, %c2 : index
          %phase = arith.cmpi ne, %lp, %c0 : index
          %acquire = arith.xori %phase, %true : i1
          // Every CTA whose multicast writes this slot has released it.
          copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
          copy.barrier_arrive_expect_tx %full[%s], 32768 : !copy.barrier<4>
          %k0 = arith.muli %k, %c64 : index
          copy.async_copy %A[%m0, %k0] to %smem_a[%s] barrier %full[%s] {arrive = false, collective = array<i64: 0>} : memref<1024x512xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          copy.async_copy %B[%n0, %k0] to %smem_b[%s] barrier %full[%s] {arrive = false, collective = array<i64: 1>} : memref<1024x512xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
        }
        // load_tail: wait until every slot is released by every CTA that writes or arrives
        // into it, so that no peer's arrival or multicast targets this CTA after it exits.
        scf.for %k = %k_tiles to %k_end step %c1 {
          %s = arith.remui %k, %c4 : index
          %lap = arith.divui %k, %c4 : index
          %lp = arith.remui %lap, %c2 : index
          %phase = arith.cmpi ne, %lp, %c0 : index
          %acquire = arith.xori %phase, %true : i1
          copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
        }
      }
    }, {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
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
        // consumer_release: the warpgroup is done with slot s; release it in this CTA and
        // in every CTA whose multicast writes it.
        copy.named_barrier_sync 3, 128
        copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<4>
        copy.peer_arrive %empty[%s] peer %row_peer1 : !copy.barrier<4>
        copy.peer_arrive %empty[%s] peer %row_peer2 : !copy.barrier<4>
        copy.peer_arrive %empty[%s] peer %row_peer3 : !copy.barrier<4>
        copy.peer_arrive %empty[%s] peer %col_peer1 : !copy.barrier<4>
        copy.peer_arrive %empty[%s] peer %col_peer2 : !copy.barrier<4>
        copy.peer_arrive %empty[%s] peer %col_peer3 : !copy.barrier<4>
        scf.yield %sb : f32
      }
      scf.for %c = %c0 to %c16 step %c1 {
        %col = arith.muli %c, %c8 : index
        %accv = vector.broadcast %acc : f32 to vector<8xf32>
        vector.store %accv, %smem_c[%t, %col] : memref<128x128xf32, #copy.smem>, vector<8xf32>
      }
      copy.fence_async_shared
      copy.async_copy %smem_c to %C[%m0, %n0] : memref<128x128xf32, #copy.smem> to memref<1024x1024xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
    }
    func.return
  }
}
