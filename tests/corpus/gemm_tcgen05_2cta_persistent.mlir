// The data movement of a Blackwell (sm_100a) 2-CTA persistent warp-specialized GEMM, as
// CUTLASS's 2SM sm100 kernels (KernelTmaWarpSpecialized2SmSm100 with a persistent tile
// scheduler) write it: C = A * B^T, A M x K and B N x K (K-major), f16 in, f32 accumulated
// in the TMEM of a CTA pair, 256x64x64 pair tiles (each CTA 128 rows of A and 32 of B), M and
// N known only at run time, K = 256 (4 k-blocks).
//
// Protocol: clusters of 2 CTAs (a pair: rank 0 the leader), 6 warps (192 threads) each,
// persistent over pair tiles: cluster c takes tiles c, c + G/2, ... (G = gridDim.x). TMEM
// is allocated with cta_group 2 (both CTAs, the same columns). Three roles:
// - the producer warp of each CTA: for every tile and k-block, acquires the next slot of its
//   4-stage ring (a running counter: slot it mod 4, phase starting at 1, on its own
//   empty[s]) and issues its part of the pair's A and B boxes, leader-tracked and
//   partitioned along the rows: the bytes of both CTAs complete on the leader's full[s];
// - the MMA warp of the leader alone: per tile, acquires the next of two accumulators
//   (acc_empty[b], b = tile mod 2, phase starting at 1; tcgen05.fence after the wait), then
//   per k-block waits on full[s] and its lane 0 issues the 4 tcgen05.mma of the k-block
//   with cta_group 2 (M 256: A's rows and B's rows from both CTAs' SMEM, D's rows 128 r ..
//   into CTA r's TMEM) and commits to empty[s] of both CTAs (multicast_mask 3: each
//   producer's slot is free once the MMAs read it); after the tile's last k-block it commits
//   to acc_full[b] of both CTAs;
// - the epilogue warpgroup (warps 2-5) of each CTA: per tile waits on its own acc_full[b],
//   fences, loads its rows of accumulator b (tcgen05.ld 32x32b, warp w lanes 32 (w mod 4)
//   ..), waits for the loads, fences, meets at named barrier 4 and its elected thread
//   arrives on the leader's acc_empty[b] (copy.peer_arrive to rank 0: two arrivals a phase,
//   one per CTA), then stores the rows to C.
// The pair ends with the cluster's barrier before it frees its TMEM: a CTA's SMEM is read by
// the leader's MMAs, and its arrivals land in the leader, until then.
//
// Launch: grid (G), G even, cluster (2), 192 threads.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @gemm_tcgen05_2cta_persistent(%A: memref<?x256xf16>, %B: memref<?x256xf16>, %C: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 192, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %true = arith.constant true
    %both = arith.constant 3 : i16
    %k_tiles = arith.constant 4 : index
    %M = memref.dim %A, %c0 : memref<?x256xf16>
    %N = memref.dim %B, %c0 : memref<?x256xf16>
    %tiles_m = arith.divui %M, %c256 : index
    %tiles_n = arith.divui %N, %c64 : index
    %tiles = arith.muli %tiles_m, %tiles_n : index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bid, %c2 : index
    %is_leader = arith.cmpi eq, %rank, %c0 : index
    %cid = arith.divui %bid, %c2 : index
    %clusters = arith.divui %nb, %c2 : index
    // The cluster's tiles: cid + j * clusters for j < count.
    %left = arith.subi %tiles, %cid : index
    %cm1 = arith.subi %clusters, %c1 : index
    %num = arith.addi %left, %cm1 : index
    %count = arith.divui %num, %clusters : index
    %acc = copy.tmem_alloc cta_group 2 : memref<128x128xf32, #copy.tmem>
    %acc0 = copy.tmem_slice %acc[0] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %acc1 = copy.tmem_slice %acc[64] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x32x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %acc_full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %acc_empty = copy.barrier_init arrivals 2 : !copy.barrier<2>
    %d0 = builtin.unrealized_conversion_cast %acc0 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %d1 = builtin.unrealized_conversion_cast %acc1 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %empty_ptr = builtin.unrealized_conversion_cast %empty : !copy.barrier<4> to !llvm.ptr<3>
    %acc_full_ptr = builtin.unrealized_conversion_cast %acc_full : !copy.barrier<2> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 256 n 64 a f16 b f16 d f32 cta_group 2 : i32
    copy.warp_specialize warps [1, 1, 4] {
    ^bb0(%t: index):
      // The producer warp of each CTA.
      scf.for %j = %c0 to %count step %c1 {
        %jn = arith.muli %j, %clusters : index
        %tile = arith.addi %cid, %jn : index
        %tm = arith.divui %tile, %tiles_n : index
        %tn = arith.remui %tile, %tiles_n : index
        %m0 = arith.muli %tm, %c256 : index
        %n0 = arith.muli %tn, %c64 : index
        %base = arith.muli %j, %k_tiles : index
        scf.for %k = %c0 to %k_tiles step %c1 {
          %it = arith.addi %base, %k : index
          %s = arith.remui %it, %c4 : index
          %lap = arith.divui %it, %c4 : index
          %lp = arith.remui %lap, %c2 : index
          %phase = arith.cmpi ne, %lp, %c0 : index
          %acquire = arith.xori %phase, %true : i1
          copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
          %k0 = arith.muli %k, %c64 : index
          copy.async_copy %A[%m0, %k0] to %smem_a[%s] barrier %full[%s] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<?x256xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          copy.async_copy %B[%n0, %k0] to %smem_b[%s] barrier %full[%s] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<?x256xf16> to memref<4x32x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
        }
      }
    }, {
    ^bb0(%t: index):
      // The MMA warp: the leader's lane 0 issues the pair's MMAs and the commits.
      %lane0 = arith.cmpi eq, %t, %c0 : index
      %q2 = arith.constant 2 : i64
      %q4 = arith.constant 4 : i64
      %q6 = arith.constant 6 : i64
      scf.if %is_leader {
        scf.for %j = %c0 to %count step %c1 {
          %b = arith.remui %j, %c2 : index
          %first = arith.cmpi eq, %b, %c0 : index
          %uses = arith.divui %j, %c2 : index
          %up = arith.remui %uses, %c2 : index
          %used = arith.cmpi ne, %up, %c0 : index
          %free = arith.xori %used, %true : i1
          copy.barrier_wait %acc_empty[%b], %free : !copy.barrier<2>
          nvvm.tcgen05.fence <after>
          %base = arith.muli %j, %k_tiles : index
          scf.for %k = %c0 to %k_tiles step %c1 {
            %it = arith.addi %base, %k : index
            %s = arith.remui %it, %c4 : index
            %lap = arith.divui %it, %c4 : index
            %lp = arith.remui %lap, %c2 : index
            %phase = arith.cmpi ne, %lp, %c0 : index
            copy.barrier_wait %full[%s], %phase : !copy.barrier<4>
            %da = copy.matrix_descriptor %smem_a[%s] major k tcgen05 : memref<4x128x64xf16, #copy.smem<swizzle = 128>> -> i64
            %db = copy.matrix_descriptor %smem_b[%s] major k tcgen05 : memref<4x32x64xf16, #copy.smem<swizzle = 128>> -> i64
            %accum = arith.cmpi ne, %k, %c0 : index
            scf.if %lane0 {
              scf.if %first {
                nvvm.tcgen05.mma %d0, %da, %db, %idesc, %accum {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
                %da2 = arith.addi %da, %q2 : i64
                %db2 = arith.addi %db, %q2 : i64
                nvvm.tcgen05.mma %d0, %da2, %db2, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
                %da4 = arith.addi %da, %q4 : i64
                %db4 = arith.addi %db, %q4 : i64
                nvvm.tcgen05.mma %d0, %da4, %db4, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
                %da6 = arith.addi %da, %q6 : i64
                %db6 = arith.addi %db, %q6 : i64
                nvvm.tcgen05.mma %d0, %da6, %db6, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              } else {
                nvvm.tcgen05.mma %d1, %da, %db, %idesc, %accum {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
                %da2 = arith.addi %da, %q2 : i64
                %db2 = arith.addi %db, %q2 : i64
                nvvm.tcgen05.mma %d1, %da2, %db2, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
                %da4 = arith.addi %da, %q4 : i64
                %db4 = arith.addi %db, %q4 : i64
                nvvm.tcgen05.mma %d1, %da4, %db4, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
                %da6 = arith.addi %da, %q6 : i64
                %db6 = arith.addi %db, %q6 : i64
                nvvm.tcgen05.mma %d1, %da6, %db6, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              }
              %s64 = arith.index_cast %s : index to i64
              %release = llvm.getelementptr %empty_ptr[%s64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
              nvvm.tcgen05.commit %release, multicast_mask = %both {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
            }
          }
          scf.if %lane0 {
            %b64 = arith.index_cast %b : index to i64
            %ready = llvm.getelementptr %acc_full_ptr[%b64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
            nvvm.tcgen05.commit %ready, multicast_mask = %both {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
          }
        }
      }
    }, {
    ^bb0(%t: index):
      // The epilogue warpgroup (warps 2-5) of each CTA.
      %w = arith.divui %t, %c32 : index
      %w2 = arith.addi %w, %c2 : index
      %quarter = arith.remui %w2, %c4 : index
      %lanes = arith.muli %quarter, %c32 : index
      %lane = arith.remui %t, %c32 : index
      %row = arith.addi %lanes, %lane : index
      %half = arith.muli %rank, %c128 : index
      %mine = arith.addi %half, %row : index
      scf.for %j = %c0 to %count step %c1 {
        %jn = arith.muli %j, %clusters : index
        %tile = arith.addi %cid, %jn : index
        %tm = arith.divui %tile, %tiles_n : index
        %tn = arith.remui %tile, %tiles_n : index
        %m0 = arith.muli %tm, %c256 : index
        %n0 = arith.muli %tn, %c64 : index
        %r = arith.addi %m0, %mine : index
        %b = arith.remui %j, %c2 : index
        %uses = arith.divui %j, %c2 : index
        %up = arith.remui %uses, %c2 : index
        %ready = arith.cmpi ne, %up, %c0 : index
        copy.barrier_wait %acc_full[%b], %ready : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        %cols = arith.muli %b, %c64 : index
        %v = copy.tmem_load %acc[%cols] shape shape_32x32b num 64 : memref<128x128xf32, #copy.tmem> -> vector<64xf32>
        copy.tmem_wait load
        nvvm.tcgen05.fence <before>
        copy.named_barrier_sync 4, 128
        copy.peer_arrive %acc_empty[%b] peer %c0 : !copy.barrier<2>
        vector.store %v, %C[%r, %n0] : memref<?x?xf32>, vector<64xf32>
      }
    }
    nvvm.tcgen05.fence <before>
    copy.cluster_sync
    copy.tmem_dealloc %acc cta_group 2 : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
