// The data movement of a split-K reduction inside a cluster over distributed shared memory,
// as cluster-level split-K GEMMs and FlashDecoding-style combines write it on Hopper: the 4
// CTAs of a cluster each hold a 64x64 f32 partial tile (its share of K); the three peers
// send theirs to the leader (rank 0) with one bulk copy each (cp.async.bulk
// .shared::cluster, copy.peer_copy), the leader sums the four and stores the tile.
//
// Protocol: 128 threads per CTA, no roles, cluster (4, 1, 1); the ranks take different
// branches. Every CTA loads its partial (TMA, on %loaded) and waits. The leader expects
// 16384 bytes on each of full[0..2] (one barrier per sender, rank r into recv[r - 1]),
// waits on each and adds the slot into its accumulator (each thread 32 elements of a row);
// then it tells each sender its copy has landed (copy.peer_arrive on the sender's %sent),
// writes the sum over its own tile, fences and stores it with TMA. A sender copies its
// tile into the leader's slot, completing on the leader's full[r - 1], and waits on its
// own %sent before it exits: its copy reads its SMEM until the leader's phase completes,
// which only the leader can tell. Every byte and arrival sent to a CTA is waited for by it.
//
// Launch: grid (4 * clusters), cluster (4, 1, 1), 128 threads. X holds 64 rows per CTA, Y
// 64 rows per cluster.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @dsmem_split_k_to_leader(%X: memref<?x64xf32>, %Y: memref<?x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 4, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c4 : index
    %cid = arith.divui %bx, %c4 : index
    %row0 = arith.muli %bx, %c64 : index
    %out0 = arith.muli %cid, %c64 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %recv = copy.alloc_smem : memref<3x64x64xf32, #copy.smem>
    %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<3>
    %sent = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // Every CTA loads its partial tile (its share of K).
    copy.async_copy %X[%row0, %c0] to %mine barrier %loaded[%c0] : memref<?x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
    scf.if %leader {
      // The leader: each peer's partial into recv[r - 1], on full[r - 1].
      scf.for %i = %c0 to %c3 step %c1 {
        copy.barrier_arrive_expect_tx %full[%i], 16384 : !copy.barrier<3>
      }
      %r = arith.divui %t, %c2 : index
      %h = arith.remui %t, %c2 : index
      %col = arith.muli %h, %c32 : index
      %acc = vector.load %mine[%r, %col] : memref<64x64xf32, #copy.smem>, vector<32xf32>
      %sum = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %acc) -> (vector<32xf32>) {
        copy.barrier_wait %full[%i], %false : !copy.barrier<3>
        %p = vector.load %recv[%i, %r, %col] : memref<3x64x64xf32, #copy.smem>, vector<32xf32>
        %b = arith.addf %a, %p : vector<32xf32>
        scf.yield %b : vector<32xf32>
      }
      // Each sender may exit (and reuse its source) once its copy has landed here.
      scf.for %i = %c1 to %c4 step %c1 {
        copy.peer_arrive %sent[%c0] peer %i : !copy.barrier<1>
      }
      vector.store %sum, %mine[%r, %col] : memref<64x64xf32, #copy.smem>, vector<32xf32>
      copy.fence_async_shared
      copy.async_copy %mine to %Y[%out0, %c0] : memref<64x64xf32, #copy.smem> to memref<?x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
    } else {
      // A sender: its partial to the leader's slot, then it waits until the leader has it.
      %slot = arith.subi %rank, %c1 : index
      copy.peer_copy %mine to %recv[%slot] peer %c0, %full[%slot] : memref<64x64xf32, #copy.smem> to memref<3x64x64xf32, #copy.smem>, !copy.barrier<3>
      copy.barrier_wait %sent[%c0], %false : !copy.barrier<1>
    }
    func.return
  }
}
