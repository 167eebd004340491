// The data movement of a cluster all-reduce over distributed shared memory, as cluster
// split-K reductions and TileLang's / ThunderKittens' DSMEM rings write it: the 4 CTAs of a
// cluster each hold a 64x64 f32 partial tile and pass tiles around the ring rank -> rank + 1
// with st.async (copy.peer_store), so that after 3 steps every CTA holds the sum; CTA r then
// stores rows 16r .. + 16 of it.
//
// Protocol: 128 threads per CTA, no roles, cluster (4, 1, 1). Each CTA loads its partial
// (TMA, on %loaded) and copies it into its accumulator. Step s (0, 1, 2) sends the tile of
// the step before (its own partial at step 0, the tile received at step s - 1 after) into
// slot s mod 2 of the next CTA's 2-slot receive buffer, each thread a vector<4xf32> at a
// time, completing on the next CTA's full[s mod 2]; the receiver expects the 16384 bytes
// (arrive_expect_tx on its own full[s mod 2]), waits (parity (s / 2) mod 2) and adds the
// tile into its accumulator. Slot 0 is written twice (steps 0 and 2): before its step-2
// send a CTA waits on its empty[0], on which the next CTA arrives (copy.peer_arrive) once it
// has read slot 0 for its accumulator and for its forward at step 1 (a block barrier
// first: every thread's reads). Every byte and arrival sent to a CTA is waited for by it,
// so no CTA exits while a peer still writes it. The accumulator is fenced and stored.
//
// Launch: grid (4 * clusters), cluster (4, 1, 1), 128 threads. X holds 64 rows per CTA, Y
// 64 rows per cluster.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @dsmem_allreduce_ring(%X: memref<?x64xf32>, %Y: memref<?x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 4, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %false = arith.constant false
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c4 : index
    %r1 = arith.addi %rank, %c1 : index
    %next = arith.remui %r1, %c4 : index
    %r3 = arith.addi %rank, %c3 : index
    %prev = arith.remui %r3, %c4 : index
    %cluster = arith.divui %bx, %c4 : index
    %x0 = arith.muli %bx, %c64 : index
    %y_tile = arith.muli %cluster, %c64 : index
    %y_rows = arith.muli %rank, %c16 : index
    %y0 = arith.addi %y_tile, %y_rows : index
    %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %recv = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
    %acc = copy.alloc_smem : memref<4x16x64xf32, #copy.smem>
    %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
    copy.async_copy %X[%x0, %c0] to %mine barrier %loaded[%c0] : memref<?x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
    // Thread t owns the vectors q * 128 + t of the tile (row (q * 128 + t) / 16).
    scf.for %q = %c0 to %c8 step %c1 {
      %qi = arith.muli %q, %c128 : index
      %i = arith.addi %qi, %t : index
      %row = arith.divui %i, %c16 : index
      %ci = arith.remui %i, %c16 : index
      %col = arith.muli %ci, %c4 : index
      %ab = arith.divui %row, %c16 : index
      %ar = arith.remui %row, %c16 : index
      %v = vector.load %mine[%row, %col] : memref<64x64xf32, #copy.smem>, vector<4xf32>
      vector.store %v, %acc[%ab, %ar, %col] : memref<4x16x64xf32, #copy.smem>, vector<4xf32>
    }
    scf.for %s = %c0 to %c3 step %c1 {
      %slot = arith.remui %s, %c2 : index
      %lap = arith.divui %s, %c2 : index
      %lp = arith.remui %lap, %c2 : index
      %phase = arith.cmpi ne, %lp, %c0 : index
      %acquire = arith.xori %phase, %true : i1
      // The next CTA has read what this CTA wrote into its slot a lap ago.
      copy.barrier_wait %empty[%slot], %acquire : !copy.barrier<2>
      %first = arith.cmpi eq, %s, %c0 : index
      %s1 = arith.subi %s, %c1 : index
      %before = arith.remui %s1, %c2 : index
      scf.for %q = %c0 to %c8 step %c1 {
        %qi = arith.muli %q, %c128 : index
        %i = arith.addi %qi, %t : index
        %row = arith.divui %i, %c16 : index
        %ci = arith.remui %i, %c16 : index
        %col = arith.muli %ci, %c4 : index
        %v = scf.if %first -> (vector<4xf32>) {
          %m = vector.load %mine[%row, %col] : memref<64x64xf32, #copy.smem>, vector<4xf32>
          scf.yield %m : vector<4xf32>
        } else {
          %r = vector.load %recv[%before, %row, %col] : memref<2x64x64xf32, #copy.smem>, vector<4xf32>
          scf.yield %r : vector<4xf32>
        }
        copy.peer_store %v, %recv[%slot, %row, %col] peer %next, %full[%slot] : vector<4xf32>, memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
      }
      // Slot s - 1 mod 2 is read (for the accumulator at step s - 1, for the forward now):
      // the previous CTA may write it again (only slot 0 is written again, at step 2).
      %ack = arith.cmpi eq, %s, %c1 : index
      scf.if %ack {
        "gpu.barrier"() : () -> ()
        copy.peer_arrive %empty[%c0] peer %prev : !copy.barrier<2>
      }
      copy.barrier_arrive_expect_tx %full[%slot], 16384 : !copy.barrier<2>
      copy.barrier_wait %full[%slot], %phase : !copy.barrier<2>
      scf.for %q = %c0 to %c8 step %c1 {
        %qi = arith.muli %q, %c128 : index
        %i = arith.addi %qi, %t : index
        %row = arith.divui %i, %c16 : index
        %ci = arith.remui %i, %c16 : index
        %col = arith.muli %ci, %c4 : index
        %ab = arith.divui %row, %c16 : index
        %ar = arith.remui %row, %c16 : index
        %r = vector.load %recv[%slot, %row, %col] : memref<2x64x64xf32, #copy.smem>, vector<4xf32>
        %a = vector.load %acc[%ab, %ar, %col] : memref<4x16x64xf32, #copy.smem>, vector<4xf32>
        %sum = arith.addf %a, %r : vector<4xf32>
        vector.store %sum, %acc[%ab, %ar, %col] : memref<4x16x64xf32, #copy.smem>, vector<4xf32>
      }
    }
    copy.fence_async_shared
    copy.async_copy %acc[%rank] to %Y[%y0, %c0] : memref<4x16x64xf32, #copy.smem> to memref<?x64xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0 read_only
    func.return
  }
}
