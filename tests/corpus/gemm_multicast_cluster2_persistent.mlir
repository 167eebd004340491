// The data movement of CUTLASS's sm90 persistent warp-specialized GEMM on a cluster of 2 with
// A multicast (KernelTmaWarpSpecializedCooperative with the persistent tile scheduler,
// ClusterShape 2x1x1, SM90_TMA_LOAD_MULTICAST for A, PipelineTmaAsync with cluster-wide
// consumer releases, the producer's load_tail): C = A * B^T, A M x K and B N x K (K-major),
// f16 in, f32 out, 128x128x64 tiles, M and N known only at run time, K = 256 (4 k-blocks).
//
// Protocol: 2 warpgroups (256 threads) per CTA, persistent over pairs of tiles: cluster c
// takes pairs c, c + G/2, ... (G = gridDim.x); CTA r of the cluster computes tile
// (m, 2p + r) of pair (m, p), so both CTAs of a cluster share A's rows. The producer warp
// counts the ring's position over tiles and k-blocks (slot it mod 4, its phase starting
// at 1); for each it acquires the slot (empty[s]: released by both CTAs, as the peer's
// multicast writes this CTA's A slot), expects 32768 bytes on full[s] (the whole A box,
// half of which the peer delivers, and its own B box) and issues its half of the A box
// multicast to both CTAs and its B box. After its tile loop it waits for the release of
// the 4 slots after the last (load_tail, `for it = count * 4 to count * 4 + 4`): no peer's
// arrival or multicast may target a CTA that has exited. The consumer warpgroup waits on
// full[s], reads both slots (memref loads here: the stand-in for the wgmma), meets at
// named barrier 3 and releases the slot here and in the peer (copy.peer_arrive); per tile
// it waits until the previous tile's TMA store has read the staging buffer, writes the
// tile, fences and stores it, and drains the stores at the end.
//
// The math stand-in: thread t reads, of each k-block, one element of each 16-byte unit of
// A row t and of B row t (columns 8q + t mod 8) and sums them into the whole row t of its
// tile. tests/corpus/__init__.py holds the numpy model.
//
// Launch: grid (G), G even, cluster (2, 1, 1), 256 threads.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @gemm_multicast_cluster2_persistent(%A: memref<?x256xf16>, %B: memref<?x256xf16>, %C: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %true = arith.constant true
    %zero = arith.constant 0.0 : f32
    %k_tiles = arith.constant 4 : index
    %M = memref.dim %A, %c0 : memref<?x256xf16>
    %N = memref.dim %B, %c0 : memref<?x256xf16>
    %tiles_m = arith.divui %M, %c128 : index
    %pairs_n = arith.divui %N, %c256 : index
    %pairs = arith.muli %tiles_m, %pairs_n : index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %nbx = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    // The CTA's rank in the cluster and its peer's; the cluster's pair tiles: cid + j * clusters.
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %cid = arith.divui %bx, %c2 : index
    %clusters = arith.divui %nbx, %c2 : index
    %left = arith.subi %pairs, %cid : index
    %cm1 = arith.subi %clusters, %c1 : index
    %num = arith.addi %left, %cm1 : index
    %count = arith.divui %num, %clusters : index
    %smem_a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_c = copy.alloc_smem : memref<128x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 2 : !copy.barrier<4>
    copy.warp_specialize warps [4, 4] maxnreg [40, 232] {
    ^bb0(%t: index):
      %warp = arith.divui %t, %c32 : index
      %is_dma = arith.cmpi eq, %warp, %c0 : index
      scf.if %is_dma {
        scf.for %j = %c0 to %count step %c1 {
          %jc = arith.muli %j, %clusters : index
          %pt = arith.addi %cid, %jc : index
          %tm = arith.divui %pt, %pairs_n : index
          %tp = arith.remui %pt, %pairs_n : index
          %m0 = arith.muli %tm, %c128 : index
          %tp2 = arith.muli %tp, %c2 : index
          %tn = arith.addi %tp2, %rank : index
          %n0 = arith.muli %tn, %c128 : index
          %base = arith.muli %j, %k_tiles : index
          scf.for %k = %c0 to %k_tiles step %c1 {
            %it = arith.addi %base, %k : index
            %s = arith.remui %it, %c4 : index
            %lap = arith.divui %it, %c4 : index
            %lp = arith.remui %lap, %c2 : index
            %phase = arith.cmpi ne, %lp, %c0 : index
            %acquire = arith.xori %phase, %true : i1
            // Every CTA whose multicast writes this slot has released it.
            copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
            copy.barrier_arrive_expect_tx %full[%s], 32768 : !copy.barrier<4>
            %k0 = arith.muli %k, %c64 : index
            copy.async_copy %A[%m0, %k0] to %smem_a[%s] barrier %full[%s] {arrive = false, collective = array<i64: 0>} : memref<?x256xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
            copy.async_copy %B[%n0, %k0] to %smem_b[%s] barrier %full[%s] {arrive = false} : memref<?x256xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          }
        }
        // load_tail: every slot released by every CTA that writes or arrives into it.
        %total = arith.muli %count, %k_tiles : index
        %end = arith.addi %total, %c4 : index
        scf.for %it = %total to %end step %c1 {
          %s = arith.remui %it, %c4 : index
          %lap = arith.divui %it, %c4 : index
          %lp = arith.remui %lap, %c2 : index
          %phase = arith.cmpi ne, %lp, %c0 : index
          %acquire = arith.xori %phase, %true : i1
          copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
        }
      }
    }, {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      scf.for %j = %c0 to %count step %c1 {
        %jc = arith.muli %j, %clusters : index
        %pt = arith.addi %cid, %jc : index
        %tm = arith.divui %pt, %pairs_n : index
        %tp = arith.remui %pt, %pairs_n : index
        %m0 = arith.muli %tm, %c128 : index
        %tp2 = arith.muli %tp, %c2 : index
        %tn = arith.addi %tp2, %rank : index
        %n0 = arith.muli %tn, %c128 : index
        %base = arith.muli %j, %k_tiles : index
        %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%sum = %zero) -> (f32) {
          %it = arith.addi %base, %k : index
          %s = arith.remui %it, %c4 : index
          %lap = arith.divui %it, %c4 : index
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
          // consumer_release, here and in the CTA whose multicast writes the slot.
          copy.named_barrier_sync 3, 128
          copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<4>
          copy.peer_arrive %empty[%s] peer %peer : !copy.barrier<4>
          scf.yield %sb : f32
        }
        // The epilogue: the previous tile's store has read the staging buffer.
        copy.wait_group bulk 0 read_only
        scf.for %c = %c0 to %c16 step %c1 {
          %col = arith.muli %c, %c8 : index
          %accv = vector.broadcast %acc : f32 to vector<8xf32>
          vector.store %accv, %smem_c[%t, %col] : memref<128x128xf32, #copy.smem>, vector<8xf32>
        }
        copy.fence_async_shared
        copy.async_copy %smem_c to %C[%m0, %n0] : memref<128x128xf32, #copy.smem> to memref<?x?xf32>
        copy.commit_group bulk
      }
      copy.wait_group bulk 0 read_only
    }
    func.return
  }
}
