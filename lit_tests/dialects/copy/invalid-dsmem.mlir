// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid distributed-shared-memory op per chunk (copy.peer_store, copy.peer_copy,
// copy.peer_arrive), named after the rule it breaks (`// rule:` gives the id in
// copy_dialect/rules.toml). The checks: copy_dialect/dsmem.py.
// `// fix: s|OLD|NEW|` lines give the edit the note describes (or `// fix: none -- why`);
// tests/tools/test_fix_notes.py applies them and checks that the result verifies.

// rule: DS1
// fix: s|%c2 = arith.constant 2 : index|%c2 = arith.constant 1 : index|
func.func @ds1_peer_outside_the_cluster(%v: vector<4xf32>) attributes {copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{peer rank 2 is outside the cluster: expected a rank in [0, 2), the cluster being [2, 1, 1]}}
  // expected-note@+1 {{use a rank below 2}}
  copy.peer_store %v, %buf[%c0, %c0] peer %c2, %bar[%c0] : vector<4xf32>, memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// The same rule where the protocol analysis computes the rank: a leader that releases its
// three peers in a loop one iteration too long (ranks 1 to 4 in a cluster of 4).
// rule: DS1
// fix: s|%c5 = arith.constant 5 : index|%c5 = arith.constant 4 : index|
func.func @ds1_computed_peer_outside_the_cluster() attributes {gpu.known_block_size = array<i32: 32, 1, 1>, copy.cluster = array<i32: 4, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c4 : index
  %leader = arith.cmpi eq, %rank, %c0 : index
  %released = copy.barrier_init arrivals 1 : !copy.barrier<1>
  scf.if %leader {
    scf.for %i = %c1 to %c5 step %c1 {
      // expected-error@+2 {{peer rank 4 is outside the cluster: expected a rank in [0, 4) (CTA 0 computes 4 here)}}
      // expected-note@+1 {{compute a rank below 4 (the peer of rank r is r ^ 1 in a pair, (r + 1) % 4 in a ring), or bound the loop that gives it}}
      copy.peer_arrive %released[%c0] peer %i : !copy.barrier<1>
    }
  } else {
    copy.barrier_wait %released[%c0], %false : !copy.barrier<1>
  }
  func.return
}

// -----

// rule: DS2
// fix: s|attributes {copy.target|attributes {copy.cluster = array<i32: 2, 1, 1>, copy.target|
func.func @ds2_kernel_without_a_cluster(%v: vector<4xf32>, %peer: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{'copy.peer_store' op writes a peer CTA's SMEM: expected a kernel with a cluster of 2 or more CTAs, got the cluster [1, 1, 1]}}
  // expected-note@+1 {{give the kernel copy.cluster = array<i32: 2, 1, 1>}}
  copy.peer_store %v, %buf[%c0, %c0] peer %peer, %bar[%c0] : vector<4xf32>, memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: DS3
// fix: s|sm_80|sm_90a|
func.func @ds3_target_without_clusters(%bar: !copy.barrier<1>, %peer: index) attributes {copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{'copy.peer_arrive' op needs a target with distributed shared memory (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{set copy.target to one of sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a}}
  copy.peer_arrive %bar[%c0] peer %peer : !copy.barrier<1>
  func.return
}

// -----

// rule: DS4
// fix: s|%w: vector<4xf64>|%w: vector<2xf64>|
// fix: s|vector<4xf64>, memref|vector<2xf64>, memref|
func.func @ds4_store_wider_than_16_bytes(%w: vector<4xf64>, %peer: index) attributes {copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf64, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{st.async stores 1, 2 or 4 elements of at most 16 bytes in all, got 4 x f64 (32 bytes)}}
  // expected-note@+1 {{store at most vector<2xf64> per op}}
  copy.peer_store %w, %buf[%c0, %c0] peer %peer, %bar[%c0] : vector<4xf64>, memref<64x64xf64, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: DS5
// fix: s|reduce min|reduce add|
func.func @ds5_red_async_min_on_64_bits(%n: i64, %peer: index) attributes {copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %cnt = copy.alloc_smem : memref<64xi64, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{red.async has no .min on i64: expected one of add: i32, ui32, si32, i64, ui64}}
  // expected-note@+1 {{reduce an integer type the PTX ISA lists for this op (add on ui32, say)}}
  copy.peer_store reduce min %n, %cnt[%c0] peer %peer, %bar[%c0] : i64, memref<64xi64, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: DS6
// fix: s|reduce add %vi, %cnt[%c0] peer %peer, %bar[%c0] : vector<4xi32>|reduce add %n, %cnt[%c0] peer %peer, %bar[%c0] : i32|
func.func @ds6_red_async_of_a_vector(%vi: vector<4xi32>, %n: i32, %peer: index) attributes {copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %cnt = copy.alloc_smem : memref<64xi32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{red.async reduces one element: expected a value of type i32, got vector<4xi32>}}
  // expected-note@+1 {{reduce element by element: pass one i32 per copy.peer_store reduce}}
  copy.peer_store reduce add %vi, %cnt[%c0] peer %peer, %bar[%c0] : vector<4xi32>, memref<64xi32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: DS7
// fix: s|memref<2x12xi8, #copy.smem>|memref<2x16xi8, #copy.smem>|
// fix: s|memref<2x12xi8, #copy.smem> to memref<2x12xi8, #copy.smem>|memref<2x16xi8, #copy.smem> to memref<2x16xi8, #copy.smem>|
func.func @ds7_bulk_copy_of_12_bytes(%peer: index) attributes {copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = copy.alloc_smem : memref<2x12xi8, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{a bulk copy moves a multiple of 16 bytes, got 12 bytes}}
  // expected-note@+1 {{make the slot a multiple of 16 bytes, 16 here}}
  copy.peer_copy %buf[%c0] to %buf[%c1] peer %peer, %bar[%c0] : memref<2x12xi8, #copy.smem> to memref<2x12xi8, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: DS8
// fix: s|%c2 = arith.constant 2 : index|%c2 = arith.constant 4 : index|
func.func @ds8_vector_store_misaligned(%v: vector<4xf32>, %peer: index) attributes {copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{a vector of 4 elements must start at a multiple of 4 in a row whose size is a multiple of 4: got row 64, index 2}}
  // expected-note@+1 {{align the innermost index to 4}}
  copy.peer_store %v, %buf[%c0, %c2] peer %peer, %bar[%c0] : vector<4xf32>, memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: DS9
// fix: s|%x: memref<64x64xf32>|%x: memref<64x64xf32, #copy.smem>|
// fix: s|vector<4xf32>, memref<64x64xf32>|vector<4xf32>, memref<64x64xf32, #copy.smem>|
func.func @ds9_peer_store_into_gmem(%x: memref<64x64xf32>, %v: vector<4xf32>, %peer: index) attributes {copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{'copy.peer_store' op stores into the peer's copy of its ref: expected an SMEM ref, got memref<64x64xf32>}}
  // expected-note@+1 {{pass a buffer of copy.alloc_smem (memory space #copy.smem)}}
  copy.peer_store %v, %x[%c0, %c0] peer %peer, %bar[%c0] : vector<4xf32>, memref<64x64xf32>, !copy.barrier<1>
  func.return
}

// -----

// rule: DS10
// fix: s|%dst = copy.alloc_smem : memref<64x32xf32, #copy.smem>|%dst = copy.alloc_smem : memref<64x64xf32, #copy.smem>|
// fix: s|to memref<64x32xf32, #copy.smem>|to memref<64x64xf32, #copy.smem>|
func.func @ds10_bulk_copy_between_slots_of_two_shapes(%peer: index) attributes {copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %src = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
  %dst = copy.alloc_smem : memref<64x32xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{expected the source and destination slots to have the same shape, element type and swizzle}}
  // expected-note@+1 {{copy between slots of the same type (the source's is 64x64xf32)}}
  copy.peer_copy %src[%c0] to %dst peer %peer, %bar[%c0] : memref<2x64x64xf32, #copy.smem> to memref<64x32xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: TR17
// fix: s|expect_tx 1048576|expect_tx 1024|
func.func @tr17_peer_expect_tx_too_large(%peer: index) attributes {copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{expect_tx must be in [0, 2**20), got 1048576 bytes}}
  // expected-note@+1 {{split the transfer over several phases}}
  copy.peer_arrive %bar[%c0] peer %peer expect_tx 1048576 : !copy.barrier<1>
  func.return
}

// -----

// rule: CL1
// fix: s|copy.cluster_sync arrive wait|copy.cluster_sync|
func.func @cl1_cluster_sync_arrive_and_wait() attributes {copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{expected 'arrive', 'wait' or neither (both halves), got 'arrive wait'}}
  // expected-note@+1 {{drop 'arrive wait': copy.cluster_sync alone is the whole barrier}}
  copy.cluster_sync arrive wait
  func.return
}

// -----

// rule: CL1
// fix: s|copy.cluster_sync wait relaxed|copy.cluster_sync wait|
func.func @cl1_cluster_sync_relaxed_wait() attributes {copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  copy.cluster_sync arrive
  // expected-error@+2 {{'relaxed' qualifies the arrive, but this op only waits: barrier.cluster.wait has no relaxed form}}
  // expected-note@+1 {{drop 'relaxed' (copy.cluster_sync wait)}}
  copy.cluster_sync wait relaxed
  func.return
}

// -----

// rule: CL2
// fix: s|sm_80|sm_90a|
func.func @cl2_cluster_sync_without_clusters() attributes {copy.target = #copy.target<"sm_80">} {
  // expected-error@+2 {{'copy.cluster_sync' op needs a target with clusters (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{set copy.target to one of sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a}}
  copy.cluster_sync
  func.return
}
