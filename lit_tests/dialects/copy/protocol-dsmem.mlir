// RUN: copy-opt %s --split-input-file --verify-diagnostics

// The protocol analysis on distributed shared memory (copy.peer_store, copy.peer_copy,
// copy.peer_arrive). The analysis walks one CTA; every CTA of the cluster runs the same
// program and sends to a permutation of the ranks (rank ^ 1, (rank + 1) % n), so what a CTA
// sends its peer at a point is what it receives there: a peer write fills this CTA's region
// and completes its bytes on this CTA's barrier, a peer arrival arrives on it
// (docs/design.md, "Distributed shared memory"). The first kernels are proven (no
// diagnostic); then one racing or unprovable kernel per chunk, named after its rule.
// The checks: analysis/protocol/walk.py and state.py.
// `// fix: s|OLD|NEW|` lines give the edit the note describes (or `// fix: none -- why`);
// tests/tools/test_fix_notes.py applies them and checks that the result verifies.

// A pair exchanges tiles by st.async: each thread sends 4 f32 per step; the receiver waits
// on its barrier, then stores what it received.
func.func @exchange_by_st_async(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %col = arith.muli %bx, %c16 : index
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %mine = copy.alloc_smem : memref<64x16xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x16xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x16xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 4096 : !copy.barrier<1>
  scf.for %k = %c0 to %c2 step %c1 {
    %step = arith.muli %k, %c128 : index
    %e = arith.addi %tid, %step : index
    %r = arith.divui %e, %c4 : index
    %q = arith.remui %e, %c4 : index
    %c = arith.muli %q, %c4 : index
    %v = vector.load %mine[%r, %c] : memref<64x16xf32, #copy.smem>, vector<4xf32>
    copy.peer_store %v, %recv[%r, %c] peer %peer, %full[%c0] : vector<4xf32>, memref<64x16xf32, #copy.smem>, !copy.barrier<1>
  }
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  copy.fence_async_shared
  copy.async_copy %recv to %y[%c0, %col] : memref<64x16xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}

// -----

// A ring of 4 reduces by red.async: CTA r adds its tile into the copy of CTA r + 1's tile
// that CTA r + 1 holds, once CTA r + 1 says (an arrival on CTA r's barrier) that the copy has
// landed.
func.func @ring_reduce_by_red_async(%x: memref<256x256xi32>, %y: memref<256x256xi32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 4, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c4 : index
  %next = arith.addi %rank, %c1 : index
  %peer = arith.remui %next, %c4 : index
  %prev = arith.addi %rank, %c3 : index
  %source = arith.remui %prev, %c4 : index
  %col = arith.muli %bx, %c16 : index
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %mine = copy.alloc_smem : memref<8x16xi32, #copy.smem>
  %acc = copy.alloc_smem : memref<8x16xi32, #copy.smem>
  %loaded = copy.barrier_init arrivals 2 : !copy.barrier<1>
  %ready = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xi32> to memref<8x16xi32, #copy.smem>, !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %acc barrier %loaded[%c0] : memref<256x256xi32> to memref<8x16xi32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  copy.peer_arrive %ready[%c0] peer %source : !copy.barrier<1>
  copy.barrier_wait %ready[%c0], %false : !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 512 : !copy.barrier<1>
  %r = arith.divui %tid, %c16 : index
  %c = arith.remui %tid, %c16 : index
  %v = memref.load %mine[%r, %c] : memref<8x16xi32, #copy.smem>
  copy.peer_store reduce add %v, %acc[%r, %c] peer %peer, %full[%c0] : i32, memref<8x16xi32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  copy.fence_async_shared
  copy.async_copy %acc to %y[%c0, %col] : memref<8x16xi32, #copy.smem> to memref<256x256xi32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}

// -----

// A pair exchanges tiles by one bulk copy each; the receiver then arrives on its sender's
// barrier, and the sender waits for that before it exits (its source outlives the copy).
func.func @exchange_by_bulk_copy(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %col = arith.muli %bx, %c64 : index
  %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 16384 : !copy.barrier<1>
  copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
  copy.async_copy %recv to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// rule: P2
// fix: s|  copy.async_copy %x[%c64, %col]|  copy.barrier_wait %done[%c0], %false : !copy.barrier<1> copy.async_copy %x[%c64, %col]|
// The exchange with a second tile: each CTA refills its source with its next rows once its
// own receive has landed, but its own send may still be reading the source then (its
// %full says nothing about the peer's): the refill must wait for the peer's %done.
func.func @p2_source_refilled_before_the_peer_has_it(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %col = arith.muli %bx, %c64 : index
  %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 16384 : !copy.barrier<1>
  // expected-note@+1 {{the peer copy that reads it}}
  copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
  %true = arith.constant true
  // expected-error@+2 {{the TMA load writes %mine while the peer copy from it may still be reading it}}
  // expected-note@+1 {{the peer copy reads its source until the receiver's barrier phase completes, which only the receiver can tell: let it arrive on a barrier of this CTA after its copy.barrier_wait (copy.peer_arrive), and copy.barrier_wait on that barrier before the write}}
  copy.async_copy %x[%c64, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %true : !copy.barrier<1>
  copy.async_copy %mine to %y[%c64, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.async_copy %recv to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// rule: P7
// fix: s|  func.return|  copy.cluster_sync func.return|
// The exchange without its handshake: each CTA returns once its own receive has landed,
// while its send may still be reading its source (its %full says nothing about the peer's).
func.func @p7_return_while_the_peer_copy_reads(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %col = arith.muli %bx, %c64 : index
  %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 16384 : !copy.barrier<1>
  // expected-note@+1 {{the peer copy}}
  copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  copy.async_copy %recv to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  // expected-error@+2 {{the kernel returns while its peer copy may still read %mine: the CTA's SMEM is freed under the copy}}
  // expected-note@+1 {{let the receiver arrive on a barrier of this CTA after its copy.barrier_wait (copy.peer_arrive), and copy.barrier_wait on that barrier before the return, or end both CTAs with copy.cluster_sync}}
  func.return
}

// -----

// rule: P1
// fix: s|%got = vector.load|copy.barrier_wait %full[%c0], %false : !copy.barrier<1> %got = vector.load|
func.func @p1_read_before_the_peer_store_lands(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %e = arith.muli %tid, %c4 : index
  %r = arith.divui %e, %c128 : index
  %c = arith.remui %e, %c128 : index
  %mine = copy.alloc_smem : memref<4x128xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<4x128xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<4x128xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 2048 : !copy.barrier<1>
  %v = vector.load %mine[%r, %c] : memref<4x128xf32, #copy.smem>, vector<4xf32>
  // With the cluster modelled rank by rank, CTA 0 may read before CTA 1's store is issued:
  // the read comes before the first phase of %full, so it is the read's error (P1: the
  // missing wait), not a reuse of the buffer by the store (P3).
  // expected-note@+1 {{the copy that fills it}}
  copy.peer_store %v, %recv[%r, %c] peer %peer, %full[%c0] : vector<4xf32>, memref<4x128xf32, #copy.smem>, !copy.barrier<1>
  // expected-error@+2 {{threads' load reads %recv[?, ?] before the copy that fills %recv completes}}
  // expected-note@+1 {{wait on barrier 0 of %full for phase 0 (copy.barrier_wait with parity 0) before the read}}
  %got = vector.load %recv[%r, %c] : memref<4x128xf32, #copy.smem>, vector<4xf32>
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  vector.store %got, %y[%r, %c] : memref<256x256xf32>, vector<4xf32>
  func.return
}

// -----

// rule: P1
// fix: s|  copy.fence_async_shared|  copy.barrier_wait %full[%c0], %false : !copy.barrier<1> copy.fence_async_shared|
// fix: s|  func.return|  copy.cluster_sync func.return|
func.func @p1_tma_store_of_the_received_tile_before_it_lands(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %col = arith.muli %bx, %c64 : index
  %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 16384 : !copy.barrier<1>
  // expected-note@+1 {{the copy that fills it}}
  copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.fence_async_shared
  // The store of the received tile is issued before the wait for it: it sends what %recv
  // held before the peer's copy (P1 at the store; the waits before the return come too late).
  // expected-error@+2 {{the TMA store reads %recv before the copy that fills it completes}}
  // expected-note@+1 {{wait on barrier 0 of %full for phase 0 (copy.barrier_wait with parity 0) before the read}}
  copy.async_copy %recv to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// rule: P5
// fix: s|copy.barrier_arrive_expect_tx %full[%c0], 1024|copy.barrier_arrive_expect_tx %full[%c0], 2048|
func.func @p5_peer_sends_more_than_expected(%x: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %e = arith.muli %tid, %c4 : index
  %r = arith.divui %e, %c128 : index
  %c = arith.remui %e, %c128 : index
  %mine = copy.alloc_smem : memref<4x128xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<4x128xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<4x128xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  // expected-error@+2 {{phase 0 of barrier 0 of %full receives 2048 bytes but expects 1024}}
  // expected-note@+1 {{expect 2048 bytes in this copy.barrier_arrive_expect_tx}}
  copy.barrier_arrive_expect_tx %full[%c0], 1024 : !copy.barrier<1>
  %v = vector.load %mine[%r, %c] : memref<4x128xf32, #copy.smem>, vector<4xf32>
  // expected-note@+1 {{this brings the phase to 2048 bytes}}
  copy.peer_store %v, %recv[%r, %c] peer %peer, %full[%c0] : vector<4xf32>, memref<4x128xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// rule: P1
// fix: s|copy.barrier_arrive_expect_tx|copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1> copy.barrier_arrive_expect_tx|
// fix: s|  func.return|  copy.cluster_sync func.return|
func.func @p1_bulk_copy_of_a_tile_still_loading(%x: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{the copy that fills it}}
  copy.async_copy %x[%c0, %c0] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 16384 : !copy.barrier<1>
  // expected-error@+2 {{the peer copy reads %mine before the copy that fills it completes}}
  // expected-note@+1 {{wait on barrier 0 of %loaded for phase 0 (copy.barrier_wait with parity 0) before the read}}
  copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// A constant peer rank: both CTAs arrive on CTA 1's %done, CTA 0's gets nothing. With the
// cluster modelled rank by rank the analysis follows each CTA: CTA 1's barrier completes
// phases 0 and 1 (count 1, two arrivals), so its wait on parity 0 may name phase 2; CTA 0's
// wait never returns either. The interpreter (copy-opt --interpret, grid 2) reports both
// hangs (P6), CTA 1's under the schedules where both arrivals come before its wait.
// rule: P6
// fix: s|%done = copy.barrier_init|%bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index %c2 = arith.constant 2 : index %rank = arith.remui %bx, %c2 : index %peer = arith.xori %rank, %c1 : index %done = copy.barrier_init|
// fix: s|peer %c1|peer %peer|
func.func @p6_constant_peer_rank(%x: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %false = arith.constant false
  %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{the block of CTA 1 arrives on phase 1 here}}
  copy.peer_arrive %done[%c0] peer %c1 : !copy.barrier<1>
  // expected-error@+2 {{barrier 0 of %done may be two phases ahead of this wait}}
  // expected-note@+1 {{each phase of barrier 0 of %done counts 1 arrival(s), and the CTAs' copy.peer_arrive ops bring more: send to a permutation of the ranks}}
  copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
  func.return
}
