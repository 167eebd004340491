// RUN: copy-opt %s --split-input-file --verify-diagnostics

// Mistakes in loops whose trip count is not known before the run (the kernels of
// protocol-loops.mlir, each with one op wrong), found for the count that shows them.
// `// fix: s|OLD|NEW|` lines give the edit the note describes; tests/tools/test_fix_notes.py
// applies them and checks that the result verifies.
// -----

// The tile's epilogue stores %out and the next tile's first k-block rewrites it while the
// store may still read it.
// rule: P2
// fix: s|      copy.commit_group bulk|      copy.commit_group bulk copy.wait_group bulk 0 read_only|
func.func @p2_flattened_epilogue_store_not_waited(%a: memref<?x64xf32>, %c: memref<?x64xf32>, %n: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %ring = copy.alloc_smem : memref<4x64x64xf32, #copy.smem>
  %out = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>
  scf.for %i = %c0 to %n step %c1 {
    %s = arith.remui %i, %c4 : index
    %lap = arith.divui %i, %c4 : index
    %pm = arith.remui %lap, %c2 : index
    %p = arith.cmpi ne, %pm, %c0 : index
    %row = arith.muli %i, %c64 : index
    copy.async_copy %a[%row, %c0] to %ring[%s] barrier %bars[%s] : memref<?x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
    copy.barrier_wait %bars[%s], %p : !copy.barrier<4>
    %v = memref.load %ring[%s, %c0, %t] : memref<4x64x64xf32, #copy.smem>
    // expected-error@+3 {{threads' store writes %out[0, ?] while a TMA store from it may still be reading it}}
    // expected-note@+2 {{commit the store and wait until it has read its source}}
    // expected-note@+1 {{found for %n = 9}}
    memref.store %v, %out[%c0, %t] : memref<64x64xf32, #copy.smem>
    "gpu.barrier"() : () -> ()
    %kb = arith.remui %i, %c8 : index
    %epilogue = arith.cmpi eq, %kb, %c7 : index
    scf.if %epilogue {
      copy.fence_async_shared
      "gpu.barrier"() : () -> ()
      // expected-note@+1 {{the TMA store that reads it}}
      copy.async_copy %out to %c[%row, %c0] : memref<64x64xf32, #copy.smem> to memref<?x64xf32>
      copy.commit_group bulk
    }
  }
  copy.wait_group bulk 0
  func.return
}

// -----

// The consumer's next tile writes %out while the previous tile's store may still read it.
// rule: P2
// fix: s|      copy.commit_group bulk|      copy.commit_group bulk copy.wait_group bulk 0 read_only|
func.func @p2_grid_stride_epilogue_store_not_waited(%A: memref<?x256xf32>, %C: memref<?x64xf32>, %tiles: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %true = arith.constant true
  %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
  %ring = copy.alloc_smem : memref<4x32x32xf32, #copy.smem>
  %out = copy.alloc_smem : memref<32x64xf32, #copy.smem>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<4>
  copy.warp_specialize warps [1, 1] {
  ^bb0(%t: index):
    %done = scf.for %tile = %bid to %tiles step %nb iter_args(%it0 = %c0) -> (index) {
      %row = arith.muli %tile, %c32 : index
      scf.for %k = %c0 to %c8 step %c1 {
        %it = arith.addi %it0, %k : index
        %s = arith.remui %it, %c4 : index
        %lap = arith.divui %it, %c4 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
        %col = arith.muli %k, %c32 : index
        copy.async_copy %A[%row, %col] to %ring[%s] barrier %full[%s] : memref<?x256xf32> to memref<4x32x32xf32, #copy.smem>, !copy.barrier<4>
      }
      %next = arith.addi %it0, %c8 : index
      scf.yield %next : index
    }
  }, {
  ^bb0(%t: index):
    %done = scf.for %tile = %bid to %tiles step %nb iter_args(%it0 = %c0) -> (index) {
      %row = arith.muli %tile, %c32 : index
      scf.for %k = %c0 to %c8 step %c1 {
        %it = arith.addi %it0, %k : index
        %s = arith.remui %it, %c4 : index
        %lap = arith.divui %it, %c4 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        copy.barrier_wait %full[%s], %phase : !copy.barrier<4>
        %v = memref.load %ring[%s, %t, %c0] : memref<4x32x32xf32, #copy.smem>
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<4>
        // expected-error@+3 {{threads' store writes %out[?, 0] while a TMA store from it may still be reading it}}
        // expected-note@+2 {{commit the store and wait until it has read its source}}
        // expected-note@+1 {{found for 2 iterations of role 0's loop over %tile}}
        memref.store %v, %out[%t, %c0] : memref<32x64xf32, #copy.smem>
      }
      copy.fence_async_shared
      // expected-note@+1 {{the TMA store that reads it}}
      copy.async_copy %out to %C[%row, %c0] : memref<32x64xf32, #copy.smem> to memref<?x64xf32>
      copy.commit_group bulk
      %next = arith.addi %it0, %c8 : index
      scf.yield %next : index
    }
    copy.wait_group bulk 0 read_only
  }
  func.return
}

// -----

// The consumer advances its tile counter by 1, the producer by the grid size: the roles
// take different numbers of tiles, and one waits for a fill or a release that never comes.
// rule: P6
// fix: s|%next_tile = arith.addi %tile, %c1 : index|%next_tile = arith.addi %tile, %nb : index|
func.func @p6_roles_walk_different_tiles(%A: memref<?x256xf32>, %C: memref<?x64xf32>, %tiles: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %true = arith.constant true
  %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
  %ring = copy.alloc_smem : memref<4x32x32xf32, #copy.smem>
  %out = copy.alloc_smem : memref<32x64xf32, #copy.smem>
  // expected-note@+1 {{initialized with arrivals 1}}
  %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
  // expected-note@+1 {{initialized with arrivals 1}}
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<4>
  copy.warp_specialize warps [1, 1] {
  ^bb0(%t: index):
    %done:2 = scf.while (%tile = %bid, %it0 = %c0) : (index, index) -> (index, index) {
      %valid = arith.cmpi ult, %tile, %tiles : index
      scf.condition(%valid) %tile, %it0 : index, index
    } do {
    ^bb0(%tile: index, %it0: index):
      %row = arith.muli %tile, %c32 : index
      scf.for %k = %c0 to %c8 step %c1 {
        %it = arith.addi %it0, %k : index
        %s = arith.remui %it, %c4 : index
        %lap = arith.divui %it, %c4 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        // expected-error@+3 {{this wait never returns: phase 0 of barrier 0 of %empty has 0 of its 1 arrivals}}
        // expected-note@+2 {{role 1's loop over %tile takes 0 (%next_tile = arith.addi %tile, %c1}}
        // expected-note@+1 {{found for 1 iterations of role 0's loop over %tile, 0 iterations of role 1's loop over %tile}}
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
        %col = arith.muli %k, %c32 : index
        copy.async_copy %A[%row, %col] to %ring[%s] barrier %full[%s] : memref<?x256xf32> to memref<4x32x32xf32, #copy.smem>, !copy.barrier<4>
      }
      %next = arith.addi %it0, %c8 : index
      %next_tile = arith.addi %tile, %nb : index
      scf.yield %next_tile, %next : index, index
    }
  }, {
  ^bb0(%t: index):
    %done:2 = scf.while (%tile = %bid, %it0 = %c0) : (index, index) -> (index, index) {
      %valid = arith.cmpi ult, %tile, %tiles : index
      scf.condition(%valid) %tile, %it0 : index, index
    } do {
    ^bb0(%tile: index, %it0: index):
      %row = arith.muli %tile, %c32 : index
      scf.for %k = %c0 to %c8 step %c1 {
        %it = arith.addi %it0, %k : index
        %s = arith.remui %it, %c4 : index
        %lap = arith.divui %it, %c4 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        // expected-error@+3 {{this wait never returns: phase 0 of barrier 0 of %full has 0 of its 1 arrivals}}
        // expected-note@+2 {{role 1's loop over %tile takes 1 (%next_tile = arith.addi %tile, %c1}}
        // expected-note@+1 {{found for 0 iterations of role 0's loop over %tile, 1 iterations of role 1's loop over %tile}}
        copy.barrier_wait %full[%s], %phase : !copy.barrier<4>
        %v = memref.load %ring[%s, %t, %c0] : memref<4x32x32xf32, #copy.smem>
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<4>
        memref.store %v, %out[%t, %c0] : memref<32x64xf32, #copy.smem>
      }
      copy.fence_async_shared
      copy.async_copy %out to %C[%row, %c0] : memref<32x64xf32, #copy.smem> to memref<?x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
      %next = arith.addi %it0, %c8 : index
      %next_tile = arith.addi %tile, %c1 : index
      scf.yield %next_tile, %next : index, index
    }
  }
  func.return
}

// -----

// The load_tail of protocol-loops.mlir's persistent cluster ring one slot short: the peer's
// release of the other slot may arrive after this CTA returned.
// rule: P7
// fix: s|    func.return|    copy.cluster_sync func.return|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @p7_load_tail_one_slot_short(%A: memref<?x64xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %true = arith.constant true
    %rows = memref.dim %A, %c0 : memref<?x64xf16>
    %count = arith.divui %rows, %c64 : index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %tiles = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %empty = copy.barrier_init arrivals 2 : !copy.barrier<2>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      // The producer: tile j into slot j mod 2, half of it multicast to both CTAs.
      scf.for %j = %c0 to %count step %c1 {
        %s = arith.remui %j, %c2 : index
        %lap = arith.divui %j, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
        copy.barrier_arrive_expect_tx %full[%s], 8192 : !copy.barrier<2>
        %row = arith.muli %j, %c64 : index
        copy.async_copy %A[%row, %c0] to %tiles[%s] barrier %full[%s] {arrive = false, collective = array<i64: 0>} : memref<?x64xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
      }
      // load_tail: the releases of the 2 slots after the last, by both CTAs.
      %end = arith.addi %count, %c1 : index
      scf.for %it = %count to %end step %c1 {
        %s = arith.remui %it, %c2 : index
        %lap = arith.divui %it, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
      }
    }, {
    ^bb0(%t: index):
      // The consumer: reads tile j, releases its slot here and in the peer.
      scf.for %j = %c0 to %count step %c1 {
        %s = arith.remui %j, %c2 : index
        %lap = arith.divui %j, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        copy.barrier_wait %full[%s], %phase : !copy.barrier<2>
        %v = memref.load %tiles[%s, %t, %c0] : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
        copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
        // expected-note@+1 {{the arrival of CTA 1}}
        copy.peer_arrive %empty[%s] peer %peer : !copy.barrier<2>
      }
    }
    // expected-error@+3 {{CTA 0 may return while role 1 of CTA 1 may still arrive on its barrier: nothing this CTA waits for before the return comes after that arrival}}
    // expected-note@+2 {{wait, before the return, for the phase that arrival completes (the producer's load_tail waits for every slot's release), or end the kernel with copy.cluster_sync in every CTA}}
    // expected-note@+1 {{found for %count = 1}}
    func.return
  }
}
