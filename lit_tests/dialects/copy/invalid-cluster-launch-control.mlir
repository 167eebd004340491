// RUN: copy-opt %s --split-input-file --verify-diagnostics

// Cluster launch control done wrongly, one mistake per chunk, named after the rule it breaks
// (`// rule:` gives the id in copy_dialect/rules.toml): a target without it (LC1), a
// multicast request where the target has no .multicast::cluster::all (LC2), a response slot
// that is not 16 bytes of unswizzled row-major SMEM (LC3: copy_dialect/cluster_launch_control.py);
// and the response's lifetime as the protocol analysis proves it (analysis/protocol/ops_clc.py):
// a query before the barrier's phase is observed (P1), a new request into a slot that threads
// may still be reading (P3), every CTA of a pair requesting with multicast (P7).
// `// fix: s|OLD|NEW|` lines give the edit the note describes; tests/tools/test_fix_notes.py
// applies them and checks that the result verifies.

// rule: LC1
// fix: s|"sm_90a"|"sm_100a"|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @cl1_try_cancel_on_hopper() {
    %c0 = arith.constant 0 : index
    %resp = copy.alloc_smem : memref<2x16xi8, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    // expected-error@+2 {{'copy.try_cancel' op needs a target with cluster launch control (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_90a}}
    // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a, or launch one CTA per tile instead of a persistent loop}}
    copy.try_cancel %resp[%c0] barrier %bars[%c0] : memref<2x16xi8, #copy.smem>, !copy.barrier<2>
    func.return
  }
}

// -----

// rule: LC1
// fix: s|"sm_90a"|"sm_100a"|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @cl1_query_cancel_on_hopper() {
    %resp = copy.alloc_smem : memref<16xi8, #copy.smem>
    // expected-error@+2 {{'copy.query_cancel' op needs a target with cluster launch control (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_90a}}
    // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a}}
    %ok, %x, %y, %z = copy.query_cancel %resp : memref<16xi8, #copy.smem>
    func.return
  }
}

// -----

// rule: LC2
// fix: s|"sm_120"|"sm_120a"|
builtin.module attributes {copy.target = #copy.target<"sm_120">} {
  func.func @cl2_multicast_on_sm_120() {
    %c0 = arith.constant 0 : index
    %resp = copy.alloc_smem : memref<2x16xi8, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    // expected-error@+2 {{'copy.try_cancel' op with multicast needs a target with clusterlaunchcontrol .multicast::cluster::all (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120a), but the target is sm_120}}
    // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120a, or drop multicast and let each CTA request its own cluster}}
    copy.try_cancel %resp[%c0] barrier %bars[%c0] multicast : memref<2x16xi8, #copy.smem>, !copy.barrier<2>
    func.return
  }
}

// -----

// A slot of 32 bytes.
// rule: LC3
// fix: s|alloc_smem : memref<2x32xi8, #copy.smem>|alloc_smem : memref<2x16xi8, #copy.smem>|
// fix: s|: memref<2x32xi8, #copy.smem>, !copy|: memref<2x16xi8, #copy.smem>, !copy|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @cl3_slot_of_32_bytes() {
    %c0 = arith.constant 0 : index
    %resp = copy.alloc_smem : memref<2x32xi8, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    // expected-error@+2 {{a response slot holds 16 bytes, but memref<2x32xi8, #copy.smem> indexed by 1 index leaves 32}}
    // expected-note@+1 {{allocate the responses as copy.alloc_smem : memref<2x16xi8, #copy.smem> (no swizzle, one 16-byte slot per index) and index one slot}}
    copy.try_cancel %resp[%c0] barrier %bars[%c0] : memref<2x32xi8, #copy.smem>, !copy.barrier<2>
    func.return
  }
}

// -----

// The whole buffer of two responses queried as one.
// rule: LC3
// fix: s|alloc_smem : memref<2x2xi64, #copy.smem>|alloc_smem : memref<16xi8, #copy.smem>|
// fix: s|%resp : memref<2x2xi64, #copy.smem>|%resp : memref<16xi8, #copy.smem>|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @cl3_query_without_slot_index() {
    %c0 = arith.constant 0 : index
    %resp = copy.alloc_smem : memref<2x2xi64, #copy.smem>
    // expected-error@+2 {{a response slot holds 16 bytes, but memref<2x2xi64, #copy.smem> indexed by 0 indices leaves 32}}
    // expected-note@+1 {{(no swizzle, one 16-byte slot per index) and index one slot}}
    %ok, %x, %y, %z = copy.query_cancel %resp : memref<2x2xi64, #copy.smem>
    func.return
  }
}

// -----

// A response in GMEM.
// rule: LC3
// fix: none -- a response is what a copy.try_cancel wrote into the CTA's SMEM: the kernel must allocate the slot and request into it, not read a GMEM argument
func.func @cl3_gmem_response(%resp: memref<16xi8>) attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{the response buffer must be SMEM (#copy.smem), got memref<16xi8>}}
  // expected-note@+1 {{allocate the responses as copy.alloc_smem : memref<16xi8, #copy.smem>}}
  %ok, %x, %y, %z = copy.query_cancel %resp : memref<16xi8>
  func.return
}

// -----

// A swizzled response buffer.
// rule: LC3
// fix: s|alloc_smem : memref<8x16xi8, #copy.smem<swizzle = 128>>|alloc_smem : memref<8x16xi8, #copy.smem>|
// fix: s|%resp[%c0] : memref<8x16xi8, #copy.smem<swizzle = 128>>|%resp[%c0] : memref<8x16xi8, #copy.smem>|
func.func @cl3_swizzled_response() attributes {copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %resp = copy.alloc_smem : memref<8x16xi8, #copy.smem<swizzle = 128>>
  // expected-error@+2 {{the response buffer must not be swizzled, got memref<8x16xi8, #copy.smem<swizzle = 128>>}}
  // expected-note@+1 {{allocate the responses}}
  %ok, %x, %y, %z = copy.query_cancel %resp[%c0] : memref<8x16xi8, #copy.smem<swizzle = 128>>
  func.return
}

// -----

// The response read before the barrier says it has landed.
// rule: P1
// fix: s|  %ok, %x, %y, %z = copy.query_cancel|  copy.barrier_wait %bars[%c0], %false : !copy.barrier<2> %ok, %x, %y, %z = copy.query_cancel|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @p1_query_before_the_wait() attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %resp = copy.alloc_smem : memref<2x16xi8, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    copy.barrier_arrive_expect_tx %bars[%c0], 16 : !copy.barrier<2>
    // expected-note@+1 {{the copy that fills it}}
    copy.try_cancel %resp[%c0] barrier %bars[%c0] : memref<2x16xi8, #copy.smem>, !copy.barrier<2>
    // expected-error@+2 {{'copy.query_cancel' op reads %resp[0] before the copy that fills it completes}}
    // expected-note@+1 {{wait on barrier 0 of %bars for phase 0 (copy.barrier_wait with parity 0) before the read}}
    %ok, %x, %y, %z = copy.query_cancel %resp[%c0] : memref<2x16xi8, #copy.smem>
    copy.barrier_wait %bars[%c0], %false : !copy.barrier<2>
    func.return
  }
}

// -----

// The next request into the one slot while other threads may still be reading the last
// response.
// rule: P3
// fix: s|  copy.barrier_arrive_expect_tx %bar[%zero]|  "gpu.barrier"() : () -> () copy.barrier_arrive_expect_tx %bar[%zero]|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @p3_next_request_while_threads_read() attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %resp = copy.alloc_smem : memref<16xi8, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %bar[%c0], 16 : !copy.barrier<1>
    copy.try_cancel %resp barrier %bar[%c0] : memref<16xi8, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    // expected-note@+1 {{the threads read it here}}
    %ok, %x, %y, %z = copy.query_cancel %resp : memref<16xi8, #copy.smem>
    copy.barrier_arrive_expect_tx %bar[%zero], 16 : !copy.barrier<1>
    // expected-error@+2 {{'copy.try_cancel' op the try_cancel response writes %resp while other threads may still access it (threads read it before, with no block barrier in between)}}
    // expected-note@+1 {{put a block barrier between the threads' accesses and the copy (copy.fence_async_shared after thread writes, gpu.barrier after reads)}}
    copy.try_cancel %resp barrier %bar[%zero] : memref<16xi8, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%zero], %true : !copy.barrier<1>
    %ok2, %x2, %y2, %z2 = copy.query_cancel %resp : memref<16xi8, #copy.smem>
    func.return
  }
}

// -----

// Every CTA of the pair requests with multicast: two responses land in each CTA's slot,
// unordered, and CTA 1's reaches CTA 0 after CTA 0 may have returned (P7, the first the
// analysis meets; with a copy.cluster_sync before the return it is the unordered write, P3).
// rule: P7
// fix: none -- the request belongs to one CTA of the cluster (under a condition on its rank, as @multicast_pair of cluster-launch-control.mlir), an edit of several lines that the note cannot give as one
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @p7_every_cta_multicasts() attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %resp = copy.alloc_smem : memref<1x16xi8, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.cluster_sync
    copy.barrier_arrive_expect_tx %bar[%c0], 16 : !copy.barrier<1>
    // expected-error@+2 {{'copy.try_cancel' op of CTA 1 reaches CTA 0 of the cluster after that CTA returned: its SMEM and barriers are gone (another CTA may own them now)}}
    // expected-note@+1 {{make CTA 0 wait, before its return, for what this op completes there}}
    copy.try_cancel %resp[%c0] barrier %bar[%c0] multicast : memref<1x16xi8, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    %ok, %x, %y, %z = copy.query_cancel %resp[%c0] : memref<1x16xi8, #copy.smem>
    func.return
  }
}
