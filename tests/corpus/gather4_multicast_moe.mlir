// The data movement of a Blackwell MoE grouped GEMM's token gather shared by a cluster of 2
// (the routed tokens' rows of the activations, gathered with TMA gather4 as DeepGEMM's and
// CUTLASS's grouped kernels do, multicast to the two CTAs that compute different expert
// columns from the same rows).
//
// Protocol: a cluster of 2 (2x1x1), two roles per CTA: a producer warp and a consumer
// warpgroup (160 threads). For each of the CTA's steps the producers acquire slot i mod 2
// of a 2-stage ring (empty[s], the producer's phase starting at 1; both CTAs' consumers
// release it, so empty counts 2). CTA 0's producer reads the step's four token indices
// (GMEM loads), arrives on its full[s] expecting the 4 x 64 f16 tile (512 bytes) and issues
// one copy.gather4 multicast to both CTAs (mask 3); CTA 1's producer arms its own full[s]
// with the same 512 bytes. The consumer warpgroup of each CTA waits on full[s], copies the
// tile to its rows of the output (thread t: row t / 32, columns 2 (t mod 32) and + 1; the
// GEMM's operand reads, memref loads here), meets at named barrier 3 and releases the slot
// in both CTAs (copy.barrier_arrive and copy.peer_arrive: CTA 0's next gather writes both
// slots). After its loop each producer waits for both CTAs' release of every slot (the
// load_tail: no peer's arrival targets a CTA that has exited). Token indices outside the
// activations (a padded route) read as zero rows.
//
// Launch: grid (2), cluster (2), 160 threads.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @gather4_multicast_moe(%x: memref<64x128xf16>, %idx: memref<24xindex>, %out: memref<2x6x4x64xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c6 = arith.constant 6 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %true = arith.constant true
    %both = arith.constant 3 : i16
    %steps = arith.constant 6 : index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    %tiles = copy.alloc_smem : memref<2x4x64xf16, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %empty = copy.barrier_init arrivals 2 : !copy.barrier<2>
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      scf.for %i = %c0 to %steps step %c1 {
        %s = arith.remui %i, %c2 : index
        %lap = arith.divui %i, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        // Both CTAs' consumers have released the slot.
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
        scf.if %leader {
          %base = arith.muli %i, %c4 : index
          %j1 = arith.addi %base, %c1 : index
          %j2 = arith.addi %base, %c2 : index
          %j3 = arith.addi %base, %c3 : index
          %r0 = memref.load %idx[%base] : memref<24xindex>
          %r1 = memref.load %idx[%j1] : memref<24xindex>
          %r2 = memref.load %idx[%j2] : memref<24xindex>
          %r3 = memref.load %idx[%j3] : memref<24xindex>
          copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tiles[%s] barrier %full[%s] multicast %both : memref<64x128xf16> to memref<2x4x64xf16, #copy.smem>, !copy.barrier<2>
        } else {
          copy.barrier_arrive_expect_tx %full[%s], 512 : !copy.barrier<2>
        }
      }
      // load_tail: every slot released by both CTAs before this CTA may exit.
      %end = arith.addi %steps, %c2 : index
      scf.for %i = %steps to %end step %c1 {
        %s = arith.remui %i, %c2 : index
        %lap = arith.divui %i, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
      }
    }, {
    ^bb0(%t: index):
      %row = arith.divui %t, %c32 : index
      %lane = arith.remui %t, %c32 : index
      %col = arith.muli %lane, %c2 : index
      %col1 = arith.addi %col, %c1 : index
      scf.for %i = %c0 to %steps step %c1 {
        %s = arith.remui %i, %c2 : index
        %lap = arith.divui %i, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        copy.barrier_wait %full[%s], %phase : !copy.barrier<2>
        %v0 = memref.load %tiles[%s, %row, %col] : memref<2x4x64xf16, #copy.smem>
        %v1 = memref.load %tiles[%s, %row, %col1] : memref<2x4x64xf16, #copy.smem>
        memref.store %v0, %out[%rank, %i, %row, %col] : memref<2x6x4x64xf16>
        memref.store %v1, %out[%rank, %i, %row, %col1] : memref<2x6x4x64xf16>
        // consumer_release: the warpgroup is done with slot s, in this CTA and in CTA 0,
        // whose next gather writes it.
        copy.named_barrier_sync 3, 128
        copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
        copy.peer_arrive %empty[%s] peer %peer : !copy.barrier<2>
      }
    }
    func.return
  }
}
