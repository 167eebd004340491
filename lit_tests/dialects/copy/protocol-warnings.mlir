// RUN: copy-opt %s --split-input-file --verify-diagnostics

// What the protocol analysis cannot prove: one kernel per chunk, a warning (under the id of
// the rule it cannot prove) that says what to add or to check the kernel at run time with
// --debug-guards. The checks: analysis/protocol/walk.py, state.py and analysis.py.

// rule: P6
func.func @p6_parity_from_a_kernel_argument(%x: memref<256x256xf32>, %parity: i1) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  // expected-warning@+2 {{cannot prove this wait on barrier 0 of %bar: its parity is not known statically}}
  // expected-note@+1 {{compute the parity from the loop's induction variable ((i / S) mod 2) or carry it through the loop, or check}}
  copy.barrier_wait %bar[%c0], %parity : !copy.barrier<1>
  func.return
}

// -----

// rule: P9
func.func @p9_barrier_index_from_a_kernel_argument(%x: memref<256x256xf32>, %i: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  // expected-warning@+2 {{cannot prove this op's barrier: its index is not known statically}}
  // expected-note@+1 {{compute it from constants and the loop's induction variable (i mod S), or check it at run time with}}
  copy.async_copy %x[%c0, %c0] to %tile barrier %bars[%i] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<2>
  copy.barrier_wait %bars[%c0], %false : !copy.barrier<2>
  func.return
}

// -----

// rule: P6
func.func @p6_arrival_by_an_unknown_number_of_threads() attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %bar = copy.barrier_init arrivals 128 : !copy.barrier<1>
  // expected-warning@+2 {{cannot prove the phases of barrier 0 of %bar: this arrival is made by every thread}}
  // expected-note@+1 {{give the kernel gpu.known_block_size, and put the arrival under scf.if on the thread id when one thread}}
  copy.barrier_arrive %bar[%c0] : !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// rule: P1
func.func @p1_read_of_a_slot_the_analysis_cannot_tell(%x: memref<256x256xf32>, %y: memref<256x256xf32>, %j: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %false = arith.constant false
  %ring = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  copy.async_copy %x[%c0, %c0] to %ring[%c0] barrier %bars[%c0] : memref<256x256xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
  // expected-note@+1 {{the copy that fills it}}
  copy.async_copy %x[%c0, %c0] to %ring[%c1] barrier %bars[%c1] : memref<256x256xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
  copy.barrier_wait %bars[%c0], %false : !copy.barrier<2>
  // Slot 0 is complete, slot 1 may not be: which one is %j?
  // expected-warning@+2 {{cannot prove that the TMA store reads %ring[?] only after the copy that fills %ring[1]}}
  // expected-note@+1 {{wait on barrier 1 of %bars for phase 0 (copy.barrier_wait with parity 0) before the read}}
  copy.async_copy %ring[%j] to %y[%c0, %c0] : memref<2x64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.barrier_wait %bars[%c1], %false : !copy.barrier<2>
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: P10
func.func @p10_loop_longer_than_the_analysis_follows(%x: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = arith.constant 5000 : index
  %c4321 = arith.constant 4321 : index
  // A loop that prefetches at iteration 4321 only is not proven for every count (the
  // comparison with a constant beyond the counts tried: analysis/protocol/general.py), so
  // it is walked as written.
  // expected-warning@+2 {{cannot prove the copies in this loop: its 5000 iterations are more than the 4096 the analysis}}
  // expected-note@+1 {{split the loop, or check the kernel at run time with --debug-guards}}
  scf.for %i = %c0 to %n step %c1 {
    %at = arith.cmpi eq, %i, %c4321 : index
    scf.if %at {
      copy.prefetch %x[%c0, %c0] {box = array<i64: 64, 64>} : memref<256x256xf32>
    }
  }
  func.return
}

// -----

// rule: P10
func.func @p10_loop_slot_grows_with_the_iteration(%x: memref<256x256xf32>, %count: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %false = arith.constant false
  %true = arith.constant true
  %rows = copy.alloc_smem : memref<64x8x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // Each iteration fills the next row block: a new SMEM region every time.
  // expected-warning@+3 {{cannot prove the copies of this loop for every trip count: 'copy.async_copy' reads a value that grows with the iteration}}
  // expected-note@+2 {{compute ring slots, parities and conditions from the induction variable with arith ops}}
  // expected-note@+1 {{found for %count = 8}}
  %last = scf.for %i = %c0 to %count step %c1 iter_args(%p = %false) -> (i1) {
    // expected-note@+1 {{here}}
    copy.async_copy %x[%c0, %c0] to %rows[%i] barrier %bar[%c0] : memref<256x256xf32> to memref<64x8x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %p : !copy.barrier<1>
    %q = arith.xori %p, %true : i1
    scf.yield %q : i1
  }
  func.return
}

// -----

// rule: P10
func.func @p10_loop_with_no_steady_state(%x: memref<256x256xf32>, %count: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %false = arith.constant false
  %true = arith.constant true
  %rows = copy.alloc_smem : memref<4x8x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // The slot is k mod 4 of a k the loop doubles: slots 1, 2, 0, 0, ... but k itself,
  // which the loop carries, never comes back to a value it had.
  // expected-warning@+3 {{cannot prove the copies of this loop for more than 10 iterations: it reaches no steady state the}}
  // expected-note@+2 {{compute ring slots and parities from the induction variable (i mod S, (i / S) mod 2), or check the kernel at}}
  // expected-note@+1 {{found for %count = 10}}
  %last:2 = scf.for %i = %c0 to %count step %c1 iter_args(%p = %false, %k = %c1) -> (i1, index) {
    %s = arith.remui %k, %c4 : index
    copy.async_copy %x[%c0, %c0] to %rows[%s] barrier %bar[%c0] : memref<256x256xf32> to memref<4x8x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %p : !copy.barrier<1>
    %q = arith.xori %p, %true : i1
    %k2 = arith.muli %k, %c2 : index
    scf.yield %q, %k2 : i1, index
  }
  func.return
}

// -----

// rule: P10
// expected-warning@+2 {{cannot prove the copy protocol of a function with several blocks (cf branches)}}
// expected-note@+1 {{write the control flow with scf.if and scf.for}}
func.func @p10_copies_in_unstructured_control_flow(%x: memref<256x256xf32>, %c: i1) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  copy.prefetch %x[%c0, %c0] {box = array<i64: 64, 64>} : memref<256x256xf32>
  cf.br ^bb2
^bb2:
  func.return
}

// -----

// A persistent loop flattened into one, 64 k-blocks a tile: its epilogue comes once every
// 64 iterations, beyond the iterations the analysis walks (a mistake in it would show only
// at iteration 63). Not a proof: a warning naming the condition.
// rule: P10
func.func @p10_period_longer_than_the_walk(%a: memref<?x64xf32>, %c: memref<?x64xf32>, %n: index, %m: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %cl = arith.constant 64 : index
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %ring = copy.alloc_smem : memref<4x64x64xf32, #copy.smem>
  %out = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>
  // expected-warning@+3 {{cannot prove the copies of this loop for every trip count: 'arith.remui' repeats every 64 iterations, and the proof needs two laps of 64 iterations}}
  // expected-note@+2 {{write the loop as a nest (an outer loop over tiles around the loop over k-blocks)}}
  // expected-note@+1 {{found for %n = 48}}
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
    // expected-note@+1 {{repeats with this period}}
    %kb = arith.remui %i, %cl : index
    %km = arith.subi %cl, %c1 : index
    %epilogue = arith.cmpi eq, %kb, %km : index
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

// The epilogue only at iteration 100, beyond the iterations walked.
// rule: P10
func.func @p10_condition_settles_beyond_the_walk(%a: memref<?x64xf32>, %c: memref<?x64xf32>, %n: index, %m: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %cl = arith.constant 100 : index
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %ring = copy.alloc_smem : memref<4x64x64xf32, #copy.smem>
  %out = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>
  // expected-warning@+3 {{cannot prove the copies of this loop for every trip count: 'arith.cmpi' holds the same value only from iteration 101 on}}
  // expected-note@+2 {{write the loop as a nest}}
  // expected-note@+1 {{found for %n = 48}}
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
    // expected-note@+1 {{settles late}}
    %epilogue = arith.cmpi eq, %i, %cl : index
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

// A branch on the count after the loop, from 101 on: no count the analysis walks reaches it
// (the extra load it guards would still be landing at the return).
// rule: P10
func.func @p10_count_read_beyond_the_counts_tried(%a: memref<?x64xf32>, %n: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %ring = copy.alloc_smem : memref<4x64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>
  // expected-warning@+2 {{cannot prove the copies of this loop beyond the counts tried (up to %n = 18): its count is read differently from 101 on, so a count not tried need not behave like one tried}}
  // expected-note@+1 {{or check the kernel at run time with --debug-guards}}
  scf.for %i = %c0 to %n step %c1 {
    %s = arith.remui %i, %c4 : index
    %lap = arith.divui %i, %c4 : index
    %pm = arith.remui %lap, %c2 : index
    %p = arith.cmpi ne, %pm, %c0 : index
    %row = arith.muli %i, %c64 : index
    copy.async_copy %a[%row, %c0] to %ring[%s] barrier %bars[%s] : memref<?x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
    copy.barrier_wait %bars[%s], %p : !copy.barrier<4>
    %v = memref.load %ring[%s, %c0, %t] : memref<4x64x64xf32, #copy.smem>
    "gpu.barrier"() : () -> ()
  }
  // expected-note@+1 {{here}}
  %big = arith.cmpi ugt, %n, %c100 : index
  scf.if %big {
    copy.async_copy %a[%c0, %c0] to %ring[%c0] barrier %bars[%c0] : memref<?x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
  }
  func.return
}


// -----

// A grid-stride loop's count read through what the loop leaves (its iterations, counted in
// %done) after it, from 101 tiles on: no count the analysis walks reaches it.
// rule: P10
func.func @p10_grid_stride_count_read_beyond_the_counts_tried(%a: memref<?x64xf32>, %tiles: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
  %ring = copy.alloc_smem : memref<4x64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>
  // expected-warning@+2 {{cannot prove the copies of this loop beyond the counts tried (up to 18 iterations of the loop over %tile): its count is read differently from 101 on}}
  // expected-note@+1 {{or check the kernel at run time with --debug-guards}}
  %done = scf.for %tile = %bid to %tiles step %nb iter_args(%i = %c0) -> (index) {
    %s = arith.remui %i, %c4 : index
    %lap = arith.divui %i, %c4 : index
    %pm = arith.remui %lap, %c2 : index
    %p = arith.cmpi ne, %pm, %c0 : index
    %row = arith.muli %tile, %c64 : index
    copy.async_copy %a[%row, %c0] to %ring[%s] barrier %bars[%s] : memref<?x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
    copy.barrier_wait %bars[%s], %p : !copy.barrier<4>
    %v = memref.load %ring[%s, %c0, %t] : memref<4x64x64xf32, #copy.smem>
    "gpu.barrier"() : () -> ()
    %next = arith.addi %i, %c1 : index
    scf.yield %next : index
  }
  // expected-note@+1 {{here}}
  %big = arith.cmpi ugt, %done, %c100 : index
  scf.if %big {
    copy.async_copy %a[%c0, %c0] to %ring[%c0] barrier %bars[%c0] : memref<?x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
  }
  func.return
}


// -----

// A condition on i * %m == %n: the driver would bind a block-uniform unknown once for the
// whole run, as if every iteration took the same branch.
// rule: P10
func.func @p10_condition_on_an_unknown_in_the_loop(%a: memref<?x64xf32>, %c: memref<?x64xf32>, %n: index, %m: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %cl = arith.constant 0 : index
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %ring = copy.alloc_smem : memref<4x64x64xf32, #copy.smem>
  %out = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>
  // expected-warning@+3 {{cannot prove the copies of this loop for every trip count: 'arith.cmpi' compares a value that grows with the iteration with one the analysis does not know before the run}}
  // expected-note@+2 {{compute ring slots, parities and conditions from the induction variable with arith ops}}
  // expected-note@+1 {{found for %n = 18, %epilogue true}}
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
    %x = arith.muli %i, %m : index
    // expected-note@+1 {{here}}
    %epilogue = arith.cmpi eq, %x, %n : index
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

// A loop to the count %count from a kernel argument: its count is not a function of
// %count alone, so the runs of a few counts do not stand for the others; and its
// induction values are not known. Two warnings (before, the analysis crashed on it).
// rule: P10
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @p10_loop_to_the_count_from_an_argument(%A: memref<?x64xf16>, %off: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %rows = memref.dim %A, %c0 : memref<?x64xf16>
    %count = arith.divui %rows, %c64 : index
    %tile = copy.alloc_smem : memref<64x64xf16, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    scf.for %j = %c0 to %count step %c1 {
      %row = arith.muli %j, %c64 : index
      %p = arith.remui %j, %c2 : index
      %phase = arith.cmpi ne, %p, %c0 : index
      copy.async_copy %A[%row, %c0] to %tile barrier %full[%c0] : memref<?x64xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
      copy.barrier_wait %full[%c0], %phase : !copy.barrier<1>
      gpu.barrier
    }
    // expected-warning@+2 {{cannot prove the copies of this loop beyond the counts tried (up to %count = 6): its start is not a constant or its step is not 1, so a count not tried need not behave like one tried}}
    // expected-note@+1 {{compute what the protocol reads from the count as a function of it mod the ring (no comparison with a constant beyond the counts tried), or check the kernel at run time with --debug-guards}}
    scf.for %j = %off to %count step %c1 {
      %row = arith.muli %j, %c64 : index
      %x = arith.subi %j, %off : index
      %y = arith.addi %x, %count : index
      %p = arith.remui %y, %c2 : index
      %phase = arith.cmpi ne, %p, %c0 : index
      copy.async_copy %A[%row, %c0] to %tile barrier %full[%c0] : memref<?x64xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
      // expected-warning@+3 {{cannot prove this wait on barrier 0 of %full: its parity is not known statically}}
      // expected-note@+2 {{compute the parity from the loop's induction variable ((i / S) mod 2) or carry it through the loop, or check the wait at run time with --debug-guards}}
      // expected-note@+1 {{found for %count = 0, 1 iterations of the loop over %j}}
      copy.barrier_wait %full[%c0], %phase : !copy.barrier<1>
      gpu.barrier
    }
    func.return
  }
}
