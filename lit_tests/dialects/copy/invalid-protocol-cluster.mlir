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

// -----

// A DSMEM ring of 4 (tests/corpus/dsmem_allreduce_ring.mlir reduced) without its wait on
// %empty: slot 0 is written again at step 2, while the next CTA may still read what step 0
// put there; its release (the peer_arrive at step 1) is never waited on.
// rule: P3
// fix: s|    copy.peer_store|    %acquire = arith.xori %phase, %true : i1 copy.barrier_wait %empty[%slot], %acquire : !copy.barrier<2> copy.peer_store|
func.func @p3_ring_store_into_a_slot_the_next_cta_still_reads(%w: f32) attributes {gpu.known_block_size = array<i32: 32, 1, 1>, copy.cluster = array<i32: 4, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %true = arith.constant true
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c4 : index
  %r1 = arith.addi %rank, %c1 : index
  %next = arith.remui %r1, %c4 : index
  %r3 = arith.addi %rank, %c3 : index
  %prev = arith.remui %r3, %c4 : index
  %recv = copy.alloc_smem : memref<2x32xf32, #copy.smem>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
  scf.for %s = %c0 to %c3 step %c1 {
    %slot = arith.remui %s, %c2 : index
    %lap = arith.divui %s, %c2 : index
    %lp = arith.remui %lap, %c2 : index
    %phase = arith.cmpi ne, %lp, %c0 : index
    // expected-error@+2 {{CTA 1's st.async writes %recv[0] while threads of the block of CTA 2 may still read it (nothing orders this copy after their read)}}
    // expected-note@+1 {{the sender must wait (copy.barrier_wait before the copy) on a barrier this CTA arrives on after its last use of %recv[0]}}
    copy.peer_store %w, %recv[%slot, %t] peer %next, %full[%slot] : f32, memref<2x32xf32, #copy.smem>, !copy.barrier<2>
    %ack = arith.cmpi eq, %s, %c1 : index
    scf.if %ack {
      "gpu.barrier"() : () -> ()
      copy.peer_arrive %empty[%c0] peer %prev : !copy.barrier<2>
    }
    copy.barrier_arrive_expect_tx %full[%slot], 128 : !copy.barrier<2>
    copy.barrier_wait %full[%slot], %phase : !copy.barrier<2>
    // expected-note@+1 {{the threads read it here}}
    %r = memref.load %recv[%slot, %t] : memref<2x32xf32, #copy.smem>
  }
  func.return
}

// -----

// A multicast ring of one slot (tests/corpus/gemm_multicast_cluster2.mlir reduced) whose
// %empty counts only the local release: the peer's multicast refills this CTA's slot while
// this CTA may still be reading it (or receiving its own earlier load).
// rule: P3
// fix: s|%empty = copy.barrier_init arrivals 1|%bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index %rank = arith.remui %bx, %c2 : index %peer = arith.xori %rank, %c1 : index %empty = copy.barrier_init arrivals 2|
// fix: s|copy.barrier_arrive %empty[%c0] issuer elected : !copy.barrier<1>|copy.barrier_arrive %empty[%c0] issuer elected : !copy.barrier<1> copy.peer_arrive %empty[%c0] peer %peer : !copy.barrier<1>|
func.func @p3_multicast_into_a_slot_the_peer_has_not_released(%A: memref<512x512xf16>) attributes {gpu.known_block_size = array<i32: 64, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %true = arith.constant true
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 128>>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %empty = copy.barrier_init arrivals 1 : !copy.barrier<1>
  scf.for %k = %c0 to %c2 step %c1 {
    %phase = arith.cmpi ne, %k, %c0 : index
    %acquire = arith.xori %phase, %true : i1
    copy.barrier_wait %empty[%c0], %acquire : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %full[%c0], 8192 : !copy.barrier<1>
    %k0 = arith.muli %k, %c64 : index
    // expected-error@+3 {{CTA 0's multicast load writes %buf while an earlier copy may still be writing it}}
    // expected-note@+2 {{the earlier copy}}
    // expected-note@+1 {{where this CTA releases it only locally, arrive in the sender too (copy.peer_arrive ... peer <its rank>, beside the local copy.barrier_arrive) and count one release per CTA in that barrier's arrivals}}
    copy.async_copy %A[%c0, %k0] to %buf barrier %full[%c0] {arrive = false, collective = array<i64: 0>} : memref<512x512xf16> to memref<64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %phase : !copy.barrier<1>
    %v = memref.load %buf[%t, %c0] : memref<64x64xf16, #copy.smem<swizzle = 128>>
    "gpu.barrier"() : () -> ()
    copy.barrier_arrive %empty[%c0] issuer elected : !copy.barrier<1>
  }
  copy.barrier_wait %empty[%c0], %true : !copy.barrier<1>
  func.return
}
