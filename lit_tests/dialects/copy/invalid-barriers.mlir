// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid barrier op per chunk, named after the rule it breaks (`// rule:` gives the id
// in copy_dialect/rules.toml). The checks: copy_dialect/barriers.py.
// `// fix: s|OLD|NEW|` lines give the edit the note describes (or `// fix: none -- why`);
// tests/tools/test_fix_notes.py applies them and checks that the result verifies.

// rule: A11
// fix: s|copy.barrier_arrive_expect_tx %bar[%c0], 4096 : !copy.barrier<1>|copy.barrier_arrive %bar[%c0] : !copy.barrier<1>|
func.func @a11_expect_tx_before_sm90() attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{'copy.barrier_arrive_expect_tx' op needs a target with mbarrier transaction counts (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{sm_80 has no transaction counts}}
  copy.barrier_arrive_expect_tx %bar[%c0], 4096 : !copy.barrier<1>
  func.return
}

// -----

// rule: A12
// fix: s|copy.barrier_arrive %bar[%c0] count 4 : !copy.barrier<1>|copy.barrier_arrive %bar[%c0] : !copy.barrier<1> copy.barrier_arrive %bar[%c0] : !copy.barrier<1> copy.barrier_arrive %bar[%c0] : !copy.barrier<1> copy.barrier_arrive %bar[%c0] : !copy.barrier<1>|
func.func @a12_arrive_count_before_sm90() attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 4 : !copy.barrier<1>
  // expected-error@+2 {{'copy.barrier_arrive' op with count 4 needs a target with mbarrier arrival counts (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{sm_80 has no mbarrier.arrive count}}
  copy.barrier_arrive %bar[%c0] count 4 : !copy.barrier<1>
  func.return
}

// -----

// rule: I2
// fix: s|%c2 = arith.constant 2 : index|%c2 = arith.constant 1 : index|
func.func @i2_barrier_offset_out_of_bounds() {
  %c2 = arith.constant 2 : index
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  // expected-error@+2 {{Barrier offset 2 is out of bounds}}
  // expected-note@+1 {{holds barriers 0 to 1}}
  copy.barrier_arrive %bars[%c2] : !copy.barrier<2>
  func.return
}

// -----

// rule: I2
// fix: s|copy.barrier_wait %bars, %p|%c0 = arith.constant 0 : index copy.barrier_wait %bars[%c0], %p|
func.func @i2_group_without_index(%p: i1) {
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>
  // expected-error@+2 {{Operation is only valid for a single barrier, but barrier ref contains 4. Individual barriers can be accessed by indexing into the ref.}}
  // expected-note@+1 {{index the group}}
  copy.barrier_wait %bars, %p : !copy.barrier<4>
  func.return
}

// -----

// rule: I2
// fix: s|arith.constant 2 : index|arith.constant 1 : index|
func.func @i2_wait_barrier_offset_out_of_bounds(%parity: i1) {
  %c2 = arith.constant 2 : index
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  // expected-error@+2 {{Barrier offset 2 is out of bounds}}
  // expected-note@+1 {{holds barriers 0 to 1}}
  copy.barrier_wait %bars[%c2], %parity : !copy.barrier<2>
  func.return
}

// -----

// rule: I2
// fix: s|arith.constant 4 : i32|arith.constant 3 : i32|
func.func @i2_expect_tx_barrier_offset_out_of_bounds() attributes {copy.target = #copy.target<"sm_90a">} {
  %c4_i32 = arith.constant 4 : i32
  %slot = arith.index_cast %c4_i32 : i32 to index
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>
  // expected-error@+2 {{Barrier offset 4 is out of bounds}}
  // expected-note@+1 {{holds barriers 0 to 3}}
  copy.barrier_arrive_expect_tx %bars[%slot], 16384 : !copy.barrier<4>
  func.return
}

// -----

// rule: I2
// fix: s|arith.constant -1 : index|arith.constant 0 : index|
func.func @i2_arrive_negative_barrier_offset() {
  %m1 = arith.constant -1 : index
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  // expected-error@+2 {{Barrier offset -1 is out of bounds}}
  // expected-note@+1 {{holds barriers 0 to 1}}
  copy.barrier_arrive %bars[%m1] : !copy.barrier<2>
  func.return
}

// -----

// rule: I6
// fix: s| scope cluster||
func.func @i6_cluster_scope_without_clusters() attributes {copy.target = #copy.target<"sm_86">} {
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{'copy.barrier_arrive' op with scope cluster needs a target with clusters (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_86}}
  // expected-note@+1 {{set copy.target}}
  copy.barrier_arrive %bar scope cluster : !copy.barrier<1>
  func.return
}

// -----

// rule: I7
// fix: s|arrivals 0|arrivals 1|
func.func @i7_zero_arrivals() {
  // expected-error@+2 {{count must be greater than or equal to 1, got 0}}
  // expected-note@+1 {{the number of arrive operations that complete a phase}}
  %bar = copy.barrier_init arrivals 0 : !copy.barrier<1>
  func.return
}

// -----

// rule: I8
// fix: s|arrivals 1048576|arrivals 1048575|
func.func @i8_arrivals_past_20_bits() {
  // expected-error@+2 {{arrivals must be below 2**20, got 1048576}}
  // expected-note@+1 {{the mbarrier arrival count is a 20-bit field: use at most 1048575 arrivals}}
  %bar = copy.barrier_init arrivals 1048576 : !copy.barrier<1>
  func.return
}

// -----

// rule: A15
// fix: s|sm_80|sm_90|
func.func @a15_cluster_on_ampere() attributes {copy.target = #copy.target<"sm_80">, copy.cluster = array<i32: 2, 1, 1>} {
  // expected-error@+2 {{'copy.barrier_init' op in a kernel with the cluster [2, 1, 1] needs a target with clusters (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{drop copy.cluster from the kernel, or target sm_90 or newer}}
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  func.return
}

// -----

// rule: TR16
// fix: s|16400|16384|
func.func @tr16_expect_tx_larger_than_copies(%x: memref<256x256xf32>, %p: i1) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{expect_tx of 16400 bytes does not match the 16384 bytes the copies on this barrier deliver}}
  // expected-note@+1 {{expect 16384}}
  copy.barrier_arrive_expect_tx %bar[%c0], 16400 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {arrive = false} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %p : !copy.barrier<1>
  func.return
}

// -----

// rule: D10
// fix: s|, 8192 :|, 16384 :|
func.func @d10_expect_tx_of_a_multicast_slice(%x: memref<256x256xf32>, %p: i1) attributes {copy.target = #copy.target<"sm_90a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // Each CTA issues half of the box, but every CTA's barrier receives all of it.
  // expected-error@+2 {{expect_tx of 8192 bytes does not match the 16384 bytes the copies on this barrier deliver}}
  // expected-note@+1 {{expect 16384}}
  copy.barrier_arrive_expect_tx %bar[%c0], 8192 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {arrive = false, collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %p : !copy.barrier<1>
  func.return
}

// -----

// rule: TR17
// fix: none -- a transfer of 2**20 bytes or more must be split over several barrier phases, which restructures the pipeline
func.func @tr17_expect_tx_of_2_pow_20() attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{expect_tx must be in [0, 2**20), got 1048576 bytes}}
  // expected-note@+1 {{CUDA_ERROR_LAUNCH_FAILED}}
  copy.barrier_arrive_expect_tx %bar[%c0], 1048576 : !copy.barrier<1>
  func.return
}

// -----

// rule: I9
// fix: s| count 0||
func.func @i9_arrive_count_zero() attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{count must be at least 1, got 0}}
  // expected-note@+1 {{drop count to arrive once}}
  copy.barrier_arrive %bar[%c0] count 0 : !copy.barrier<1>
  func.return
}

// -----

// rule: TR16
// fix: s|copy.barrier_arrive_expect_tx %bar[%c0], 8192|copy.barrier_arrive_expect_tx %bar[%c0], 16384|
func.func @tr16_leader_tracked_load_expects_one_cta_box(%x: memref<512x512xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>, copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 128>>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // The leader's barrier counts the boxes of both CTAs of the pair.
  // expected-error@+2 {{expect_tx of 8192 bytes does not match the 16384 bytes the copies on this}}
  // expected-note@+1 {{a larger count hangs the waiters, a smaller one releases them before the data has landed: expect 16384}}
  copy.barrier_arrive_expect_tx %bar[%c0], 8192 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] leader_tracked <partitioned 0> {arrive = false, collective = array<i64: 0>} : memref<512x512xf16> to memref<64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// An im2col load with arrive = false delivers its SMEM box: 64 pixels x 16 f16 channels.
// rule: TR16
// fix: s|4096|2048|
func.func @tr16_expect_tx_of_an_im2col_load(%x: memref<2x9x9x16xf16>, %p: i1) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %t = arith.constant 0 : i16
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{expect_tx of 4096 bytes does not match the 2048 bytes the copies on this barrier deliver}}
  // expected-note@+1 {{expect 2048}}
  copy.barrier_arrive_expect_tx %bar[%c0], 4096 : !copy.barrier<1>
  copy.im2col_load %x[%c0, %c0, %c0, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: 0, 0>, upper = array<i64: 0, 0>, arrive = false} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %p : !copy.barrier<1>
  func.return
}
