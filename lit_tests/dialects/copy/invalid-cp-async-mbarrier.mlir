// RUN: copy-opt %s --split-input-file --verify-diagnostics

// mbarrier-tracked cp.async (`copy.async_copy ... barrier %b[%i] impl cp_async`: each issuing
// thread arrives once, cp.async.mbarrier.arrive.noinc, when its chunks have landed): the op
// rules (copy_dialect/copies.py) and the protocol's (analysis/protocol/state.py). Each
// chunk is named after the rule it breaks (`// rule:` gives the id in
// copy_dialect/rules.toml); `// fix: s|OLD|NEW|` lines give the edit the note describes
// (tests/tools/test_fix_notes.py applies them and checks that the result verifies).

// rule: MB13
// fix: s| {arrive = false}||
func.func @mb13_cp_async_on_a_barrier_without_arrival(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">, gpu.known_block_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 128 : !copy.barrier<1>
  // expected-error@+2 {{a cp.async copy on a barrier arrives on it (cp.async.mbarrier.arrive.noinc: one arrival per issuing thread once its chunks land), but it has arrive = false}}
  // expected-note@+1 {{drop arrive = false and count one arrival per issuing thread in the barrier's arrivals}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl cp_async {arrive = false} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// rule: MB12
// fix: s|copy.barrier_expect_tx %bar[%c0], 16384 : !copy.barrier<1>||
func.func @mb12_tx_bytes_on_a_cp_async_barrier(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">, gpu.known_block_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 128 : !copy.barrier<1>
  copy.barrier_expect_tx %bar[%c0], 16384 : !copy.barrier<1>
  // expected-error@+2 {{a cp.async copy arrives on this barrier group, which copy.barrier_expect_tx gives transaction bytes: cp.async copies deliver no bytes to a barrier, only their threads' arrivals}}
  // expected-note@+1 {{drop the copy.barrier_expect_tx}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl cp_async : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// Each of the 128 threads arrives once: a barrier that counts one arrival (a TMA load's
// count) completes with the first thread's chunks.
// rule: P5
// fix: s|arrivals 1 :|arrivals 128 :|
func.func @p5_cp_async_arrivals_beyond_the_count(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">, gpu.known_block_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // The count is wrong: the error is at the barrier_init, the copy's arrivals a note.
  // expected-error@+2 {{barrier 0 of %bar counts 1 arrivals a phase, but a cp.async copy on it makes 128 (one per issuing thread): phase 0 completes with the first 1}}
  // expected-note@+1 {{a cp.async copy on a barrier makes one arrival per issuing thread, 128 here: initialize the barrier with arrivals 128}}
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{this copy makes 128 arrivals on phase 0}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl cp_async : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  %v = memref.load %buf[%c0, %c0] : memref<64x64xf32, #copy.smem>
  memref.store %v, %y[%c0, %c0] : memref<256x256xf32>
  func.return
}

// -----

// Two copies a phase, 64 threads each: 128 arrivals, not the 256 the barrier counts.
// rule: P5
// fix: s|arrivals 256 :|arrivals 128 :|
func.func @p5_cp_async_arrivals_short_of_the_count(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">, gpu.known_block_size = array<i32: 64, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %false = arith.constant false
  %buf = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
  %c1 = arith.constant 1 : index
  // The count is wrong: the error is at the barrier_init, the wait that hangs a note.
  // expected-error@+2 {{barrier 0 of %bar counts 256 arrivals a phase, but the cp.async copies of phase 0 make 128 (one per issuing thread and copy) and nothing else arrives: it never completes}}
  // expected-note@+1 {{initialize the barrier with arrivals 128 (one per thread that issues each cp.async copy of a phase), or arrive on it 128 more times}}
  %bar = copy.barrier_init arrivals 256 : !copy.barrier<1>
  // expected-note@+1 {{an arrival on phase 0}}
  copy.async_copy %x[%c0, %c0] to %buf[%c0] barrier %bar[%c0] impl cp_async : memref<256x256xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<1>
  // expected-note@+1 {{an arrival on phase 0}}
  copy.async_copy %x[%c0, %c64] to %buf[%c1] barrier %bar[%c0] impl cp_async : memref<256x256xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<1>
  // expected-note@+1 {{this wait never returns}}
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  %v = memref.load %buf[%c0, %c0, %c0] : memref<2x64x64xf32, #copy.smem>
  memref.store %v, %y[%c0, %c0] : memref<256x256xf32>
  func.return
}

// -----

// The threads read the tile before its phase completes: the copy's arrivals come when its
// chunks land, so only a wait on that phase orders the read after them.
// rule: P1
// fix: s|%v = memref.load|copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> %v = memref.load|
func.func @p1_read_before_the_cp_async_phase(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">, gpu.known_block_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 128 : !copy.barrier<1>
  // expected-note@+1 {{the copy that fills it}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl cp_async : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  // expected-error@+2 {{threads' load reads %buf[0, 0] before the copy that fills %buf completes}}
  // expected-note@+1 {{wait on barrier 0 of %bar for phase 0 (copy.barrier_wait with parity 0) before the read}}
  %v = memref.load %buf[%c0, %c0] : memref<64x64xf32, #copy.smem>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  memref.store %v, %y[%c0, %c0] : memref<256x256xf32>
  func.return
}

// -----

// A producer warp refills its ring's slots without waiting for the consumer's release
// (`empty`): its own earlier chunks into the slot (and the consumer's reads) may still be in
// flight. The phase its threads' arrivals complete orders only those who wait on it.
// rule: P3
// fix: none -- the release wait needs the ring's lap parity (lit_tests/passes/copy-legalize-ring.mlir has the whole ring)
func.func @p3_refill_without_release(%x: memref<1024x64xf32>, %y: memref<1024x64xf32>) attributes {copy.target = #copy.target<"sm_80">, gpu.known_block_size = array<i32: 64, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %count = arith.constant 4 : index
  %ring = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
  %full = copy.barrier_init arrivals 32 : !copy.barrier<2>
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
  copy.warp_specialize warps [1, 1] {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %slot = arith.remui %k, %c2 : index
      %row = arith.muli %k, %c64 : index
      // expected-error@+3 {{the cp.async copy writes %ring[0] while an earlier copy may still be writing it}}
      // expected-note@+2 {{the earlier copy}}
      // expected-note@+1 {{when another role reads the slot, wait on the barrier it arrives on once it is done with the slot}}
      copy.async_copy %x[%row, %c0] to %ring[%slot] barrier %full[%slot] impl cp_async oob zeros : memref<1024x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %slot = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lap2 = arith.remui %lap, %c2 : index
      %fp = arith.cmpi ne, %lap2, %c0 : index
      copy.barrier_wait %full[%slot], %fp : !copy.barrier<2>
      %v = memref.load %ring[%slot, %c0, %t] : memref<2x64x64xf32, #copy.smem>
      %row = arith.muli %k, %c64 : index
      memref.store %v, %y[%row, %t] : memref<1024x64xf32>
      copy.barrier_arrive %empty[%slot] issuer elected : !copy.barrier<2>
    }
  }
  func.return
}

// -----

// The producer warp issues two cp.async copies a phase (A and B), 32 threads each: 64
// arrivals, but full counts 32: the A copy completes the phase, and the B copy's arrivals
// complete the next one.
// rule: P5
// fix: s|%full = copy.barrier_init arrivals 32|%full = copy.barrier_init arrivals 64|
func.func @p5_cp_async_count_short_of_two_copies(%a: memref<1024x64xf32>, %b: memref<1024x64xf32>, %y: memref<1024x64xf32>, %count: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %true = arith.constant true
  %ra = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
  %rb = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
  // expected-error@+3 {{barrier 0 of %full counts 32 arrivals a phase, but the cp.async copies issued for phase 0 make 64 (one per}}
  // expected-note@+2 {{initialize the barrier with arrivals 64 (one per thread that issues each cp.async copy of a phase)}}
  // expected-note@+1 {{found for %count = 1}}
  %full = copy.barrier_init arrivals 32 : !copy.barrier<2>
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
  copy.warp_specialize warps [1, 1] {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lm = arith.remui %lap, %c2 : index
      %lp = arith.cmpi ne, %lm, %c0 : index
      %acquire = arith.xori %lp, %true : i1
      copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
      %row = arith.muli %k, %c64 : index
      // expected-note@+1 {{these arrivals complete phase 0}}
      copy.async_copy %a[%row, %c0] to %ra[%s] barrier %full[%s] impl cp_async : memref<1024x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
      // expected-note@+1 {{these 32 arrivals land in phase 1}}
      copy.async_copy %b[%row, %c0] to %rb[%s] barrier %full[%s] impl cp_async : memref<1024x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lm = arith.remui %lap, %c2 : index
      %lp = arith.cmpi ne, %lm, %c0 : index
      copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
      %v = memref.load %ra[%s, %c0, %t] : memref<2x64x64xf32, #copy.smem>
      %w = memref.load %rb[%s, %c0, %t] : memref<2x64x64xf32, #copy.smem>
      %u = arith.addf %v, %w : f32
      %row = arith.muli %k, %c64 : index
      memref.store %u, %y[%row, %t] : memref<1024x64xf32>
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
    }
  }
  func.return
}

