// RUN: copy-opt %s --split-input-file --verify-diagnostics

// Loops whose trip count is not known before the run, proven for every count with no
// finding: what the protocol reads in each repeats with a lap of a few iterations
// (analysis/protocol/periods.py), and the driver chooses the counts of grid-stride loops and
// of scf.while loops over a tile counter, the same for every role.

// A persistent kernel: each role walks the CTA's tiles with a grid-stride loop (its start
// the block id, its step the grid size), and the ring's position is a counter the tile loop
// carries (8 k-blocks a tile, 4 stages: every tile starts at slot 0 of an even lap).
func.func @grid_stride_tile_loop(%A: memref<?x256xf32>, %C: memref<?x64xf32>, %tiles: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
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
        memref.store %v, %out[%t, %c0] : memref<32x64xf32, #copy.smem>
      }
      copy.fence_async_shared
      copy.async_copy %out to %C[%row, %c0] : memref<32x64xf32, #copy.smem> to memref<?x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
      %next = arith.addi %it0, %c8 : index
      scf.yield %next : index
    }
  }
  func.return
}

// -----

// The same kernel written as CUTLASS's `while (work_tile.is_valid())`: an scf.while over a
// tile counter the block advances by the grid size. Both roles test the same values the same
// way, so they take the same number of tiles.
func.func @while_over_a_tile_counter(%A: memref<?x256xf32>, %C: memref<?x64xf32>, %tiles: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
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
  %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
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
      %next_tile = arith.addi %tile, %nb : index
      scf.yield %next_tile, %next : index, index
    }
  }
  func.return
}

// -----

// A persistent loop flattened into one: the ring's slot and parity from the iteration, and
// the tile's epilogue under the last of its 8 k-blocks (i mod 8 == 7): a lap of 8.
func.func @flattened_tile_loop_epilogue_every_8(%a: memref<?x64xf32>, %c: memref<?x64xf32>, %n: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
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
    memref.store %v, %out[%c0, %t] : memref<64x64xf32, #copy.smem>
    "gpu.barrier"() : () -> ()
    %kb = arith.remui %i, %c8 : index
    %epilogue = arith.cmpi eq, %kb, %c7 : index
    scf.if %epilogue {
      copy.fence_async_shared
      "gpu.barrier"() : () -> ()
      copy.async_copy %out to %c[%row, %c0] : memref<64x64xf32, #copy.smem> to memref<?x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
    }
  }
  copy.wait_group bulk 0
  func.return
}

// -----

// A ring position the loop carries, as CUTLASS's PipelineState: the slot wraps to 0 after
// the last stage and the phase flips then; the carried pair repeats every two rings.
func.func @carried_pipeline_state(%a: memref<?x64xf32>, %c: memref<?x64xf32>, %n: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %false = arith.constant false
  %true = arith.constant true
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %ring = copy.alloc_smem : memref<3x64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<3>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%slot = %c0, %phase = %false) -> (index, i1) {
    %row = arith.muli %i, %c64 : index
    copy.async_copy %a[%row, %c0] to %ring[%slot] barrier %bars[%slot] : memref<?x64xf32> to memref<3x64x64xf32, #copy.smem>, !copy.barrier<3>
    copy.barrier_wait %bars[%slot], %phase : !copy.barrier<3>
    %v = memref.load %ring[%slot, %c0, %t] : memref<3x64x64xf32, #copy.smem>
    memref.store %v, %c[%i, %t] : memref<?x64xf32>
    "gpu.barrier"() : () -> ()
    %next = arith.addi %slot, %c1 : index
    %wrap = arith.cmpi eq, %next, %c3 : index
    %slot2 = arith.select %wrap, %c0, %next : index
    %flip = arith.xori %phase, %true : i1
    %phase2 = arith.select %wrap, %flip, %phase : i1
    scf.yield %slot2, %phase2 : index, i1
  }
  func.return
}

// -----

// Double buffering: the load of iteration i + 1 is issued under i + 1 < n before the threads
// read slot i mod 2; the last iteration issues none.
func.func @prefetch_of_the_next_iteration(%a: memref<?x64xf32>, %c: memref<?x64xf32>, %n: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %ring = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  %has = arith.cmpi sgt, %n, %c0 : index
  scf.if %has {
    copy.async_copy %a[%c0, %c0] to %ring[%c0] barrier %bars[%c0] : memref<?x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
  }
  scf.for %i = %c0 to %n step %c1 {
    %i1 = arith.addi %i, %c1 : index
    %more = arith.cmpi slt, %i1, %n : index
    scf.if %more {
      %s1 = arith.remui %i1, %c2 : index
      %row = arith.muli %i1, %c64 : index
      copy.async_copy %a[%row, %c0] to %ring[%s1] barrier %bars[%s1] : memref<?x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
    }
    %s = arith.remui %i, %c2 : index
    %lap = arith.divui %i, %c2 : index
    %pm = arith.remui %lap, %c2 : index
    %p = arith.cmpi ne, %pm, %c0 : index
    copy.barrier_wait %bars[%s], %p : !copy.barrier<2>
    %v = memref.load %ring[%s, %c0, %t] : memref<2x64x64xf32, #copy.smem>
    memref.store %v, %c[%i, %t] : memref<?x64xf32>
    "gpu.barrier"() : () -> ()
  }
  func.return
}

// -----

// A persistent cluster-of-2 ring whose load_tail counts on from the tile loop's ring
// position: `for it = n to n + 2` waits for the release of the 2 slots after the last,
// by both CTAs (the peer's multicast writes this CTA's slot, and its consumer releases it
// here), before the CTA returns. The loop's bounds shift with n, so it runs 2 iterations for
// every count, its slots it mod 2 and parities (it / 2) mod 2 repeat with n (before, its
// count was chosen, 0 among the options: a false P7 at the return; a start of n + a with an
// end of n + b crashed the analysis).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @load_tail_after_the_ring_position(%A: memref<?x64xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
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
      %end = arith.addi %count, %c2 : index
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
        copy.peer_arrive %empty[%s] peer %peer : !copy.barrier<2>
      }
    }
    func.return
  }
}
