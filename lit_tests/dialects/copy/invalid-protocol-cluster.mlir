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
    // expected-error@+3 {{CTA 0's multicast load into CTA 1 writes %buf while an earlier copy may still be writing it}}
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

// -----

// CTA 0 multicasts the tile to CTA 1 only, but arrives on its own barrier expecting it.
// rule: P5
// fix: s|%both = arith.constant 2 : i16|%both = arith.constant 3 : i16|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @p5_multicast_gather4_issuer_outside_its_mask(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %both = arith.constant 2 : i16
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    scf.if %leader {
      // expected-error@+2 {{CTA 0 arrives on its barrier 0 of %bar expecting the tile's 512 bytes, but its multicast mask names CTA 1, not CTA 0: no byte reaches that barrier and the phase never completes}}
      // expected-note@+1 {{add bit 0 to the mask (3: CTA 0 receives the tile too), or give the gather4 arrive = false and let each receiving CTA arm its own barrier with copy.barrier_arrive_expect_tx}}
      copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] multicast %both : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    } else {
      copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    }
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// The mask comes from the kernel's caller: which CTAs the tile reaches is not known.
// rule: P5
// fix: none -- the edit replaces the caller's %mask by a value the kernel computes (%both), which the note cannot name
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @p5_multicast_gather4_mask_from_an_argument(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index, %mask: i16) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %both = arith.constant 3 : i16
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    scf.if %leader {
      // expected-error@+2 {{this copy.gather4 multicasts its tile with a mask the analysis cannot compute: the CTAs whose SMEM it writes, and the barriers it completes, are not known}}
      // expected-note@+1 {{give the mask as a constant or a value of the CTA's rank in the cluster (bit r: CTA r)}}
      copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] multicast %mask : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    } else {
      copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    }
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// CTA 1 receives the tile but never arms its barrier: its wait never returns.
// rule: P6
// fix: s|multicast %both : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>|multicast %both : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1> } else { copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @p6_multicast_gather4_receiver_never_arms_its_barrier(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %both = arith.constant 3 : i16
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    // expected-note@+1 {{initialized with arrivals 1}}
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    scf.if %leader {
      // expected-note@+1 {{delivers its bytes to this phase, and nothing arrives for them}}
      copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] multicast %both : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    }
    // expected-error@+2 {{this wait never returns: phase 0 of barrier 0 of %bar has 0 of its 1 arrivals when the wait is reached}}
    // expected-note@+1 {{arm the phase with the 512 bytes its copies deliver before the wait: copy.barrier_arrive_expect_tx on barrier 0 of %bar with 512 bytes}}
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// CTA 1 stores its copy of the tile without waiting for it to land.
// rule: P1
// fix: s|      copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>|      copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1> copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @p1_multicast_gather4_receiver_reads_before_its_wait(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %both = arith.constant 3 : i16
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    scf.if %leader {
      // expected-note@+1 {{the copy that fills it}}
      copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] multicast %both : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    } else {
      copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    }
    // expected-error@+2 {{the TMA store reads %tile before the copy that fills it completes}}
    // expected-note@+1 {{wait on barrier 0 of %bar for phase 0 (copy.barrier_wait with parity 0) before the read}}
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// CTA 1 arms its barrier and returns: CTA 0's multicast may land after it is gone.
// rule: P7
// fix: s|      copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>|      copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1> copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @p7_multicast_gather4_receiver_returns_before_the_tile_lands(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %both = arith.constant 3 : i16
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    scf.if %leader {
      // expected-note@+1 {{the load}}
      copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] multicast %both : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
      copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
      copy.commit_group bulk
      copy.wait_group bulk 0
    } else {
      copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    }
    // expected-error@+2 {{the kernel returns while CTA 0's multicast gather4 into CTA 1 may still be writing its SMEM}}
    // expected-note@+1 {{copy.barrier_wait on barrier 0 of %bar for phase 0 (parity 0) before the return}}
    func.return
  }
}

// -----

// A multicast ring whose consumers read the slot with thread loads and release it to the
// peer with a relaxed arrival: it orders no thread's read, so the peer's next multicast
// may land while CTA 1's threads still read.
// rule: P3
// fix: s| peer %peer relaxed :| peer %peer :|
func.func @p3_relaxed_release_of_a_slot_threads_read(%x: memref<256x64xf16>, %y: memref<256xf16>) attributes {gpu.known_block_size = array<i32: 64, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %true = arith.constant true
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 128>>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %empty = copy.barrier_init arrivals 2 : !copy.barrier<1>
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  scf.for %i = %c0 to %c4 step %c1 {
    %ip = arith.remui %i, %c2 : index
    %phase = arith.cmpi ne, %ip, %c0 : index
    %acquire = arith.xori %phase, %true : i1
    copy.barrier_wait %empty[%c0], %acquire : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %full[%c0], 8192 : !copy.barrier<1>
    %row = arith.muli %i, %c64 : index
    // expected-error@+2 {{CTA 0's multicast load into CTA 1 writes %buf while threads of the block of CTA 1 may still read it (nothing orders this copy after their read)}}
    // expected-note@+1 {{the copy.peer_arrive that releases %buf to the sender is relaxed: it orders what had completed before it (the copies its threads waited for, tensor-core reads a wgmma wait retired), not the threads' own reads: drop relaxed from it, or read the slot with the tensor core}}
    copy.async_copy %x[%row, %c0] to %buf barrier %full[%c0] {arrive = false, collective = array<i64: 0>} : memref<256x64xf16> to memref<64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %phase : !copy.barrier<1>
    // expected-note@+1 {{the threads read it here}}
    %v = memref.load %buf[%t, %c0] : memref<64x64xf16, #copy.smem<swizzle = 128>>
    %out = arith.addi %row, %t : index
    memref.store %v, %y[%out] : memref<256xf16>
    gpu.barrier
    copy.barrier_arrive %empty[%c0] issuer elected : !copy.barrier<1>
    copy.peer_arrive %empty[%c0] peer %peer relaxed : !copy.barrier<1>
  }
  // The last phase of %empty (3, parity 1): the peer's last release has arrived.
  copy.barrier_wait %empty[%c0], %true : !copy.barrier<1>
  func.return
}

// -----

// The peer of a gather4 pair waits on its own barrier, which no byte reaches.
// rule: P6
// fix: none -- the edit is the peer's wait moved to %done, the barrier the leader's copy.peer_arrive completes, which the note names by its role, not its name
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @p6_gather4_pair_peer_waits_on_its_own_barrier(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    // expected-note@+1 {{initialized with arrivals 1}}
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    // Each CTA gathers its own rows (the peer's shifted by one), both complete on the leader's barrier.
    %s0 = arith.addi %r0, %rank : index
    // expected-note@+1 {{this CTA's leader-tracked load: its bytes land on the leader's barrier}}
    copy.gather4 %x rows [%s0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] leader_tracked : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    scf.if %leader {
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
      copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    } else {
      // expected-error@+2 {{this wait never returns: phase 0 of barrier 0 of %bar has 0 of its 1 arrivals when the wait is reached}}
      // expected-note@+1 {{this CTA is the peer of a leader-tracked pair: the pair's bytes land on the leader's barrier 0 of %bar, never on this CTA's, so wait on it in the leader only}}
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    }
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// The peer of a gather4 pair stores its tile with no word from the leader that it landed.
// rule: P1
// fix: none -- the handshake the note describes (the leader's copy.peer_arrive after its wait, the peer's wait on it) is an edit of three lines
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @p1_gather4_pair_peer_reads_before_the_leader_saw_it_land(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    // Each CTA gathers its own rows (the peer's shifted by one), both complete on the leader's barrier.
    %s0 = arith.addi %r0, %rank : index
    // expected-note@+1 {{the copy that fills it}}
    copy.gather4 %x rows [%s0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] leader_tracked : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    scf.if %leader {
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    }
    // expected-error@+2 {{the TMA store reads %tile before the copy that fills it completes}}
    // expected-note@+1 {{the copy completes on the pair leader's barrier 0 of %bar, which no wait in this CTA observes: let the leader tell this CTA after its wait (a copy.peer_arrive on a barrier this CTA waits on before the read, or copy.cluster_sync in both CTAs after the leader's wait)}}
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// A cluster of 16 (4x4): the consumers release each slot in their own CTA and in two of
// their three x peers, whose multicasts write it; the empty barrier counts 4, and the
// fourth release (from x peer rank ^ 3) never comes. The fix note names the CTA whose
// release is missing (CTA 3, for CTA 0's barrier), the arrival notes who made the others,
// and the CTAs blocked at one op are one note.
// rule: P6
// fix: s|copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>|copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2> copy.peer_arrive %empty[%s] peer %x_peer3 : !copy.barrier<2>|
func.func @p6_one_x_peer_never_releases_in_a_cluster_of_16(%A: memref<1024x512xf16>) attributes {gpu.known_block_size = array<i32: 256, 1, 1>, copy.cluster = array<i32: 4, 4, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %true = arith.constant true
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
  %bz = "gpu.block_id"() <{dimension = #gpu<dim z>}> : () -> index
  %rx = arith.remui %bx, %c4 : index
  %ry = arith.remui %by, %c4 : index
  %ry4 = arith.muli %ry, %c4 : index
  %rank = arith.addi %rx, %ry4 : index
  %x_peer1 = arith.xori %rank, %c1 : index
  %x_peer2 = arith.xori %rank, %c2 : index
  %x_peer3 = arith.xori %rank, %c3 : index
  %m0 = arith.muli %by, %c128 : index
  %smem = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  // expected-note@+1 {{initialized with arrivals 4}}
  %empty = copy.barrier_init arrivals 4 : !copy.barrier<2>
  copy.warp_specialize warps [4, 4] {
  ^bb0(%t: index):
    %warp = arith.divui %t, %c32 : index
    %is_dma = arith.cmpi eq, %warp, %c0 : index
    scf.if %is_dma {
      scf.for %k = %c0 to %c8 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        // expected-error@+3 {{this wait never returns: phase 0 of barrier 0 of %empty has 3 of its 4 arrivals when the wait is reached, and nothing else arrives}}
        // expected-note@+2 {{role 0 of CTAs 1-15 is blocked here, at copy.barrier_wait on barrier 0 of %empty (phase 0)}}
        // expected-note@+1 {{CTA 0's multicast loads write the slots of CTAs 0-3, and this phase's releases came from CTAs 0-2 only: add a release from CTA 3 (a copy.peer_arrive on barrier 0 of %empty whose peer is CTA 0, as CTAs 1 and 2 do)}}
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
        copy.barrier_arrive_expect_tx %full[%s], 16384 : !copy.barrier<2>
        %k0 = arith.muli %k, %c64 : index
        copy.async_copy %A[%m0, %k0] to %smem[%s] barrier %full[%s] {arrive = false, collective = array<i64: 0>} : memref<1024x512xf16> to memref<2x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
      }
      // load_tail: every peer has released every slot before this CTA returns
      scf.for %k = %c8 to %c10 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
      }
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %c8 step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lp = arith.remui %lap, %c2 : index
      %phase = arith.cmpi ne, %lp, %c0 : index
      // expected-note@+1 {{role 1 of CTAs 0-15 is blocked here, at copy.barrier_wait on barrier 0 of %full (phase 1)}}
      copy.barrier_wait %full[%s], %phase : !copy.barrier<2>
      %v = memref.load %smem[%s, %t, %c0] : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
      copy.named_barrier_sync 3, 128
      // expected-note@+1 {{an arrival on phase 0, by role 1 of CTA 0}}
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
      // expected-note@+1 {{an arrival on phase 0, by role 1 of CTA 1}}
      copy.peer_arrive %empty[%s] peer %x_peer1 : !copy.barrier<2>
      // expected-note@+1 {{an arrival on phase 0, by role 1 of CTA 2}}
      copy.peer_arrive %empty[%s] peer %x_peer2 : !copy.barrier<2>
    }
  }
  func.return
}

// -----

// A 2x2x2 cluster whose rank leaves out gpu.block_id z (x + 2y): the CTAs of z = 1 take
// the ranks of z = 0, so CTA 4 releases its slot in itself twice (its "z peer" rank ^ 4 is
// 4) and never in CTA 0, whose multicast writes it; CTA 4's multicast then refills CTA 0's
// slot before CTA 0's consumers have released it.
// rule: P3
// fix: none -- the edit is the rank's (add 4 * (gpu.block_id z mod 2)); the message names the CTAs, 4 into 0, whose release is missing, not how the rank was computed
func.func @p3_rank_without_z_in_a_2x2x2_cluster(%A: memref<1024x512xf16>) attributes {gpu.known_block_size = array<i32: 256, 1, 1>, copy.cluster = array<i32: 2, 2, 2>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %true = arith.constant true
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
  %bz = "gpu.block_id"() <{dimension = #gpu<dim z>}> : () -> index
  %rx = arith.remui %bx, %c2 : index
  %ry = arith.remui %by, %c2 : index
  %rz = arith.remui %bz, %c2 : index
  %ry2 = arith.muli %ry, %c2 : index
  %rz4 = arith.muli %rz, %c4 : index
  %rxy = arith.addi %rx, %ry2 : index
  %rank = arith.addi %rx, %ry2 : index
  %z_peer = arith.xori %rank, %c4 : index
  %y_peer = arith.xori %rank, %c2 : index
  %m0 = arith.muli %by, %c128 : index
  %smem = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  %empty = copy.barrier_init arrivals 2 : !copy.barrier<2>
  copy.warp_specialize warps [4, 4] {
  ^bb0(%t: index):
    %warp = arith.divui %t, %c32 : index
    %is_dma = arith.cmpi eq, %warp, %c0 : index
    scf.if %is_dma {
      scf.for %k = %c0 to %c8 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
        copy.barrier_arrive_expect_tx %full[%s], 16384 : !copy.barrier<2>
        %k0 = arith.muli %k, %c64 : index
        // expected-error@+3 {{CTA 4's multicast load into CTA 0 writes %smem[0] while an earlier copy may still be writing it}}
        // expected-note@+2 {{the earlier copy}}
        // expected-note@+1 {{CTA 4's multicast load into CTA 0 is held back only by what its sending CTA waits on}}
        copy.async_copy %A[%m0, %k0] to %smem[%s] barrier %full[%s] {arrive = false, collective = array<i64: 2>} : memref<1024x512xf16> to memref<2x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
      }
      // load_tail: every peer has released every slot before this CTA returns
      scf.for %k = %c8 to %c10 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
      }
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %c8 step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lp = arith.remui %lap, %c2 : index
      %phase = arith.cmpi ne, %lp, %c0 : index
      copy.barrier_wait %full[%s], %phase : !copy.barrier<2>
      %v = memref.load %smem[%s, %t, %c0] : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
      copy.named_barrier_sync 3, 128
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
      copy.peer_arrive %empty[%s] peer %z_peer : !copy.barrier<2>
    }
  }
  func.return
}
