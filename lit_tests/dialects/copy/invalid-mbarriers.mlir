// RUN: copy-opt %s --split-input-file --verify-diagnostics

// The mbarrier-breadth ops (nocomplete arrivals, arrive_drop, expect_tx, complete_tx, inval,
// reinit): one invalid op per chunk (copy_dialect/barriers.py, mbarriers.py), then kernels
// whose protocol breaks their rules (analysis/protocol/state.py and walk.py). Each chunk
// is named after the rule it breaks (`// rule:` gives the id in copy_dialect/rules.toml).
// `// fix: s|OLD|NEW|` lines give the edit the note describes; tests/tools/test_fix_notes.py
// applies them and checks that the result verifies.

// rule: MB1
// fix: s|count 1048576|count 1048575|
func.func @mb1_arrive_count_too_large() attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 4 : !copy.barrier<1>
  // expected-error@+2 {{barrier_arrive count must be below 2**20, got 1048576}}
  // expected-note@+1 {{arrive at most 1048575 at a time}}
  copy.barrier_arrive %bar[%c0] count 1048576 : !copy.barrier<1>
  func.return
}

// -----

// rule: MB1
// fix: s|copy.barrier_arrive_drop %bar[%c0] count 0|copy.barrier_arrive_drop %bar[%c0]|
func.func @mb1_arrive_drop_count_zero() attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 4 : !copy.barrier<1>
  // expected-error@+2 {{barrier_arrive_drop count must be at least 1, got 0}}
  // expected-note@+1 {{drop count to arrive and drop once}}
  copy.barrier_arrive_drop %bar[%c0] count 0 : !copy.barrier<1>
  func.return
}

// -----

// rule: MB2
// fix: s|count 4 nocomplete|count 3 nocomplete|
func.func @mb2_nocomplete_count_completes() attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 4 : !copy.barrier<1>
  // expected-error@+2 {{a nocomplete arrival must leave the phase one arrival to go: expected a count below the barrier's 4 arrivals, got 4}}
  // expected-note@+1 {{use count 3 or less, or drop nocomplete}}
  copy.barrier_arrive %bar[%c0] count 4 nocomplete issuer elected : !copy.barrier<1>
  func.return
}

// -----

// rule: MB2
// fix: s| nocomplete issuer| issuer|
func.func @mb2_nocomplete_on_one_arrival() attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{expected a count below the barrier's 1 arrivals, got 1}}
  // expected-note@+1 {{drop nocomplete (a barrier of 1 arrival completes at any arrival)}}
  copy.barrier_arrive_drop %bar[%c0] nocomplete issuer elected : !copy.barrier<1>
  func.return
}

// -----

// rule: MB3
// fix: s|count 2 issuer|count 2 nocomplete issuer|
func.func @mb3_arrive_drop_count_before_sm90() attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 4 : !copy.barrier<1>
  // expected-error@+2 {{'copy.barrier_arrive_drop' op with count 2 needs a target with mbarrier arrival counts (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{add nocomplete (if this arrival must not complete the phase), or target sm_90+}}
  copy.barrier_arrive_drop %bar[%c0] count 2 issuer elected : !copy.barrier<1>
  func.return
}

// -----

// rule: MB4
// fix: s|"sm_80"|"sm_90a"|
func.func @mb4_expect_tx_before_sm90() attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{'copy.barrier_expect_tx' op needs a target with mbarrier transaction counts (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{sm_80 has no transaction counts}}
  copy.barrier_expect_tx %bar[%c0], 4096 : !copy.barrier<1>
  func.return
}

// -----

// rule: MB4
// fix: s|"sm_80"|"sm_90a"|
func.func @mb4_complete_tx_before_sm90() attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{'copy.barrier_complete_tx' op needs a target with mbarrier transaction counts (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{or target sm_90+}}
  copy.barrier_complete_tx %bar[%c0], 4 : !copy.barrier<1>
  func.return
}

// -----

// rule: MB4
// fix: s|"sm_80"|"sm_90a"|
func.func @mb4_arrive_drop_expect_tx_before_sm90() attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{'copy.barrier_arrive_drop' op with expect_tx needs a target with mbarrier transaction counts (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{sm_80 has no transaction counts: arrive with copy.barrier_arrive once the data is written}}
  copy.barrier_arrive_drop %bar[%c0] expect_tx 4096 : !copy.barrier<1>
  func.return
}

// -----

// rule: MB5
// fix: s|1048576|1048575|
func.func @mb5_expect_tx_too_large() attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{barrier_expect_tx must be in [0, 2**20) bytes, got 1048576}}
  // expected-note@+1 {{use at most 1048575 bytes}}
  copy.barrier_expect_tx %bar[%c0], 1048576 : !copy.barrier<1>
  func.return
}

// -----

// rule: MB5
// fix: s|-4|4|
func.func @mb5_complete_tx_negative() attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{barrier_complete_tx must be in [0, 2**20) bytes, got -4}}
  // expected-note@+1 {{the mbarrier tx-count has 20 bits}}
  copy.barrier_complete_tx %bar[%c0], -4 : !copy.barrier<1>
  func.return
}

// -----

// rule: MB6
// fix: s| count 2||
func.func @mb6_arrive_drop_expect_tx_with_count() attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 4 : !copy.barrier<1>
  // expected-error@+2 {{barrier_arrive_drop with expect_tx arrives once and may complete the phase: expected no count and no nocomplete, got a count}}
  // expected-note@+1 {{drop count and nocomplete}}
  copy.barrier_arrive_drop %bar[%c0] count 2 expect_tx 4096 issuer elected : !copy.barrier<1>
  func.return
}

// -----

// rule: MB7
// fix: s| scope cluster||
func.func @mb7_nocomplete_cluster_scope() attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 4 : !copy.barrier<1>
  // expected-error@+2 {{a nocomplete arrival is CTA-scoped: expected scope cta, got scope cluster}}
  // expected-note@+1 {{drop scope cluster, or drop nocomplete}}
  copy.barrier_arrive %bar[%c0] count 1 nocomplete scope cluster : !copy.barrier<1>
  func.return
}

// -----

// rule: MB8
// fix: s|  copy.barrier_wait %bar[%c0], %true|  copy.barrier_reinit %bar arrivals 1 : !copy.barrier<1> copy.barrier_wait %bar[%c0], %true|
func.func @mb8_wait_after_inval() attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %true = arith.constant true
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.barrier_arrive %bar[%c0] issuer elected : !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-note@+1 {{the barrier is invalidated here}}
  copy.barrier_inval %bar : !copy.barrier<1>
  // expected-error@+2 {{barrier 0 of %bar is used after copy.barrier_inval invalidated it}}
  // expected-note@+1 {{initialize the group again first (copy.barrier_reinit %bar arrivals N)}}
  copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
  func.return
}

// -----

// rule: MB9
// fix: s|  copy.barrier_reinit|  copy.barrier_inval %bar : !copy.barrier<1> copy.barrier_reinit|
func.func @mb9_reinit_a_valid_barrier() attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  // expected-note@+1 {{the barrier is initialized here}}
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.barrier_arrive %bar[%c0] issuer elected : !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-error@+2 {{copy.barrier_reinit initializes barrier 0 of %bar, which is still valid}}
  // expected-note@+1 {{invalidate the group first (copy.barrier_inval)}}
  copy.barrier_reinit %bar arrivals 2 : !copy.barrier<1>
  func.return
}

// -----

// rule: MB10
// fix: s|  copy.barrier_inval|  copy.barrier_arrive %bar[%c0] issuer elected : !copy.barrier<1> copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> copy.barrier_inval|
func.func @mb10_inval_with_an_open_phase() attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %bar = copy.barrier_init arrivals 2 : !copy.barrier<1>
  // expected-note@+1 {{an arrival of the open phase}}
  copy.barrier_arrive %bar[%c0] issuer elected : !copy.barrier<1>
  // expected-error@+2 {{copy.barrier_inval invalidates barrier 0 of %bar while it is in use: phase 0 has 1 of its 2 arrivals and 0 of 0 bytes}}
  // expected-note@+1 {{(copy.barrier_wait before the copy.barrier_inval)}}
  copy.barrier_inval %bar : !copy.barrier<1>
  func.return
}

// -----

// rule: MB10
// fix: s|  copy.barrier_inval|  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> copy.barrier_inval|
func.func @mb10_inval_with_a_load_in_flight(%x: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{the copy on it}}
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  // expected-error@+2 {{no thread has waited for the TMA load of phase 0, which may still land on it}}
  // expected-note@+1 {{invalidate a barrier only once its last phase has completed and been waited on}}
  copy.barrier_inval %bar : !copy.barrier<1>
  func.return
}

// -----

// rule: MB11
// fix: s|%bar[%c0] nocomplete issuer|%bar[%c0] issuer|
func.func @mb11_nocomplete_arrival_completes_the_phase() attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  // expected-note@+1 {{initialized with arrivals 2}}
  %bar = copy.barrier_init arrivals 2 : !copy.barrier<1>
  // expected-note@+1 {{an arrival of the phase}}
  copy.barrier_arrive %bar[%c0] count 1 nocomplete issuer elected : !copy.barrier<1>
  // expected-error@+2 {{this nocomplete arrival completes phase 0 of barrier 0 of %bar}}
  // expected-note@+1 {{drop nocomplete from the arrival that may complete the phase}}
  copy.barrier_arrive %bar[%c0] nocomplete issuer elected : !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// After an arrive_drop, every later phase of the barrier counts one arrival fewer: a count of
// 2 on phase 1 is one too many.
// rule: P5
// fix: s|copy.barrier_arrive %bar[%c0] count 2 issuer elected|copy.barrier_arrive %bar[%c0] issuer elected|
func.func @p5_arrivals_beyond_the_dropped_count() attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %true = arith.constant true
  // expected-note@+1 {{the barrier is initialized here}}
  %bar = copy.barrier_init arrivals 2 : !copy.barrier<1>
  copy.barrier_arrive_drop %bar[%c0] issuer elected : !copy.barrier<1>
  copy.barrier_arrive %bar[%c0] issuer elected : !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-error@+2 {{2 arrivals on barrier 0 of %bar, whose phase 1 awaits 1 more of its 1}}
  // expected-note@+1 {{arrive 1 times}}
  copy.barrier_arrive %bar[%c0] count 2 issuer elected : !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
  func.return
}

// -----

// The consumer role waits on a phase that only the producer's nocomplete arrivals reach: the
// last of them would complete it (undefined), so the wait can never legally return.
// rule: MB11
// fix: s|copy.barrier_arrive %bar[%c0] nocomplete issuer elected|copy.barrier_arrive %bar[%c0] issuer elected|
func.func @mb11_wait_on_nocomplete_arrivals_only() attributes {gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  // expected-note@+1 {{initialized with arrivals 2}}
  %bar = copy.barrier_init arrivals 2 : !copy.barrier<1>
  copy.warp_specialize warps [1, 1] {
  ^bb0(%t: index):
    // expected-note@+1 {{an arrival of the phase}}
    copy.barrier_arrive %bar[%c0] count 1 nocomplete issuer elected : !copy.barrier<1>
    // expected-error@+2 {{this nocomplete arrival completes phase 0 of barrier 0 of %bar}}
    // expected-note@+1 {{drop nocomplete from the arrival that may complete the phase (the last one)}}
    copy.barrier_arrive %bar[%c0] nocomplete issuer elected : !copy.barrier<1>
  }, {
  ^bb0(%t: index):
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  }
  func.return
}
