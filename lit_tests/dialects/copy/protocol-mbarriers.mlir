// RUN: copy-opt %s --split-input-file --verify-diagnostics

// Kernels with the mbarrier-breadth ops whose protocol is correct: the protocol analysis
// proves each with no finding at all (no error, no warning). The checks:
// analysis/protocol/ (state.py's arrive_drop, expect, complete_tx, inval_group and
// reinit_group; walk.py's methods of the same names). tests/dialect/mbarrier_kernels.py makes these
// kernels for any size (test_mbarrier_ops_gpu.py runs them).

// The block's threads write SMEM and complete the bytes they wrote (4 each) on a phase the
// elected thread expects 512 bytes of and arrives on once; each thread then reads its
// neighbour's element. Two chunks: phases 0 and 1.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @complete_tx_threads(%x: memref<1000xf32>, %y: memref<1000xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %n = arith.constant 1000 : index
    %zero = arith.constant 0.0 : f32
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %buf = copy.alloc_smem : memref<128xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %base = arith.muli %bid, %c256 : index
    %next = arith.addi %tid, %c1 : index
    %src = arith.remui %next, %c128 : index
    scf.for %k = %c0 to %c2 step %c1 {
      %km = arith.muli %k, %c128 : index
      %chunk = arith.addi %base, %km : index
      %i = arith.addi %chunk, %tid : index
      %in = arith.cmpi ult, %i, %n : index
      %v = scf.if %in -> (f32) {
        %g = memref.load %x[%i] : memref<1000xf32>
        scf.yield %g : f32
      } else {
        scf.yield %zero : f32
      }
      copy.barrier_expect_tx %bar[%c0], 512 : !copy.barrier<1>
      memref.store %v, %buf[%tid] : memref<128xf32, #copy.smem>
      copy.barrier_complete_tx %bar[%c0], 4 issuer threads : !copy.barrier<1>
      copy.barrier_arrive %bar[%c0] issuer elected : !copy.barrier<1>
      %p = arith.cmpi ne, %k, %c0 : index
      copy.barrier_wait %bar[%c0], %p : !copy.barrier<1>
      %w = memref.load %buf[%src] : memref<128xf32, #copy.smem>
      scf.if %in {
        memref.store %w, %y[%i] : memref<1000xf32>
      }
      "gpu.barrier"() : () -> ()
    }
    func.return
  }
}

// -----

// The same with issuer warps: lane 0 of each warp completes the warp's 128 bytes.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @complete_tx_warps(%x: memref<389xf32>, %y: memref<389xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %n = arith.constant 389 : index
    %zero = arith.constant 0.0 : f32
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %buf = copy.alloc_smem : memref<128xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %base = arith.muli %bid, %c256 : index
    %next = arith.addi %tid, %c1 : index
    %src = arith.remui %next, %c128 : index
    scf.for %k = %c0 to %c2 step %c1 {
      %km = arith.muli %k, %c128 : index
      %chunk = arith.addi %base, %km : index
      %i = arith.addi %chunk, %tid : index
      %in = arith.cmpi ult, %i, %n : index
      %v = scf.if %in -> (f32) {
        %g = memref.load %x[%i] : memref<389xf32>
        scf.yield %g : f32
      } else {
        scf.yield %zero : f32
      }
      copy.barrier_expect_tx %bar[%c0], 512 : !copy.barrier<1>
      memref.store %v, %buf[%tid] : memref<128xf32, #copy.smem>
      copy.barrier_complete_tx %bar[%c0], 128 issuer warps : !copy.barrier<1>
      copy.barrier_arrive %bar[%c0] issuer elected : !copy.barrier<1>
      %p = arith.cmpi ne, %k, %c0 : index
      copy.barrier_wait %bar[%c0], %p : !copy.barrier<1>
      %w = memref.load %buf[%src] : memref<128xf32, #copy.smem>
      scf.if %in {
        memref.store %w, %y[%i] : memref<389xf32>
      }
      "gpu.barrier"() : () -> ()
    }
    func.return
  }
}

// -----

// A producer warp fills a ring of 2 slots; of the 4 consumer warps, the first copies its
// rows of the first 2 tiles, then drops out of each slot's empty barrier with arrive_drop
// (after the wait for the fill it would have read); the empty barriers then count 3 and the
// other 3 warps split the rows.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @arrive_drop(%x: memref<168x32xf32>, %y: memref<168x32xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c6 = arith.constant 6 : index
    %c8 = arith.constant 8 : index
    %c24 = arith.constant 24 : index
    %c32 = arith.constant 32 : index
    %cdrop = arith.constant 2 : index
    %cdone = arith.constant 4 : index
    %total = arith.constant 7 : index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %left = arith.subi %total, %bid : index
    %nbm1 = arith.subi %nb, %c1 : index
    %num = arith.addi %left, %nbm1 : index
    %count = arith.divui %num, %nb : index
    %ring = copy.alloc_smem : memref<2x24x32xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<2>
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %again = arith.cmpi uge, %k, %c2 : index
        scf.if %again {
          %prev = arith.subi %lap, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%s], %pp : !copy.barrier<2>
        }
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %row = arith.muli %tile, %c24 : index
        copy.async_copy %x[%row, %c0] to %ring[%s] barrier %full[%s]
          : memref<168x32xf32> to memref<2x24x32xf32, #copy.smem>, !copy.barrier<2>
      }
    }, {
    ^bb0(%t: index):
      %w = arith.divui %t, %c32 : index
      %lane = arith.remui %t, %c32 : index
      %first = arith.cmpi eq, %w, %c0 : index
      scf.for %k = %c0 to %count step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %row = arith.muli %tile, %c24 : index
        %early = arith.cmpi ult, %k, %cdrop : index
        %late = arith.cmpi uge, %k, %cdrop : index
        %gone = arith.andi %first, %late : i1
        scf.if %gone {
          // The first warp drops out of each slot's empty barrier once, after the fill it
          // would have read (so that its arrival counts toward that fill's phase).
          %dropping = arith.cmpi ult, %k, %cdone : index
          scf.if %dropping {
            copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
            copy.barrier_arrive_drop %empty[%s] issuer warps : !copy.barrier<2>
          }
        } else {
          copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
          %nr = arith.select %early, %c6, %c8 : index
          %off = arith.select %early, %c0, %c1 : index
          %wi = arith.subi %w, %off : index
          %start = arith.muli %wi, %nr : index
          scf.for %r = %c0 to %nr step %c1 {
            %rr = arith.addi %start, %r : index
            %v = memref.load %ring[%s, %rr, %lane] : memref<2x24x32xf32, #copy.smem>
            %gr = arith.addi %row, %rr : index
            memref.store %v, %y[%gr, %lane] : memref<168x32xf32>
          }
          copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<2>
        }
      }
    }
    func.return
  }
}

// -----

// Two lives of one barrier: inval, then reinit with 2 arrivals (a nocomplete one and the
// load's), whose wait is on parity 0 again.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @inval_reinit(%x: memref<200x36xf32>, %y: memref<200x36xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %false = arith.constant false
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %row0 = arith.muli %bid, %c128 : index
    %row1 = arith.addi %row0, %c64 : index
    %a = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %b = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row0, %c0] to %a barrier %bar[%c0] : memref<200x36xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %a to %y[%row0, %c0] : memref<64x64xf32, #copy.smem> to memref<200x36xf32>
    copy.commit_group bulk
    // Phase 0 has completed: parity 1 names the next phase. A new life starts at phase 0.
    copy.barrier_inval %bar : !copy.barrier<1>
    copy.barrier_reinit %bar arrivals 2 : !copy.barrier<1>
    copy.barrier_arrive %bar[%c0] count 1 nocomplete issuer elected : !copy.barrier<1>
    copy.async_copy %x[%row1, %c0] to %b barrier %bar[%c0] : memref<200x36xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %b to %y[%row1, %c0] : memref<64x64xf32, #copy.smem> to memref<200x36xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// The sm_80 forms: a nocomplete arrival and an arrive_drop complete phase 0 (3 arrivals),
// which lowers the count to 2; a nocomplete arrive_drop and an arrival complete phase 1.
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @sm80_forms(%x: memref<128xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %bar = copy.barrier_init arrivals 3 : !copy.barrier<1>
    copy.barrier_arrive %bar[%c0] count 2 nocomplete issuer elected : !copy.barrier<1>
    copy.barrier_arrive_drop %bar[%c0] issuer elected : !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.barrier_arrive_drop %bar[%c0] count 1 nocomplete issuer elected : !copy.barrier<1>
    copy.barrier_arrive %bar[%c0] issuer elected : !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
    copy.barrier_inval %bar : !copy.barrier<1>
    copy.barrier_reinit %bar arrivals 1 : !copy.barrier<1>
    func.return
  }
}

// -----

// arrive_expect_tx's bytes completed by the threads (complete_tx, 4 bytes each) rather
// than by copies: the phase balances (the one-block check TR16 leaves it to the analysis).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @expect_tx_then_complete_tx() attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    copy.barrier_complete_tx %bar[%c0], 4 : !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    func.return
  }
}

// -----

// A barrier re-initialized every iteration: each life waits on parity 0 for its one phase
// (without the inval and reinit, the second iteration's parity 0 would name the phase
// before, and its store would read the tile before it lands).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @loop(%x: memref<1024x64xf32>, %y: memref<1024x64xf32>, %n: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %a = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    scf.for %k = %c0 to %n step %c1 {
      %row = arith.muli %k, %c64 : index
      copy.async_copy %x[%row, %c0] to %a barrier %bar[%c0] : memref<1024x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
      copy.async_copy %a to %y[%row, %c0] : memref<64x64xf32, #copy.smem> to memref<1024x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
      copy.barrier_inval %bar : !copy.barrier<1>
      copy.barrier_reinit %bar arrivals 1 : !copy.barrier<1>
    }
    copy.wait_group bulk 0
    func.return
  }
}
