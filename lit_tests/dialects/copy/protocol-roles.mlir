// RUN: copy-opt %s --split-input-file --verify-diagnostics

// Warp-specialized kernels whose protocol is correct: the roles of copy.warp_specialize run
// at once, and the protocol analysis proves each kernel for every interleaving, every trip
// count and every role priority, with no finding at all (no error, no warning). The checks:
// analysis/protocol/ (walk.py walks each role, run.py schedules them).

// A warp-specialized persistent TMA copy y = x: warp 0 (the producer) loads tiles into a ring
// of 4 slots; warp 1 (the storer) stores each slot once it is full, keeping up to 1 store in
// flight, and releases a slot (arrive on empty[s]) once the store that read it is done
// reading. Block k walks tiles bid + k * nblocks.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_copy(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    %c64 = arith.constant 64 : index
    %total = arith.constant 128 : index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %left = arith.subi %total, %bid : index
    %nbm1 = arith.subi %nb, %c1 : index
    %num = arith.addi %left, %nbm1 : index
    %count = arith.divui %num, %nb : index
    %ring = copy.alloc_smem : memref<4x64x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<4>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        // From the second lap on, wait until the storer released slot s (phase lap - 1).
        %again = arith.cmpi uge, %k, %c4 : index
        scf.if %again {
          %prev = arith.subi %lap, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%s], %pp : !copy.barrier<4>
        }
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c64 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %x[%row, %col] to %ring[%s] barrier %full[%s] : memref<1024x1024xf32> to memref<4x64x128xf32, #copy.smem>, !copy.barrier<4>
      }
    }, {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<4>
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c64 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %ring[%s] to %y[%row, %col] : memref<4x64x128xf32, #copy.smem> to memref<1024x1024xf32>
        copy.commit_group bulk
        // All but the last store have read their slots: release the slot of store k - 1.
        %started = arith.cmpi uge, %k, %c1 : index
        scf.if %started {
          copy.wait_group bulk 1 read_only
          %km1 = arith.subi %k, %c1 : index
          %sp = arith.remui %km1, %c4 : index
          copy.barrier_arrive %empty[%sp] issuer elected : !copy.barrier<4>
        }
      }
      copy.wait_group bulk 0
    }
    func.return
  }
}

// -----

// A warp-specialized persistent copy that computes on its tiles: warp 0 (the producer) loads
// 32x128 tiles into a ring of 4 slots; warps 1-4 (the consumers, 128 threads) read each slot
// with memref.load, write it to a staging buffer, fence, store the staging buffer with TMA, and
// release the slot (one arrival per consumer warp on empty[s], which counts 4). The staging
// buffer is rewritten only once the previous store has read it (wait_group read_only).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_compute(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    %total = arith.constant 256 : index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %left = arith.subi %total, %bid : index
    %nbm1 = arith.subi %nb, %c1 : index
    %num = arith.addi %left, %nbm1 : index
    %count = arith.divui %num, %nb : index
    %ring = copy.alloc_smem : memref<4x32x128xf32, #copy.smem>
    %out = copy.alloc_smem : memref<32x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<4>
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %again = arith.cmpi uge, %k, %c4 : index
        scf.if %again {
          %prev = arith.subi %lap, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%s], %pp : !copy.barrier<4>
        }
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c32 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %x[%row, %col] to %ring[%s] barrier %full[%s] : memref<1024x1024xf32> to memref<4x32x128xf32, #copy.smem>, !copy.barrier<4>
      }
    }, {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<4>
        // The store of the tile before has read the staging buffer.
        copy.wait_group bulk 0 read_only
        scf.for %r = %c0 to %c32 step %c1 {
          %v = memref.load %ring[%s, %r, %t] : memref<4x32x128xf32, #copy.smem>
          memref.store %v, %out[%r, %t] : memref<32x128xf32, #copy.smem>
        }
        copy.fence_async_shared
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<4>
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c32 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %out to %y[%row, %col] : memref<32x128xf32, #copy.smem> to memref<1024x1024xf32>
        copy.commit_group bulk
      }
      copy.wait_group bulk 0
    }
    func.return
  }
}

// -----

// The storer goes on at once when copy.barrier_test sees the slot full, else waits for it.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_copy_test_then_wait(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    %c64 = arith.constant 64 : index
    %total = arith.constant 128 : index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %left = arith.subi %total, %bid : index
    %nbm1 = arith.subi %nb, %c1 : index
    %num = arith.addi %left, %nbm1 : index
    %count = arith.divui %num, %nb : index
    %ring = copy.alloc_smem : memref<4x64x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<4>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        // From the second lap on, wait until the storer released slot s (phase lap - 1).
        %again = arith.cmpi uge, %k, %c4 : index
        scf.if %again {
          %prev = arith.subi %lap, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%s], %pp : !copy.barrier<4>
        }
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c64 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %x[%row, %col] to %ring[%s] barrier %full[%s] : memref<1024x1024xf32> to memref<4x64x128xf32, #copy.smem>, !copy.barrier<4>
      }
    }, {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        // Go on at once if the slot is full, else wait for it (each try_wait suspended up to
        // 1 us).
        %ready = copy.barrier_test %full[%s], %lp : !copy.barrier<4>
        scf.if %ready {
        } else {
          copy.barrier_wait %full[%s], %lp suspend_hint 1000 : !copy.barrier<4>
        }
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c64 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %ring[%s] to %y[%row, %col] : memref<4x64x128xf32, #copy.smem> to memref<1024x1024xf32>
        copy.commit_group bulk
        // All but the last store have read their slots: release the slot of store k - 1.
        %started = arith.cmpi uge, %k, %c1 : index
        scf.if %started {
          copy.wait_group bulk 1 read_only
          %km1 = arith.subi %k, %c1 : index
          %sp = arith.remui %km1, %c4 : index
          copy.barrier_arrive %empty[%sp] issuer elected : !copy.barrier<4>
        }
      }
      copy.wait_group bulk 0
    }
    func.return
  }
}

// -----

// The storer spins on copy.barrier_test (an scf.while that ends once the test holds).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_copy_spin(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    %c64 = arith.constant 64 : index
    %total = arith.constant 128 : index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %left = arith.subi %total, %bid : index
    %nbm1 = arith.subi %nb, %c1 : index
    %num = arith.addi %left, %nbm1 : index
    %count = arith.divui %num, %nb : index
    %ring = copy.alloc_smem : memref<4x64x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<4>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        // From the second lap on, wait until the storer released slot s (phase lap - 1).
        %again = arith.cmpi uge, %k, %c4 : index
        scf.if %again {
          %prev = arith.subi %lap, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%s], %pp : !copy.barrier<4>
        }
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c64 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %x[%row, %col] to %ring[%s] barrier %full[%s] : memref<1024x1024xf32> to memref<4x64x128xf32, #copy.smem>, !copy.barrier<4>
      }
    }, {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        // Spin on the slot's barrier until it is full.
        %true = arith.constant true
        scf.while () : () -> () {
          %ready = copy.barrier_test %full[%s], %lp : !copy.barrier<4>
          %busy = arith.xori %ready, %true : i1
          scf.condition(%busy)
        } do {
          scf.yield
        }
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c64 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %ring[%s] to %y[%row, %col] : memref<4x64x128xf32, #copy.smem> to memref<1024x1024xf32>
        copy.commit_group bulk
        // All but the last store have read their slots: release the slot of store k - 1.
        %started = arith.cmpi uge, %k, %c1 : index
        scf.if %started {
          copy.wait_group bulk 1 read_only
          %km1 = arith.subi %k, %c1 : index
          %sp = arith.remui %km1, %c4 : index
          copy.barrier_arrive %empty[%sp] issuer elected : !copy.barrier<4>
        }
      }
      copy.wait_group bulk 0
    }
    func.return
  }
}

// -----

// Each role computes the block's trip count itself, alike: the analysis binds one count for both.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_copy_counts_in_roles(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    %c64 = arith.constant 64 : index
    %total = arith.constant 128 : index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %ring = copy.alloc_smem : memref<4x64x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<4>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      %left = arith.subi %total, %bid : index
      %nbm1 = arith.subi %nb, %c1 : index
      %num = arith.addi %left, %nbm1 : index
      %count = arith.divui %num, %nb : index
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        // From the second lap on, wait until the storer released slot s (phase lap - 1).
        %again = arith.cmpi uge, %k, %c4 : index
        scf.if %again {
          %prev = arith.subi %lap, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%s], %pp : !copy.barrier<4>
        }
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c64 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %x[%row, %col] to %ring[%s] barrier %full[%s] : memref<1024x1024xf32> to memref<4x64x128xf32, #copy.smem>, !copy.barrier<4>
      }
    }, {
    ^bb0(%t: index):
      %left = arith.subi %total, %bid : index
      %nbm1 = arith.subi %nb, %c1 : index
      %num = arith.addi %left, %nbm1 : index
      %count = arith.divui %num, %nb : index
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<4>
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c64 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %ring[%s] to %y[%row, %col] : memref<4x64x128xf32, #copy.smem> to memref<1024x1024xf32>
        copy.commit_group bulk
        // All but the last store have read their slots: release the slot of store k - 1.
        %started = arith.cmpi uge, %k, %c1 : index
        scf.if %started {
          copy.wait_group bulk 1 read_only
          %km1 = arith.subi %k, %c1 : index
          %sp = arith.remui %km1, %c4 : index
          copy.barrier_arrive %empty[%sp] issuer elected : !copy.barrier<4>
        }
      }
      copy.wait_group bulk 0
    }
    func.return
  }
}

// -----

// Two consumer warpgroups share each tile: they meet at named barrier 4 (256 threads) once the
// staging buffer is free and once both halves are written and fenced; warpgroup 1 stores it.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_two_consumer_warpgroups(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 288, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    %total = arith.constant 256 : index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %left = arith.subi %total, %bid : index
    %nbm1 = arith.subi %nb, %c1 : index
    %num = arith.addi %left, %nbm1 : index
    %count = arith.divui %num, %nb : index
    %ring = copy.alloc_smem : memref<4x32x128xf32, #copy.smem>
    %out = copy.alloc_smem : memref<32x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 8 : !copy.barrier<4>
    copy.warp_specialize warps [1, 4, 4] {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %again = arith.cmpi uge, %k, %c4 : index
        scf.if %again {
          %prev = arith.subi %lap, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%s], %pp : !copy.barrier<4>
        }
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c32 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %x[%row, %col] to %ring[%s] barrier %full[%s] : memref<1024x1024xf32> to memref<4x32x128xf32, #copy.smem>, !copy.barrier<4>
      }
    }, {
    ^bb0(%t: index):
      // Warpgroup 1: rows 0-15 of each tile; its elected thread stores the staging buffer.
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<4>
        // The store of the tile before has read the staging buffer: tell warpgroup 2.
        copy.wait_group bulk 0 read_only
        copy.named_barrier_sync 4, 256
        scf.for %r = %c0 to %c16 step %c1 {
          %v = memref.load %ring[%s, %r, %t] : memref<4x32x128xf32, #copy.smem>
          memref.store %v, %out[%r, %t] : memref<32x128xf32, #copy.smem>
        }
        copy.fence_async_shared
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<4>
        // Warpgroup 2 has written and fenced its rows.
        copy.named_barrier_sync 4, 256
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c32 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %out to %y[%row, %col] : memref<32x128xf32, #copy.smem> to memref<1024x1024xf32>
        copy.commit_group bulk
      }
      copy.wait_group bulk 0
    }, {
    ^bb0(%t: index):
      // Warpgroup 2: rows 16-31.
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<4>
        copy.named_barrier_sync 4, 256
        scf.for %r = %c16 to %c32 step %c1 {
          %v = memref.load %ring[%s, %r, %t] : memref<4x32x128xf32, #copy.smem>
          memref.store %v, %out[%r, %t] : memref<32x128xf32, #copy.smem>
        }
        copy.fence_async_shared
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<4>
        copy.named_barrier_sync 4, 256
      }
    }
    func.return
  }
}

// -----

// The compute variant with the store under a condition on the warp index that holds for the
// role's first warp, which holds its elected thread (P10 accepts warp-uniform conditions).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_compute_store_by_warp_0(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    %total = arith.constant 256 : index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %left = arith.subi %total, %bid : index
    %nbm1 = arith.subi %nb, %c1 : index
    %num = arith.addi %left, %nbm1 : index
    %count = arith.divui %num, %nb : index
    %ring = copy.alloc_smem : memref<4x32x128xf32, #copy.smem>
    %out = copy.alloc_smem : memref<32x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<4>
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %again = arith.cmpi uge, %k, %c4 : index
        scf.if %again {
          %prev = arith.subi %lap, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%s], %pp : !copy.barrier<4>
        }
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c32 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %x[%row, %col] to %ring[%s] barrier %full[%s] : memref<1024x1024xf32> to memref<4x32x128xf32, #copy.smem>, !copy.barrier<4>
      }
    }, {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<4>
        // The store of the tile before has read the staging buffer.
        copy.wait_group bulk 0 read_only
        scf.for %r = %c0 to %c32 step %c1 {
          %v = memref.load %ring[%s, %r, %t] : memref<4x32x128xf32, #copy.smem>
          memref.store %v, %out[%r, %t] : memref<32x128xf32, #copy.smem>
        }
        copy.fence_async_shared
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<4>
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c32 : index
        %col = arith.muli %tc, %c128 : index
        %warp = arith.divui %t, %c32 : index
        %first = arith.cmpi eq, %warp, %c0 : index
        scf.if %first {
          copy.async_copy %out to %y[%row, %col] : memref<32x128xf32, #copy.smem> to memref<1024x1024xf32>
          copy.commit_group bulk
        }
      }
      copy.wait_group bulk 0
    }
    func.return
  }
}

// -----

// The producer is a warpgroup (setmaxnreg moves whole warpgroups): its first warp alone runs
// the loop, so no warp waits on %empty without being kept in step.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_compute_producer_warpgroup(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    %total = arith.constant 256 : index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %left = arith.subi %total, %bid : index
    %nbm1 = arith.subi %nb, %c1 : index
    %num = arith.addi %left, %nbm1 : index
    %count = arith.divui %num, %nb : index
    %ring = copy.alloc_smem : memref<4x32x128xf32, #copy.smem>
    %out = copy.alloc_smem : memref<32x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<4>
    copy.warp_specialize warps [4, 4] maxnreg [40, 232] {
    ^bb0(%t: index):
      // Warp 0 alone runs the producer loop; the warpgroup's other warps wait for nothing.
      %warp = arith.divui %t, %c32 : index
      %first = arith.cmpi eq, %warp, %c0 : index
      scf.if %first {
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %again = arith.cmpi uge, %k, %c4 : index
        scf.if %again {
          %prev = arith.subi %lap, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%s], %pp : !copy.barrier<4>
        }
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c32 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %x[%row, %col] to %ring[%s] barrier %full[%s] : memref<1024x1024xf32> to memref<4x32x128xf32, #copy.smem>, !copy.barrier<4>
      }
      }
    }, {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<4>
        // The store of the tile before has read the staging buffer.
        copy.wait_group bulk 0 read_only
        scf.for %r = %c0 to %c32 step %c1 {
          %v = memref.load %ring[%s, %r, %t] : memref<4x32x128xf32, #copy.smem>
          memref.store %v, %out[%r, %t] : memref<32x128xf32, #copy.smem>
        }
        copy.fence_async_shared
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<4>
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %tr = arith.divui %tile, %c8 : index
        %tc = arith.remui %tile, %c8 : index
        %row = arith.muli %tr, %c32 : index
        %col = arith.muli %tc, %c128 : index
        copy.async_copy %out to %y[%row, %col] : memref<32x128xf32, #copy.smem> to memref<1024x1024xf32>
        copy.commit_group bulk
      }
      copy.wait_group bulk 0
    }
    func.return
  }
}
