// RUN: copy-opt %s --split-input-file --verify-diagnostics

// The cluster as a set of CTAs (analysis/protocol/cluster.py, ops_cluster.py): one kernel per
// chunk whose hazard crosses CTAs, named after the rule it breaks (`// rule:` gives the id in
// copy_dialect/rules.toml). `// fix:` lines give the edit the note describes (or
// `// fix: none -- why`); tests/tools/test_fix_notes.py applies them.

// The peer CTA (rank 1) waits on its own barrier, which no byte reaches: both CTAs' boxes
// complete on the leader's.
// rule: P6
// fix: s|%bar = copy.barrier_init|%c2 = arith.constant 2 : index %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index %rank = arith.remui %bx, %c2 : index %leader = arith.cmpi eq, %rank, %c0 : index %bar = copy.barrier_init|
// fix: s|copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>|scf.if %leader { copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> } copy.cluster_sync|
func.func @p6_leader_tracked_peer_waits_on_its_own_barrier(%x: memref<512x512xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 128>>
  // expected-note@+1 {{initialized with arrivals 1}}
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{this CTA's leader-tracked load: its bytes land on the leader's barrier}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<512x512xf16> to memref<64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
  // expected-error@+2 {{this wait never returns: phase 0 of barrier 0 of %bar has 0 of its 1 arrivals when the wait is reached}}
  // expected-note@+1 {{this CTA is the peer of a leader-tracked pair: the pair's bytes land on the leader's barrier 0 of %bar, never on this CTA's, so wait on it in the leader only}}
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// Each CTA arrives on its peer's barrier and returns at once: CTA 0 may be gone when CTA 1's
// arrival reaches it.
// rule: P7
// fix: s|  func.return|  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> func.return|
func.func @p7_returns_while_a_peer_may_still_arrive(%w: f32) attributes {gpu.known_block_size = array<i32: 32, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{of CTA 1 reaches CTA 0 of the cluster after that CTA returned}}
  // expected-note@+1 {{make CTA 0 wait, before its return, for what this op completes there}}
  copy.peer_arrive %bar[%c0] peer %peer : !copy.barrier<1>
  func.return
}

// -----

// Only the leader CTA reaches the cluster barrier.
// rule: P6
// fix: none -- the fix moves copy.cluster_sync out of the scf.if (an edit of three lines)
func.func @p6_cluster_sync_in_one_cta(%w: f32) attributes {gpu.known_block_size = array<i32: 32, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %lead = arith.cmpi eq, %rank, %c0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  scf.if %lead {
    // expected-error@+2 {{this wait on the cluster barrier never returns: generation 1 has 32 of the 64 threads of the cluster's CTAs arriving}}
    // expected-note@+1 {{make every thread of every CTA arrive}}
    copy.cluster_sync
  }
  func.return
}
