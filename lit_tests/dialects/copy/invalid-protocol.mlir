// RUN: copy-opt %s --split-input-file --verify-diagnostics

// The copy protocol of whole kernels: one racing, hanging or leaking kernel per chunk, named
// after the rule it breaks (`// rule:` gives the id in copy_dialect/rules.toml) and the
// pattern (straight line, scf.if, rings of 1 to 4 stages, multicast, cp.async groups, TMEM,
// warp-specialized roles: a producer and a storer on a ring of 2, named barriers).
// The error is at the racing op, the op it races with is a note. The checks:
// analysis/protocol/state.py and walk.py.
// `// fix: s|OLD|NEW|` lines give the edit the note describes (or `// fix: none -- why`);
// tests/tools/test_fix_notes.py applies them and checks that the result verifies.

// rule: P1
// fix: s|  copy.async_copy %tile to|  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> copy.async_copy %tile to|
func.func @p1_straight_line_store_before_wait(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{the copy that fills it}}
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  // expected-error@+2 {{the TMA store reads %tile before the copy that fills it completes}}
  // expected-note@+1 {{wait on barrier 0 of %bar for phase 0 (copy.barrier_wait with parity 0) before the read}}
  copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: P1
// fix: s|  copy.commit_group cp_async|  copy.commit_group cp_async copy.wait_group cp_async 0|
func.func @p1_cp_async_group_read_without_wait(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %tile = copy.alloc_smem : memref<32x64xf32, #copy.smem>
  // expected-note@+1 {{the copy that fills it}}
  copy.async_copy %x[%c0, %c0] to %tile impl cp_async : memref<256x256xf32> to memref<32x64xf32, #copy.smem>
  copy.commit_group cp_async
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %row = arith.remui %tid, %c32 : index
  // expected-error@+2 {{threads' load reads %tile[?, 0] before the copy that fills %tile completes}}
  // expected-note@+1 {{commit the copy (copy.commit_group cp_async) and wait for its group (copy.wait_group cp_async 0) before the}}
  %v = memref.load %tile[%row, %c0] : memref<32x64xf32, #copy.smem>
  memref.store %v, %y[%row, %c0] : memref<256x256xf32>
  copy.wait_group cp_async 0
  func.return
}

// -----

// rule: P1
// fix: s|copy.wait_group cp_async 1|copy.wait_group cp_async 0|
func.func @p1_cp_async_wait_group_count_too_high(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ring = copy.alloc_smem : memref<2x32x64xf32, #copy.smem>
  copy.async_copy %x[%c0, %c0] to %ring[%c0] impl cp_async : memref<256x256xf32> to memref<2x32x64xf32, #copy.smem>
  copy.commit_group cp_async
  // expected-note@+1 {{the copy that fills it}}
  copy.async_copy %x[%c0, %c0] to %ring[%c1] impl cp_async : memref<256x256xf32> to memref<2x32x64xf32, #copy.smem>
  copy.commit_group cp_async
  // Leaves the newest group pending: slot 0 is complete, slot 1 is not.
  copy.wait_group cp_async 1
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  // expected-error@+2 {{threads' load reads %ring[1, 0, ?] before the copy that fills %ring[1] completes}}
  // expected-note@+1 {{commit the copy (copy.commit_group cp_async) and wait for its group (copy.wait_group cp_async 0) before the}}
  %v = memref.load %ring[%c1, %c0, %tid] : memref<2x32x64xf32, #copy.smem>
  memref.store %v, %y[%c0, %tid] : memref<256x256xf32>
  copy.wait_group cp_async 0
  func.return
}

// -----

// rule: P1
// fix: s|  %v = memref.load|  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> %v = memref.load|
func.func @p1_scf_if_only_thread_0_waits(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %true = arith.constant true
  %tile = copy.alloc_smem : memref<64x128xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{the copy that fills it}}
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x128xf32, #copy.smem>, !copy.barrier<1>
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %first = arith.cmpi eq, %tid, %c0 : index
  scf.if %first {
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  }
  // expected-error@+2 {{threads' load reads %tile[0, ?] before the copy that fills %tile completes}}
  // expected-note@+1 {{wait on barrier 0 of %bar for phase 0 (copy.barrier_wait with parity 0) before the read}}
  %v = memref.load %tile[%c0, %tid] : memref<64x128xf32, #copy.smem>
  memref.store %v, %y[%c0, %tid] : memref<256x256xf32>
  func.return
}

// -----

// rule: P1
// fix: s|%parity = arith.constant false|%lap = arith.divui %i, %c2 : index %odd = arith.remui %lap, %c2 : index %parity = arith.cmpi ne, %odd, %c0 : index|
func.func @p1_ring_of_2_parity_never_flips(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %ring = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  copy.async_copy %x[%c0, %c0] to %ring[%c0] barrier %bars[%c0] : memref<256x256xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
  copy.async_copy %x[%c0, %c0] to %ring[%c1] barrier %bars[%c1] : memref<256x256xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
  scf.for %i = %c0 to %c6 step %c1 {
    %slot = arith.remui %i, %c2 : index
    %parity = arith.constant false
    // expected-note@+1 {{this wait on parity 0 returns at once: the phase of parity 0 had completed already; the copy arrives on phase}}
    copy.barrier_wait %bars[%slot], %parity : !copy.barrier<2>
    // expected-error@+2 {{the TMA store reads %ring[0] before the copy that fills it completes}}
    // expected-note@+1 {{wait on parity 1: flip the parity every lap of the ring of 2 barriers, (i / 2) mod 2 (arith.divui,}}
    copy.async_copy %ring[%slot] to %y[%c0, %c0] : memref<2x64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0 read_only
    %next = arith.addi %i, %c2 : index
    %more = arith.cmpi ult, %next, %c6 : index
    scf.if %more {
      // expected-note@+1 {{the copy that fills it}}
      copy.async_copy %x[%c0, %c0] to %ring[%slot] barrier %bars[%slot] : memref<256x256xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
    }
  }
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: P1
// fix: s|%lapsize = arith.constant 2 : index|%lapsize = arith.constant 3 : index|
func.func @p1_ring_of_3_parity_of_the_wrong_lap(%x: memref<4096x64xf32>, %y: memref<4096x64xf32>, %count: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %ring = copy.alloc_smem : memref<3x64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<3>
  scf.for %k = %c0 to %c3 step %c1 {
    %go = arith.cmpi ult, %k, %count : index
    scf.if %go {
      // expected-note@+1 {{the copy that fills it}}
      copy.async_copy %x[%c0, %c0] to %ring[%k] barrier %bars[%k] : memref<4096x64xf32> to memref<3x64x64xf32, #copy.smem>, !copy.barrier<3>
    }
  }
  scf.for %i = %c0 to %count step %c1 {
    %slot = arith.remui %i, %c3 : index
    %lapsize = arith.constant 2 : index
    %lap = arith.divui %i, %lapsize : index
    %odd = arith.remui %lap, %c2 : index
    %parity = arith.cmpi ne, %odd, %c0 : index
    // expected-note@+1 {{this wait on parity 1 returns at once: the phase of parity 1 had completed already; the copy arrives on phase}}
    copy.barrier_wait %bars[%slot], %parity : !copy.barrier<3>
    // expected-error@+3 {{the TMA store reads %ring[2] before the copy that fills it completes}}
    // expected-note@+2 {{wait on parity 0: flip the parity every lap of the ring of 3 barriers, (i / 3) mod 2 (arith.divui,}}
    // expected-note@+1 {{found for %count = 3}}
    copy.async_copy %ring[%slot] to %y[%c0, %c0] : memref<3x64x64xf32, #copy.smem> to memref<4096x64xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0 read_only
    %next = arith.addi %i, %c3 : index
    %more = arith.cmpi ult, %next, %count : index
    scf.if %more {
      copy.async_copy %x[%c0, %c0] to %ring[%slot] barrier %bars[%slot] : memref<4096x64xf32> to memref<3x64x64xf32, #copy.smem>, !copy.barrier<3>
    }
  }
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: P1
// fix: s|    copy.async_copy %tile[%rank]|    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> copy.async_copy %tile[%rank]|
func.func @p1_multicast_store_before_wait(%x: memref<128x32x4096xf32>, %y: memref<128x32x4096xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %tile = copy.alloc_smem : memref<2x32x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{the copy that fills it}}
  copy.async_copy %x[%c0, %c0, %c0] to %tile barrier %bar[%c0] {collective = array<i64: 0>} : memref<128x32x4096xf32> to memref<2x32x64xf32, #copy.smem>, !copy.barrier<1>
    // expected-error@+2 {{the TMA store reads %tile[0] before the copy that fills %tile completes}}
    // expected-note@+1 {{wait on barrier 0 of %bar for phase 0 (copy.barrier_wait with parity 0) before the read}}
    copy.async_copy %tile[%rank] to %y[%rank, %c0, %c0] : memref<2x32x64xf32, #copy.smem> to memref<128x32x4096xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: P2
// fix: s|  copy.commit_group bulk|  copy.commit_group bulk copy.wait_group bulk 0 read_only|
func.func @p2_straight_line_refill_while_store_reads(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %false = arith.constant false
  %true = arith.constant true
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-note@+1 {{the TMA store that reads it}}
  copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  // expected-error@+2 {{the TMA load writes %tile while a TMA store from it may still be reading it}}
  // expected-note@+1 {{commit the store and wait until it has read its source (copy.commit_group bulk, then copy.wait_group bulk 0}}
  copy.async_copy %x[%c64, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
  copy.async_copy %tile to %y[%c64, %c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: P2
// fix: s|copy.wait_group bulk 1 read_only|copy.wait_group bulk 0 read_only|
func.func @p2_ring_of_1_refilled_while_its_store_reads(%x: memref<4096x64xf32>, %y: memref<4096x64xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %ring = copy.alloc_smem : memref<1x64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %ring[%c0] barrier %bars[%c0] : memref<4096x64xf32> to memref<1x64x64xf32, #copy.smem>, !copy.barrier<1>
  scf.for %i = %c0 to %c8 step %c1 {
    %odd = arith.remui %i, %c2 : index
    %parity = arith.cmpi ne, %odd, %c0 : index
    copy.barrier_wait %bars[%c0], %parity : !copy.barrier<1>
    // expected-note@+1 {{the TMA store that reads it}}
    copy.async_copy %ring[%c0] to %y[%c0, %c0] : memref<1x64x64xf32, #copy.smem> to memref<4096x64xf32>
    copy.commit_group bulk
    %next = arith.addi %i, %c1 : index
    %more = arith.cmpi ult, %next, %c8 : index
    scf.if %more {
      // The old one-stage ring: waits for all but the newest store, which reads the slot.
      // expected-note@+1 {{this wait_group leaves its group in flight}}
      copy.wait_group bulk 1 read_only
      // expected-error@+2 {{the TMA load writes %ring[0] while a TMA store from it may still be reading it}}
      // expected-note@+1 {{this copy.wait_group bulk 1 leaves the store's group in flight: lower its count (copy.wait_group bulk 0 read_only waits for one more group) so that it covers the group before the write}}
      copy.async_copy %x[%c0, %c0] to %ring[%c0] barrier %bars[%c0] : memref<4096x64xf32> to memref<1x64x64xf32, #copy.smem>, !copy.barrier<1>
    }
  }
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: P2
// fix: s|  copy.commit_group bulk|  copy.commit_group bulk copy.wait_group bulk 0 read_only|
func.func @p2_threads_write_while_store_reads(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %tile = copy.alloc_smem : memref<64x128xf32, #copy.smem>
  // expected-note@+1 {{the TMA store that reads it}}
  copy.async_copy %tile to %y[%c0, %c0] : memref<64x128xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  // expected-error@+2 {{threads' store writes %tile[0, ?] while a TMA store from it may still be reading it}}
  // expected-note@+1 {{commit the store and wait until it has read its source (copy.commit_group bulk, then copy.wait_group bulk 0}}
  memref.store %zero, %tile[%c0, %tid] : memref<64x128xf32, #copy.smem>
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: P3
// fix: s|  copy.async_copy %x[%c64, %c0]|  "gpu.barrier"() : () -> () copy.async_copy %x[%c64, %c0]|
func.func @p3_refill_while_threads_read(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %false = arith.constant false
  %true = arith.constant true
  %tile = copy.alloc_smem : memref<64x128xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x128xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  // expected-note@+1 {{the threads read it here}}
  %v = memref.load %tile[%c0, %tid] : memref<64x128xf32, #copy.smem>
  memref.store %v, %y[%c0, %tid] : memref<256x256xf32>
  // expected-error@+2 {{the TMA load writes %tile while other threads may still access it (threads read it}}
  // expected-note@+1 {{put a block barrier between the threads' accesses and the copy (copy.fence_async_shared after thread writes,}}
  copy.async_copy %x[%c64, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x128xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
  func.return
}

// -----

// rule: P3
// fix: s|  copy.async_copy %x[%c64, %c0]|  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> copy.async_copy %x[%c64, %c0]|
func.func @p3_second_load_into_a_slot_still_filling(%x: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %c64 = arith.constant 64 : index
  %true = arith.constant true
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{the earlier copy}}
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  // expected-error@+2 {{the TMA load writes %tile while an earlier copy may still be writing it}}
  // expected-note@+1 {{wait for the earlier copy first (copy.barrier_wait on its phase, or copy.wait_group for its group)}}
  copy.async_copy %x[%c64, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
  func.return
}

// -----

// rule: P4
// fix: s|  scf.for %i|  copy.fence_async_shared scf.for %i|
func.func @p4_store_in_a_loop_of_unfenced_thread_writes(%y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %tile = copy.alloc_smem : memref<64x128xf32, #copy.smem>
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  // expected-note@+1 {{the threads write it here}}
  memref.store %one, %tile[%c0, %tid] : memref<64x128xf32, #copy.smem>
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error@+2 {{the TMA store reads %tile, which threads wrote with no copy.fence_async_shared since}}
    // expected-note@+1 {{add copy.fence_async_shared after the threads' writes and before the copy (it includes the block barrier)}}
    copy.async_copy %tile to %y[%c0, %c0] : memref<64x128xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0 read_only
  }
  func.return
}

// -----

// rule: P5
// fix: s|  copy.barrier_arrive_expect_tx %bar[%c0], 8192 : !copy.barrier<1>||
// fix: s|  scf.if %use {|  scf.if %use { copy.barrier_arrive_expect_tx %bar[%c0], 16384 : !copy.barrier<1>|
// fix: s|  } else {|  } else { copy.barrier_arrive_expect_tx %bar[%c0], 8192 : !copy.barrier<1>|
func.func @p5_expect_tx_short_of_a_copy_in_a_branch(%x: memref<256x256xf32>, %use: i1) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %half = copy.alloc_smem : memref<32x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // The expect_tx is wrong for one branch: the error is there, the copy that exceeds it a note.
  // expected-error@+3 {{phase 0 of barrier 0 of %bar receives 16384 bytes but expects 8192}}
  // expected-note@+2 {{its waiters are released before all the data has landed: expect 16384 bytes in this copy.barrier_arrive_expect_tx,}}
  // expected-note@+1 {{found for %use true}}
  copy.barrier_arrive_expect_tx %bar[%c0], 8192 : !copy.barrier<1>
  scf.if %use {
    // expected-note@+1 {{this brings the phase to 16384 bytes}}
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] {arrive = false} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  } else {
    copy.async_copy %x[%c0, %c0] to %half barrier %bar[%c0] {arrive = false} : memref<256x256xf32> to memref<32x64xf32, #copy.smem>, !copy.barrier<1>
  }
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// rule: P5
// fix: s|copy.barrier_arrive_expect_tx %bar[%c0], 32768|copy.barrier_arrive_expect_tx %bar[%c0], 16384|
func.func @p5_multicast_expects_more_than_the_box(%x: memref<1024x1024xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %true = arith.constant true
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-note@+1 {{initialized with arrivals 1}}
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // Each CTA of the pair issues half of the box; each receives the whole box: 16384 bytes.
  // The error is at the expect_tx whose count is wrong; the wait that hangs is a note.
  // expected-error@+2 {{phase 0 of barrier 0 of %bar expects 32768 bytes but its copies deliver 16384: it never completes}}
  // expected-note@+1 {{expect 16384 bytes, or issue the copies that deliver the other 16384 before the wait}}
  copy.barrier_arrive_expect_tx %bar[%c0], 32768 : !copy.barrier<1>
  scf.if %true {
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] {arrive = false, collective = array<i64: 0>} : memref<1024x1024xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  }
  // expected-note@+2 {{this wait never returns}}
  // expected-note@+1 {{the block of CTA 1 is blocked here}}
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// rule: P5
// fix: s|  copy.barrier_arrive %bar[%c0] : !copy.barrier<1>|  scf.if %first { copy.barrier_arrive %bar[%c0] : !copy.barrier<1> }|
func.func @p5_every_thread_arrives_on_a_count_of_1(%x: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %first = arith.cmpi eq, %tid, %c0 : index
  // expected-note@+1 {{the barrier is initialized here}}
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{128 arrivals on barrier 0 of %bar, whose phase 0 awaits 1 more of its 1}}
  // expected-note@+1 {{an arrival beyond the count completes the phase early and counts toward the next one: arrive 1 times}}
  copy.barrier_arrive %bar[%c0] : !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// Every thread arrives, then waits on the parity of the phase before (meant to return at
// once): the thread whose arrival completes phase 0 reaches its wait after it, and parity 1
// then names phase 1, which nothing completes.
// rule: P6
// fix: s|  copy.barrier_wait %bar[%c0], %true|  %phase0 = arith.constant false copy.barrier_wait %bar[%c0], %phase0|
func.func @p6_block_arrives_then_waits_on_the_phase_before(%x: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %true = arith.constant true
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 128 : !copy.barrier<1>
  // expected-note@+1 {{the block's arrival here completes phase 0 before the wait: the thread that makes the last one waits for phase 1}}
  copy.barrier_arrive %bar[%c0] : !copy.barrier<1>
  // expected-error@+2 {{this wait on parity 1 can wait for phase 1 of barrier 0 of %bar: the block has observed no phase of it yet, and the wait returns at once only while phase 0 has not completed}}
  // expected-note@+1 {{wait on parity 0 (arith.constant false) for phase 0, which the block's own arrivals complete: every thread then waits for it}}
  copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
  func.return
}

// -----

// rule: P6
// fix: s|copy.barrier_init arrivals 2|copy.barrier_init arrivals 1|
func.func @p6_wait_on_a_phase_short_of_arrivals(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-note@+1 {{initialized with arrivals 2}}
  %bar = copy.barrier_init arrivals 2 : !copy.barrier<1>
  // expected-note@+1 {{an arrival on phase 0}}
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  // expected-error@+2 {{this wait never returns: phase 0 of barrier 0 of %bar has 1 of its 2 arrivals when the}}
  // expected-note@+1 {{arrive on barrier 0 of %bar (1 more) before the wait, or wait on parity 1 (the phase before, complete at once)}}
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: P1
// fix: s|%parity = arith.cmpi eq, %odd, %c0 : index|%parity = arith.cmpi ne, %odd, %c0 : index|
func.func @p1_ring_of_4_waits_on_the_parity_of_the_lap_before(%x: memref<4096x64xf32>, %y: memref<4096x64xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %ring = copy.alloc_smem : memref<4x64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>
  scf.for %k = %c0 to %c4 step %c1 {
    // expected-note@+1 {{the copy that fills it}}
    copy.async_copy %x[%c0, %c0] to %ring[%k] barrier %bars[%k] : memref<4096x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %slot = arith.remui %i, %c4 : index
    %lap = arith.divui %i, %c4 : index
    %odd = arith.remui %lap, %c2 : index
    %parity = arith.cmpi eq, %odd, %c0 : index
    // expected-note@+1 {{this wait on parity 1 returns at once: the phase of parity 1 had completed already; the copy arrives on phase}}
    copy.barrier_wait %bars[%slot], %parity : !copy.barrier<4>
    // expected-error@+2 {{the TMA store reads %ring[0] before the copy that fills it completes}}
    // expected-note@+1 {{wait on parity 0: flip the parity every lap of the ring of 4 barriers, (i / 4) mod 2 (arith.divui,}}
    copy.async_copy %ring[%slot] to %y[%c0, %c0] : memref<4x64x64xf32, #copy.smem> to memref<4096x64xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0 read_only
    %next = arith.addi %i, %c4 : index
    %more = arith.cmpi ult, %next, %c8 : index
    scf.if %more {
      copy.async_copy %x[%c0, %c0] to %ring[%slot] barrier %bars[%slot] : memref<4096x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
    }
  }
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: P6
// fix: s|  %false = arith.constant false|  %false = arith.constant false %true = arith.constant true|
// fix: s|  copy.barrier_wait %bar[%c0], %false|  copy.barrier_wait %bar[%c0], %true|
// fix: s|  copy.barrier_arrive %bar[%c0] count 1|  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> copy.barrier_arrive %bar[%c0] count 1|
func.func @p6_barrier_two_phases_ahead_of_its_wait() attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  // Every thread arrives twice: phases 0 and 1 complete.
  %bar = copy.barrier_init arrivals 128 : !copy.barrier<1>
  copy.barrier_arrive %bar[%c0] : !copy.barrier<1>
  copy.barrier_arrive %bar[%c0] count 1 : !copy.barrier<1>
  // expected-error@+2 {{barrier 0 of %bar may be two phases ahead of this wait: phases 0 and 1 can both}}
  // expected-note@+1 {{a barrier must not run more than one phase ahead of its waiters: add a copy.barrier_wait for phase 0 (parity}}
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// rule: P7
// fix: s|  func.return|  copy.commit_group bulk copy.wait_group bulk 0 func.return|
func.func @p7_store_never_committed(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-note@+1 {{the store}}
  copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  // expected-error@+2 {{the kernel returns with a TMA store that was never committed}}
  // expected-note@+1 {{commit it (copy.commit_group bulk) and wait for it (copy.wait_group bulk 0) before the return}}
  func.return
}

// -----

// rule: P7
// fix: s|  func.return|  copy.wait_group bulk 0 func.return|
func.func @p7_store_committed_never_waited(%y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-note@+1 {{the store}}
  copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  // expected-error@+2 {{the kernel returns while a committed TMA store may still read its SMEM}}
  // expected-note@+1 {{wait for the store's group (copy.wait_group bulk 0) before the return}}
  func.return
}

// -----

// rule: P7
// fix: s|  func.return|  copy.wait_group cp_async 0 func.return|
func.func @p7_cp_async_group_never_waited(%x: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %tile = copy.alloc_smem : memref<32x64xf32, #copy.smem>
  // expected-note@+1 {{the copy}}
  copy.async_copy %x[%c0, %c0] to %tile : memref<256x256xf32> to memref<32x64xf32, #copy.smem>
  copy.commit_group cp_async
  // expected-error@+2 {{the kernel returns while a cp.async copy may still be writing its SMEM}}
  // expected-note@+1 {{copy.wait_group cp_async 0 before the return}}
  func.return
}

// -----

// rule: P7
// fix: s|  func.return|  %false = arith.constant false copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> func.return|
func.func @p7_load_never_waited(%x: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{the load}}
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  // expected-error@+2 {{the kernel returns while a TMA load may still be writing its SMEM}}
  // expected-note@+1 {{copy.barrier_wait on barrier 0 of %bar for phase 0 (parity 0) before the return}}
  func.return
}

// -----

// rule: P8
// fix: s|  func.return|  copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem> func.return|
func.func @p8_tmem_never_freed() attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_100a">} {
  // expected-note@+1 {{the allocation}}
  %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
  // expected-error@+2 {{the kernel returns without freeing its TMEM}}
  // expected-note@+1 {{copy.tmem_dealloc %acc before the return (TMEM stays allocated to the SM otherwise)}}
  func.return
}

// -----

// rule: P9
// fix: s|%slot = arith.addi %i, %c1 : index|%slot = arith.remui %i, %c2 : index|
func.func @p9_ring_index_past_the_group(%x: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %false = arith.constant false
  %ring = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
  // expected-note@+1 {{the group}}
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  scf.for %i = %c0 to %c2 step %c1 {
    %slot = arith.addi %i, %c1 : index
    // expected-error@+2 {{barrier index 2 is out of range: the group holds barriers 0 to 1}}
    // expected-note@+1 {{compute the index modulo 2 (arith.remui: the ring's slot), or make the group larger}}
    copy.async_copy %x[%c0, %c0] to %ring[%i] barrier %bars[%slot] : memref<256x256xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
    copy.barrier_wait %bars[%slot], %false : !copy.barrier<2>
  }
  func.return
}

// -----

// rule: P10
// fix: s|scf.if %first { copy.async_copy|copy.async_copy|
// fix: s|!copy.barrier<1> }|!copy.barrier<1>|
func.func @p10_tma_load_under_a_condition_thread_0_fails(%x: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %first = arith.cmpi eq, %tid, %c5 : index
  // expected-error@+2 {{thread 0, which issues this op for the block, does not reach it: the op sits under a}}
  // expected-note@+1 {{move it out of the scf.if, make the condition block-uniform, or one that holds for thread 0 (gpu.thread_id x}}
  scf.if %first { copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1> }
  %false = arith.constant false
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// rule: P10
// fix: s|scf.if %low { copy.wait_group bulk 0 }|copy.wait_group bulk 0|
func.func @p10_wait_group_under_a_thread_condition(%y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %low = arith.cmpi ult, %tid, %c64 : index
  // expected-error@+2 {{not every thread of the block reaches this op, which ends with a block barrier}}
  // expected-note@+1 {{move it out of the scf.if / scf.for whose condition depends on the thread, or make that condition}}
  scf.if %low { copy.wait_group bulk 0 }
  func.return
}

// -----

// rule: P10
// fix: s|scf.if %half { %v|%v|
// fix: s|copy.tmem_wait load }|copy.tmem_wait load|
func.func @p10_tmem_load_by_part_of_a_warp() attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %lane = arith.remui %tid, %c32 : index
  %half = arith.cmpi ult, %lane, %c16 : index
  // expected-error@+2 {{part of a warp reaches this op, a .sync.aligned op every thread of each warp must execute}}
  // expected-note@+1 {{move it out of the scf.if, or make the condition warp-uniform (on the warp index, thread id / 32)}}
  scf.if %half { %v = copy.tmem_load %acc[%c0] shape shape_32x32b num 4 : memref<128x128xf32, #copy.tmem> -> vector<4xf32> copy.tmem_wait load }
  copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
  func.return
}

// -----

// rule: P11
// fix: s|  copy.tmem_store %v|  copy.tmem_wait load copy.tmem_store %v|
func.func @p11_tmem_load_registers_used_before_the_wait() attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
  // expected-note@+1 {{the load}}
  %v = copy.tmem_load %acc[%c0] shape shape_32x32b num 4 : memref<128x128xf32, #copy.tmem> -> vector<4xf32>
  // expected-error@+2 {{this op uses the registers of a tcgen05.ld before they are loaded}}
  // expected-note@+1 {{wait for the load first: copy.tmem_wait load}}
  copy.tmem_store %v, %acc[%c4] shape shape_32x32b num 4 : vector<4xf32>, memref<128x128xf32, #copy.tmem>
  copy.tmem_wait store
  copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
  func.return
}

// -----

// rule: P12
// fix: s|  %w = copy.tmem_load|  copy.tmem_wait store %w = copy.tmem_load|
func.func @p12_tmem_read_before_the_store_wait(%v: vector<4xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
  // expected-note@+1 {{the store}}
  copy.tmem_store %v, %acc[%c0] shape shape_32x32b num 4 : vector<4xf32>, memref<128x128xf32, #copy.tmem>
  // expected-error@+2 {{this op reads TMEM that a tcgen05.st may still be writing}}
  // expected-note@+1 {{wait for the store first: copy.tmem_wait store}}
  %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 4 : memref<128x128xf32, #copy.tmem> -> vector<4xf32>
  copy.tmem_wait load
  copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
  func.return
}

// -----

// rule: P12
// fix: s|  copy.tmem_dealloc|  copy.tmem_wait store copy.tmem_dealloc|
func.func @p12_tmem_freed_before_the_store_wait(%v: vector<4xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
  // expected-note@+1 {{the store}}
  copy.tmem_store %v, %acc[%c0] shape shape_32x32b num 4 : vector<4xf32>, memref<128x128xf32, #copy.tmem>
  // expected-error@+2 {{this op frees TMEM that a tcgen05.st may still be writing}}
  // expected-note@+1 {{wait for the store first: copy.tmem_wait store}}
  copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
  func.return
}


// -----

// rule: P7
// fix: none -- the mistake is the leader's expect_tx of one CTA's box (8192, not 16384): the leader's phase completes with its own box, the peer's bytes count toward the next phase, and the peer returns before its load is known complete (modelled rank by rank, the cluster finds the early completion at the peer's return)
func.func @p5_leader_tracked_load_expects_one_cta_box(%x: memref<512x512xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %leader = arith.cmpi eq, %rank, %c0 : index
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 128>>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // The leader's barrier counts the boxes of both CTAs of the pair (the peer's own barrier
  // gets none: only the leader expects and waits; the cluster barrier tells the peer).
  scf.if %leader {
    copy.barrier_arrive_expect_tx %bar[%c0], 8192 : !copy.barrier<1>
  }
  // expected-note@+1 {{the load}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] leader_tracked <partitioned 0> {arrive = false, collective = array<i64: 0>} : memref<512x512xf16> to memref<64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
  scf.if %leader {
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  }
  copy.cluster_sync
  // expected-error@+2 {{CTA 1 returns while its leader-tracked load may still be writing its SMEM: the load completes on the leader's barrier 0 of %bar (CTA 0), which this CTA never waits on}}
  // expected-note@+1 {{make the leader tell this CTA that the phase completed}}
  func.return
}

// -----

// rule: P1
// The storer (role 1) stores each slot without waiting until the producer's load filled it.
// fix: s|      copy.async_copy %ring[%s] to|      copy.barrier_wait %full[%s], %lp : !copy.barrier<2> copy.async_copy %ring[%s] to|
func.func @p1_role_reads_a_slot_it_did_not_wait_for(%x: memref<256x64xf32>, %y: memref<256x64xf32>, %count: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ring = copy.alloc_smem : memref<2x32x64xf32, #copy.smem>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
  copy.warp_specialize warps [1, 1] {
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
      // expected-note@+1 {{the copy that fills it}}
      copy.async_copy %x[%c0, %c0] to %ring[%s] barrier %full[%s] : memref<256x64xf32> to memref<2x32x64xf32, #copy.smem>, !copy.barrier<2>
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lm = arith.remui %lap, %c2 : index
      %lp = arith.cmpi ne, %lm, %c0 : index
      // expected-error@+3 {{the TMA store reads %ring[0] before the copy that fills it completes}}
      // expected-note@+2 {{wait on barrier 0 of %full for phase 0 (copy.barrier_wait with parity 0) before the read}}
      // expected-note@+1 {{found for %count = 1}}
      copy.async_copy %ring[%s] to %y[%c0, %c0] : memref<2x32x64xf32, #copy.smem> to memref<256x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
    }
  }
  func.return
}


// -----

// rule: P3
// The producer (role 0) refills slot k % 2 without waiting until the storer released it.
// fix: s|      copy.async_copy %x[%c0, %c0] to %ring[%s]|      %again = arith.cmpi uge, %k, %c2 : index scf.if %again { %prev = arith.subi %lap, %c1 : index %pm = arith.remui %prev, %c2 : index %pp = arith.cmpi ne, %pm, %c0 : index copy.barrier_wait %empty[%s], %pp : !copy.barrier<2> } copy.async_copy %x[%c0, %c0] to %ring[%s]|
func.func @p3_producer_refills_a_slot_it_did_not_wait_for(%x: memref<256x64xf32>, %y: memref<256x64xf32>, %count: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ring = copy.alloc_smem : memref<2x32x64xf32, #copy.smem>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
  copy.warp_specialize warps [1, 1] {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      // expected-error@+4 {{the TMA load writes %ring[0] while an earlier copy may still be writing it}}
      // expected-note@+3 {{the earlier copy}}
      // expected-note@+2 {{wait for the earlier copy first (copy.barrier_wait on its phase, or copy.wait_group for its group); when another}}
      // expected-note@+1 {{found for %count = 3}}
      copy.async_copy %x[%c0, %c0] to %ring[%s] barrier %full[%s] : memref<256x64xf32> to memref<2x32x64xf32, #copy.smem>, !copy.barrier<2>
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lm = arith.remui %lap, %c2 : index
      %lp = arith.cmpi ne, %lm, %c0 : index
      copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
      copy.async_copy %ring[%s] to %y[%c0, %c0] : memref<2x32x64xf32, #copy.smem> to memref<256x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
    }
  }
  func.return
}


// -----

// rule: P5
// Each of the storer's 4 warps arrives on empty[s] (issuer warps): 4 arrivals a phase.
// fix: s|%empty = copy.barrier_init arrivals 1|%empty = copy.barrier_init arrivals 4|
func.func @p5_release_arrivals_per_warp_on_a_count_of_1(%x: memref<256x64xf32>, %y: memref<256x64xf32>, %count: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ring = copy.alloc_smem : memref<2x32x64xf32, #copy.smem>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  // expected-note@+1 {{the barrier is initialized here}}
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
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
      copy.async_copy %x[%c0, %c0] to %ring[%s] barrier %full[%s] : memref<256x64xf32> to memref<2x32x64xf32, #copy.smem>, !copy.barrier<2>
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lm = arith.remui %lap, %c2 : index
      %lp = arith.cmpi ne, %lm, %c0 : index
      copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
      copy.async_copy %ring[%s] to %y[%c0, %c0] : memref<2x32x64xf32, #copy.smem> to memref<256x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
      // expected-error@+3 {{4 arrivals on barrier 0 of %empty, whose phase 0 awaits 1 more of its 1}}
      // expected-note@+2 {{arrive 1 times (issuer warps makes one arrival per warp that reaches it, 4 here; issuer elected makes one per}}
      // expected-note@+1 {{found for %count = 1}}
      copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<2>
    }
  }
  func.return
}


// -----

// rule: P6
// The storer's parity is the lap before's: its first wait returns at once while slot 0 is
// loading, or waits for the slot's second fill once the first has landed.
// fix: s|%lp = arith.cmpi eq, %lm, %c0 : index|%lp = arith.cmpi ne, %lm, %c0 : index|
func.func @p6_consumer_waits_on_the_parity_of_the_lap_before(%x: memref<256x64xf32>, %y: memref<256x64xf32>, %count: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ring = copy.alloc_smem : memref<2x32x64xf32, #copy.smem>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
  copy.warp_specialize warps [1, 1] {
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
      copy.async_copy %x[%c0, %c0] to %ring[%s] barrier %full[%s] : memref<256x64xf32> to memref<2x32x64xf32, #copy.smem>, !copy.barrier<2>
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lm = arith.remui %lap, %c2 : index
      %lp = arith.cmpi eq, %lm, %c0 : index
      // expected-error@+3 {{this wait on parity 1 can wait for phase 1 of barrier 0 of %full: role 1 has observed no phase of it}}
      // expected-note@+2 {{wait on parity 0 for phase 0: flip the parity every lap of the ring of 2 barriers, (i / 2) mod 2}}
      // expected-note@+1 {{found for %count = 1}}
      copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
      copy.async_copy %ring[%s] to %y[%c0, %c0] : memref<2x32x64xf32, #copy.smem> to memref<256x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
    }
  }
  func.return
}

// -----

// rule: P6
// Role 0 signals role 1 once per iteration, and nothing makes it wait for role 1: it can
// complete phases 0 and 1 of %ready before role 1 waits for phase 0.
// fix: s|      copy.barrier_arrive %ready[%c0]|      %later = arith.cmpi uge, %k, %c1 : index scf.if %later { %j = arith.subi %k, %c1 : index %jm = arith.remui %j, %c2 : index %jp = arith.cmpi ne, %jm, %c0 : index copy.barrier_wait %done[%c0], %jp : !copy.barrier<1> } copy.barrier_arrive %ready[%c0]|
func.func @p6_producer_two_phases_ahead(%count: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ready = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.warp_specialize warps [1, 1] {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      // expected-note@+1 {{role 0 arrives on phase 1 here}}
      copy.barrier_arrive %ready[%c0] issuer elected : !copy.barrier<1>
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %m = arith.remui %k, %c2 : index
      %p = arith.cmpi ne, %m, %c0 : index
      // expected-error@+3 {{barrier 0 of %ready may be two phases ahead of this wait: phases 0 and 1 can both complete before it}}
      // expected-note@+2 {{throttle role 0: before it arrives on phase 1 of barrier 0 of %ready, make it wait (copy.barrier_wait) on a barrier}}
      // expected-note@+1 {{found for %count = 2}}
      copy.barrier_wait %ready[%c0], %p : !copy.barrier<1>
      copy.barrier_arrive %done[%c0] issuer elected : !copy.barrier<1>
    }
  }
  func.return
}


// -----

// rule: P6
// Role 0 loads once role 1 says go; role 1 says go once the load has landed.
// fix: s|    copy.barrier_arrive %go[%c0] issuer elected : !copy.barrier<1>||
// fix: s|    copy.barrier_wait %loaded[%c0]|    copy.barrier_arrive %go[%c0] issuer elected : !copy.barrier<1> copy.barrier_wait %loaded[%c0]|
func.func @p6_roles_wait_on_each_other(%x: memref<256x64xf32>, %y: memref<256x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<32x64xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{initialized with arrivals 1}}
  %go = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.warp_specialize warps [1, 1] {
  ^bb0(%t: index):
    // expected-error@+2 {{this wait never returns: phase 0 of barrier 0 of %go has 0 of its 1 arrivals when the wait is reached, and nothing}}
    // expected-note@+1 {{from a role that does not wait for this one first (role 1 waits at copy.barrier_wait on barrier 0 of %loaded (phase 0)):}}
    copy.barrier_wait %go[%c0], %false : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %tile barrier %loaded[%c0] : memref<256x64xf32> to memref<32x64xf32, #copy.smem>, !copy.barrier<1>
  }, {
  ^bb0(%t: index):
    // expected-note@+1 {{role 1 is blocked here, at copy.barrier_wait on barrier 0 of %loaded (phase 0)}}
    copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
    copy.barrier_arrive %go[%c0] issuer elected : !copy.barrier<1>
    copy.async_copy %tile to %y[%c0, %c0] : memref<32x64xf32, #copy.smem> to memref<256x64xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0 read_only
  }
  func.return
}

// -----

// rule: P6
// The producer is a warpgroup (as setmaxnreg needs), and all its warps run the loop: warps
// 1-3 wait on %empty but issue nothing, and nothing keeps them within a phase of warp 0.
// fix: s|    scf.for %k = %c0 to %count step %c1 {|    %warp = arith.divui %t, %c32 : index %first = arith.cmpi eq, %warp, %c0 : index scf.if %first { scf.for %k = %c0 to %count step %c1 {|
// fix: s|memref<2x32x64xf32, #copy.smem>, !copy.barrier<2>|memref<2x32x64xf32, #copy.smem>, !copy.barrier<2> }|
func.func @p6_producer_warps_that_only_wait(%x: memref<256x64xf32>, %y: memref<256x64xf32>, %count: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %ring = copy.alloc_smem : memref<2x32x64xf32, #copy.smem>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
  copy.warp_specialize warps [4, 1] {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %again = arith.cmpi uge, %k, %c2 : index
      scf.if %again {
        %prev = arith.subi %lap, %c1 : index
        %pm = arith.remui %prev, %c2 : index
        %pp = arith.cmpi ne, %pm, %c0 : index
        // expected-error@+3 {{barrier 0 of %empty may be two phases ahead of this wait: phase 1 can complete before the other warps of role 0}}
        // expected-note@+2 {{let only the first warp of role 0 run this loop (scf.if on %t / 32 == 0 around it: the other warps wait for nothing}}
        // expected-note@+1 {{found for %count = 3}}
        copy.barrier_wait %empty[%s], %pp : !copy.barrier<2>
      }
      copy.async_copy %x[%c0, %c0] to %ring[%s] barrier %full[%s] : memref<256x64xf32> to memref<2x32x64xf32, #copy.smem>, !copy.barrier<2>
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lm = arith.remui %lap, %c2 : index
      %lp = arith.cmpi ne, %lm, %c0 : index
      copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
      copy.async_copy %ring[%s] to %y[%c0, %c0] : memref<2x32x64xf32, #copy.smem> to memref<256x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
      // expected-note@+1 {{role 1 arrives on phase 1 here}}
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
    }
  }
  func.return
}

// -----

// rule: P10
// The role's elected thread is the lane of its first warp that elect.sync picks, not %t == 0.
// fix: s|scf.if %first { copy.async_copy|copy.async_copy|
// fix: s|memref<256x64xf32> }|memref<256x64xf32>|
func.func @p10_elected_op_under_a_thread_condition_in_a_role(%x: memref<256x64xf32>, %y: memref<256x64xf32>, %count: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ring = copy.alloc_smem : memref<2x32x64xf32, #copy.smem>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
  copy.warp_specialize warps [1, 1] {
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
      copy.async_copy %x[%c0, %c0] to %ring[%s] barrier %full[%s] : memref<256x64xf32> to memref<2x32x64xf32, #copy.smem>, !copy.barrier<2>
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lm = arith.remui %lap, %c2 : index
      %lp = arith.cmpi ne, %lm, %c0 : index
      copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
      %first = arith.cmpi eq, %t, %c0 : index
      // expected-error@+3 {{the elected thread of role 1 (a lane of its first warp, which elect.sync picks), which issues this op for the role,}}
      // expected-note@+2 {{move it out of the scf.if, or make the condition role-uniform (or warp-uniform and true for the role's first warp,}}
      // expected-note@+1 {{found for %count = 1}}
      scf.if %first { copy.async_copy %ring[%s] to %y[%c0, %c0] : memref<2x32x64xf32, #copy.smem> to memref<256x64xf32> }
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
    }
  }
  func.return
}


// -----

// rule: P7
// fix: s|    copy.commit_group bulk|    copy.commit_group bulk copy.wait_group bulk 0 read_only|
func.func @p7_role_ends_with_its_store_in_flight(%y: memref<256x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %tile = copy.alloc_smem : memref<32x64xf32, #copy.smem>
  // expected-error@+2 {{role 1 ends while a TMA store it committed may still read its SMEM: after the join, the block's wait_group is}}
  // expected-note@+1 {{wait for the store's group in role 1 (copy.wait_group bulk 0 read_only) before the role's end}}
  copy.warp_specialize warps [1, 1] {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
    // expected-note@+1 {{the store}}
    copy.async_copy %tile to %y[%c0, %c0] : memref<32x64xf32, #copy.smem> to memref<256x64xf32>
    copy.commit_group bulk
  }
  // Thread 0 waits for its own bulk groups, not for role 1's.
  copy.wait_group bulk 0
  func.return
}


// -----

// rule: P13
// Roles 1 and 2 (128 threads each) meet at named barrier 4, but count differently.
// fix: s|copy.named_barrier_sync 4, 128|copy.named_barrier_sync 4, 256|
func.func @p13_named_barrier_counts_differ() attributes {gpu.kernel, gpu.known_block_size = array<i32: 288, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  copy.warp_specialize warps [1, 4, 4] {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
    // expected-note@+1 {{256 threads here}}
    copy.named_barrier_sync 4, 256
  }, {
  ^bb0(%t: index):
    // expected-error@+2 {{named barrier 4 counts 128 threads here but 256 where role 1 arrived at the same generation}}
    // expected-note@+1 {{count the threads of all the roles that meet here on every op of this generation: copy.named_barrier_sync 4, 256}}
    copy.named_barrier_sync 4, 128
  }
  func.return
}


// -----

// rule: P13
// fix: s|copy.named_barrier_sync 4, 288|copy.named_barrier_sync 4, 256|
// fix: s|copy.named_barrier_sync 4, 288|copy.named_barrier_sync 4, 256|
func.func @p13_named_barrier_counts_more_threads_than_meet() attributes {gpu.kernel, gpu.known_block_size = array<i32: 288, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  copy.warp_specialize warps [1, 4, 4] {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
    // expected-error@+2 {{this named barrier never completes: generation 0 of named barrier 4 counts 288 threads, and 256 (role 1, role 2)}}
    // expected-note@+1 {{count the 256 threads that meet here (copy.named_barrier_sync 4, 256), or make the missing roles reach named}}
    copy.named_barrier_sync 4, 288
  }, {
  ^bb0(%t: index):
    // expected-note@+1 {{role 2 is blocked here, at copy.named_barrier_sync 4 (generation 0)}}
    copy.named_barrier_sync 4, 288
  }
  func.return
}


// -----

// rule: P13
// Each role means to synchronize its own 128 threads, on the same barrier: their warps can
// meet at one generation.
// fix: s|copy.named_barrier_sync 4, 128|copy.named_barrier_sync 5, 128|
func.func @p13_named_barrier_counts_one_role() attributes {gpu.kernel, gpu.known_block_size = array<i32: 288, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  copy.warp_specialize warps [1, 4, 4] {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
    // expected-note@+1 {{role 1 meets at generation 0 here}}
    copy.named_barrier_sync 4, 128
  }, {
  ^bb0(%t: index):
    // expected-error@+2 {{role 2's arrival at named barrier 4 may count toward its generation 0 (role 1 met there): nothing orders it}}
    // expected-note@+1 {{give role 2 a barrier of its own if it should not meet role 1 (copy.named_barrier_sync 5, 128), or make role 2 wait}}
    copy.named_barrier_sync 4, 128
  }
  func.return
}

// -----

// A bulk (non-tensor) load completes on its barrier as a TMA load does: the bulk store of its
// slot must wait for it.
// rule: P1
// fix: s|  copy.async_copy %tile to|  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> copy.async_copy %tile to|
func.func @p1_bulk_store_before_wait(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<8x256xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{the copy that fills it}}
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] impl bulk oob promise_in_bounds : memref<256x256xf32> to memref<8x256xf32, #copy.smem>, !copy.barrier<1>
  // expected-error@+2 {{the TMA store reads %tile before the copy that fills it completes}}
  // expected-note@+1 {{wait on barrier 0 of %bar for phase 0 (copy.barrier_wait with parity 0) before the read}}
  copy.async_copy %tile to %y[%c0, %c0] impl bulk oob promise_in_bounds : memref<8x256xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}

// -----

// A bulk store reads its SMEM until its bulk group has been waited on: rewriting the slot
// before then races with it.
// rule: P2
// fix: s|  memref.store %v, %tile[%c0, %c0]|  copy.wait_group bulk 0 read_only memref.store %v, %tile[%c0, %c0]|
func.func @p2_bulk_store_slot_rewritten(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %v = arith.constant 1.0 : f32
  %tile = copy.alloc_smem : memref<8x256xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] oob promise_in_bounds : memref<256x256xf32> to memref<8x256xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-note@+1 {{the TMA store that reads it}}
  copy.async_copy %tile to %y[%c0, %c0] oob promise_in_bounds : memref<8x256xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  // expected-error@+2 {{threads' store writes %tile[0, 0] while a TMA store from it may still be reading it}}
  // expected-note@+1 {{commit the store and wait until it has read its source (copy.commit_group bulk, then copy.wait_group bulk 0 read_only, or a count that covers its group) before the write}}
  memref.store %v, %tile[%c0, %c0] : memref<8x256xf32, #copy.smem>
  copy.wait_group bulk 0
  func.return
}

// -----

// Issue I, item 5: a TMA im2col load is followed like a TMA load.
// rule: P1
// fix: s|  copy.async_copy %tile to|  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> copy.async_copy %tile to|
func.func @p1_im2col_tile_stored_before_wait(%x: memref<2x9x9x16xf16>, %y: memref<162x144xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{the copy that fills it}}
  copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%t, %t] to %tile barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  // expected-error@+2 {{the TMA store reads %tile before the copy that fills it completes}}
  // expected-note@+1 {{wait on barrier 0 of %bar for phase 0 (copy.barrier_wait with parity 0) before the read}}
  copy.async_copy %tile to %y[%c0, %c0] : memref<64x16xf16, #copy.smem> to memref<162x144xf16>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: P7
// fix: s|  func.return|  %false = arith.constant false copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> func.return|
func.func @p7_im2col_load_never_waited(%x: memref<2x9x9x16xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %t = arith.constant 0 : i16
  %tile = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{the load}}
  copy.im2col_load %x[%c0, %c0, %c0, %c0] offsets [%t, %t] to %tile barrier %bar[%c0] {lower = array<i64: 0, 0>, upper = array<i64: 0, 0>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  // expected-error@+2 {{the kernel returns while a TMA load may still be writing its SMEM}}
  // expected-note@+1 {{copy.barrier_wait on barrier 0 of %bar for phase 0 (parity 0) before the return}}
  func.return
}

// -----

// A ring of 2 im2col slots whose wait_group lets 2 stores stay unread: the third tap's load
// overwrites the slot the first tap's store may still be reading.
// rule: P2
// fix: s|copy.wait_group bulk 2 read_only|copy.wait_group bulk 1 read_only|
func.func @p2_im2col_ring_reloads_a_slot_its_store_still_reads(%x: memref<2x9x9x16xf16>, %y: memref<162x144xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c9 = arith.constant 9 : index
  %c16 = arith.constant 16 : index
  %m1 = arith.constant -1 : index
  %ring = copy.alloc_smem : memref<2x64x16xf16, #copy.smem>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  scf.for %t = %c0 to %c9 step %c1 {
    %slot = arith.remui %t, %c2 : index
    %lap = arith.divui %t, %c2 : index
    %lap1 = arith.remui %lap, %c2 : index
    %lapi = arith.index_cast %lap1 : index to i32
    %parity = arith.trunci %lapi : i32 to i1
    %r = arith.divui %t, %c3 : index
    %s = arith.remui %t, %c3 : index
    %ri = arith.index_cast %r : index to i16
    %si = arith.index_cast %s : index to i16
    // expected-error@+2 {{the TMA load writes %ring[0] while a TMA store from it may still be reading it}}
    // expected-note@+1 {{this copy.wait_group bulk 2 leaves the store's group in flight: lower its count (copy.wait_group bulk 1 read_only waits for one more group) so that it covers the group before the write}}
    copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%ri, %si] to %ring[%slot] barrier %full[%slot] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>} : memref<2x9x9x16xf16> to memref<2x64x16xf16, #copy.smem>, !copy.barrier<2>
    copy.barrier_wait %full[%slot], %parity : !copy.barrier<2>
    %col = arith.muli %t, %c16 : index
    // expected-note@+1 {{the TMA store that reads it}}
    copy.async_copy %ring[%slot] to %y[%c0, %col] : memref<2x64x16xf16, #copy.smem> to memref<162x144xf16>
    copy.commit_group bulk
    // expected-note@+1 {{this wait_group leaves its group in flight}}
    copy.wait_group bulk 2 read_only
  }
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: P3
// The consumer releases its slot (arrives on empty[s]) before it reads it: the producer's
// next load into the slot may land while the threads still read it.
// fix: s|copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>||
// fix: s|memref.store %v, %y[%k, %t] : memref<256x64xf32>|memref.store %v, %y[%k, %t] : memref<256x64xf32> copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>|
func.func @p3_consumer_releases_its_slot_before_the_read(%x: memref<256x64xf32>, %y: memref<256x64xf32>, %count: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %true = arith.constant true
  %ring = copy.alloc_smem : memref<2x32x64xf32, #copy.smem>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
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
      // expected-note@+1 {{the copy ordered after the release, which may refill it}}
      copy.async_copy %x[%c0, %c0] to %ring[%s] barrier %full[%s] : memref<256x64xf32> to memref<2x32x64xf32, #copy.smem>, !copy.barrier<2>
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lm = arith.remui %lap, %c2 : index
      %lp = arith.cmpi ne, %lm, %c0 : index
      copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
      // expected-error@+3 {{this arrival on barrier 0 of %empty comes before the threads that make it read %ring[0]: a copy ordered after}}
      // expected-note@+2 {{move this copy.barrier_arrive after the threads' last read of %ring[0] (memref.load): release a slot only}}
      // expected-note@+1 {{found for %count = 3}}
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
      // expected-note@+1 {{the threads read %ring[0] here, after the release}}
      %v = memref.load %ring[%s, %c0, %t] : memref<2x32x64xf32, #copy.smem>
      memref.store %v, %y[%k, %t] : memref<256x64xf32>
    }
  }
  func.return
}

// -----

// rule: P5
// The producer expects the bytes of one of the two loads it issues on full[s]: the phase
// completes when the A tile lands, and the B tile's bytes go to the next phase.
// fix: s|copy.barrier_arrive_expect_tx %full[%s], 8192|copy.barrier_arrive_expect_tx %full[%s], 16384|
func.func @p5_expect_tx_short_of_two_loads(%a: memref<256x64xf32>, %b: memref<256x64xf32>, %y: memref<256x64xf32>, %count: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %true = arith.constant true
  %ra = copy.alloc_smem : memref<2x32x64xf32, #copy.smem>
  %rb = copy.alloc_smem : memref<2x32x64xf32, #copy.smem>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
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
      // expected-error@+3 {{phase 0 of barrier 0 of %full expects 8192 bytes, but the copies issued for it deliver 16384: the phase}}
      // expected-note@+2 {{expect 16384 bytes (the sum of the copies' boxes) in this copy.barrier_arrive_expect_tx, or issue the}}
      // expected-note@+1 {{found for %count = 1}}
      copy.barrier_arrive_expect_tx %full[%s], 8192 : !copy.barrier<2>
      // expected-note@+1 {{this copy's bytes complete phase 0}}
      copy.async_copy %a[%c0, %c0] to %ra[%s] barrier %full[%s] {arrive = false} : memref<256x64xf32> to memref<2x32x64xf32, #copy.smem>, !copy.barrier<2>
      // expected-note@+1 {{this copy's 8192 bytes land in phase 1}}
      copy.async_copy %b[%c0, %c0] to %rb[%s] barrier %full[%s] {arrive = false} : memref<256x64xf32> to memref<2x32x64xf32, #copy.smem>, !copy.barrier<2>
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lm = arith.remui %lap, %c2 : index
      %lp = arith.cmpi ne, %lm, %c0 : index
      copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
      %v = memref.load %ra[%s, %c0, %t] : memref<2x32x64xf32, #copy.smem>
      %w = memref.load %rb[%s, %c0, %t] : memref<2x32x64xf32, #copy.smem>
      %u = arith.addf %v, %w : f32
      memref.store %u, %y[%k, %t] : memref<256x64xf32>
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
    }
  }
  func.return
}

// -----

// rule: P6
// The producer acquires a slot with the consumer's parity: its first wait on empty[0] waits
// for a release that comes only after the consumer has read the slot it has yet to fill.
// fix: s|copy.barrier_wait %empty[%s], %lp|%acquire = arith.xori %lp, %true : i1 copy.barrier_wait %empty[%s], %acquire|
func.func @p6_producer_acquires_with_the_consumer_parity(%x: memref<256x64xf32>, %y: memref<256x64xf32>, %count: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %true = arith.constant true
  %ring = copy.alloc_smem : memref<2x32x64xf32, #copy.smem>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  // expected-note@+1 {{initialized with arrivals 1}}
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
  copy.warp_specialize warps [1, 1] {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lm = arith.remui %lap, %c2 : index
      %lp = arith.cmpi ne, %lm, %c0 : index
      // expected-error@+3 {{this wait never returns: phase 0 of barrier 0 of %empty has 0 of its 1 arrivals when the wait is reached, and}}
      // expected-note@+2 {{the loop's first wait on barrier 0 of %empty waits for phase 0, which the other roles complete only after}}
      // expected-note@+1 {{found for %count = 1}}
      copy.barrier_wait %empty[%s], %lp : !copy.barrier<2>
      copy.async_copy %x[%c0, %c0] to %ring[%s] barrier %full[%s] : memref<256x64xf32> to memref<2x32x64xf32, #copy.smem>, !copy.barrier<2>
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %count step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lm = arith.remui %lap, %c2 : index
      %lp = arith.cmpi ne, %lm, %c0 : index
      // expected-note@+1 {{role 1 is blocked here, at copy.barrier_wait on barrier 0 of %full (phase 0)}}
      copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
      %v = memref.load %ring[%s, %c0, %t] : memref<2x32x64xf32, #copy.smem>
      memref.store %v, %y[%k, %t] : memref<256x64xf32>
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
    }
  }
  func.return
}

// -----

// rule: P7
// A double-buffered loop prefetches tile i + 1 while %next <= %n: in the last iteration it
// loads a tile no iteration waits for.
// fix: s|arith.cmpi ule, %next, %n|arith.cmpi ult, %next, %n|
func.func @p7_prefetch_one_past_the_last_iteration(%x: memref<1024x64xf32>, %y: memref<1024x64xf32>, %n: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %ring = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  %any = arith.cmpi ugt, %n, %c0 : index
  scf.if %any {
    copy.async_copy %x[%c0, %c0] to %ring[%c0] barrier %full[%c0] : memref<1024x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
  }
  scf.for %i = %c0 to %n step %c1 {
    %s = arith.remui %i, %c2 : index
    %next = arith.addi %i, %c1 : index
    // expected-note@+1 {{this condition holds in the loop's last iteration}}
    %more = arith.cmpi ule, %next, %n : index
    scf.if %more {
      %ns = arith.remui %next, %c2 : index
      %row = arith.muli %next, %c64 : index
      // expected-error@+3 {{this TMA load, issued in the loop's last iteration, is never waited for: the loop waits on barrier 1 of %full}}
      // expected-note@+2 {{issue it only for an iteration that runs: compare with arith.cmpi ult, not ule, so that the condition is}}
      // expected-note@+1 {{found for %n = 1}}
      copy.async_copy %x[%row, %c0] to %ring[%ns] barrier %full[%ns] : memref<1024x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
    }
    %lap = arith.divui %i, %c2 : index
    %lm = arith.remui %lap, %c2 : index
    %lp = arith.cmpi ne, %lm, %c0 : index
    copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
    %v = memref.load %ring[%s, %c0, %t] : memref<2x64x64xf32, #copy.smem>
    %r = arith.muli %i, %c64 : index
    memref.store %v, %y[%r, %t] : memref<1024x64xf32>
    "gpu.barrier"() : () -> ()
  }
  // expected-note@+1 {{the kernel returns while it may still be writing %ring[1]}}
  func.return
}

// -----

// rule: P6
// A barrier counts 2 arrivals a phase where the TMA load makes the only one: the consumer's
// wait on it never returns, and the producer's acquire of the slot waits on the consumer.
// The hang is reported at the wait whose phase got part of its arrivals (the count is
// wrong), not at the producer's acquire, which waits on the consumer.
// fix: s|arrivals 2 : !copy.barrier<2>|arrivals 1 : !copy.barrier<2>|
func.func @p6_hang_reported_where_the_count_is_short(%x: memref<256x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %true = arith.constant true
  %ring = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
  // expected-note@+1 {{initialized with arrivals 2}}
  %full = copy.barrier_init arrivals 2 : !copy.barrier<2>
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
  copy.warp_specialize warps [1, 1] {
  ^bb0(%t: index):
    scf.for %i = %c0 to %c4 step %c1 {
      %s = arith.remui %i, %c2 : index
      %lap = arith.divui %i, %c2 : index
      %lp = arith.remui %lap, %c2 : index
      %phase = arith.cmpi ne, %lp, %c0 : index
      %acquire = arith.xori %phase, %true : i1
      // expected-note@+1 {{role 0 is blocked here, at copy.barrier_wait on barrier 0 of %empty (phase 0)}}
      copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
      %row = arith.muli %i, %c64 : index
      // expected-note@+1 {{an arrival on phase 0}}
      copy.async_copy %x[%row, %c0] to %ring[%s] barrier %full[%s] : memref<256x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
    }
  }, {
  ^bb0(%t: index):
    scf.for %i = %c0 to %c4 step %c1 {
      %s = arith.remui %i, %c2 : index
      %lap = arith.divui %i, %c2 : index
      %lp = arith.remui %lap, %c2 : index
      %phase = arith.cmpi ne, %lp, %c0 : index
      // expected-error@+2 {{this wait never returns: phase 0 of barrier 0 of %full has 1 of its 2 arrivals when the wait is reached, and nothing else arrives: every other role is blocked or has ended}}
      // expected-note@+1 {{if the arrivals that came (1) are all that a phase of it gets, initialize it with arrivals 1; else arrive on barrier 0 of %full (1 more) from a role that does not wait for this one first (role 0 waits at copy.barrier_wait on barrier 0 of %empty (phase 0))}}
      copy.barrier_wait %full[%s], %phase : !copy.barrier<2>
      %v = memref.load %ring[%s, %t, %c0] : memref<2x64x64xf32, #copy.smem>
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
    }
  }
  func.return
}

// -----

// rule: P6
// A TMA load made `arrive = false` with no arrive_expect_tx: its bytes land on a phase
// nothing arrives on. The hang's notes name the load.
// fix: s| {arrive = false}||
func.func @p6_load_without_its_arrival_arms_nothing(%x: memref<64x64xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-note@+1 {{initialized with arrivals 1}}
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{delivers its bytes to this phase, and nothing arrives for them}}
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] {arrive = false} : memref<64x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  // expected-error@+2 {{this wait never returns: phase 0 of barrier 0 of %bar has 0 of its 1 arrivals when the wait is reached, and nothing arrives while it waits}}
  // expected-note@+1 {{arm the phase with the 16384 bytes its copies deliver before the wait: copy.barrier_arrive_expect_tx on barrier 0 of %bar with 16384 bytes, or let the copy arrive itself (drop its arrive = false)}}
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}
