// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid barrier, group, fence or SMEM-allocation op per chunk, named after the rule
// it breaks (`// rule:` gives the id in copy_dialect/rules.toml).

// rule: A1
// fix: s|commit_group bulk|commit_group cp_async|
func.func @a1_bulk_group_before_sm90() attributes {copy.target = #copy.target<"sm_80">} {
  // expected-error@+2 {{bulk groups (TMA stores and reductions) need sm_90 or newer, but the target is sm_80}}
  // expected-note@+1 {{use copy.commit_group cp_async}}
  copy.commit_group bulk
  func.return
}

// -----

// rule: A1
// fix: s|copy.fence_async_shared||
func.func @a1_fence_before_sm90() attributes {copy.target = #copy.target<"sm_89">} {
  // expected-error@+2 {{fence.proxy.async needs sm_90 or newer, but the target is sm_89}}
  // expected-note@+1 {{no fence is needed there}}
  copy.fence_async_shared
  func.return
}

// -----

// rule: A8
// fix: s|copy.wait_group cp_async 0|%p = arith.constant true copy.barrier_wait %bar[%c0], %p : !copy.barrier<1>|
func.func @a8_cp_async_wait_on_hopper(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.commit_group cp_async
  // expected-error@+2 {{wait_gmem_to_smem is only supported on pre-Hopper GPUs, which use cp.async for GMEM->SMEM copies.}}
  // expected-note@+1 {{wait with copy.barrier_wait}}
  copy.wait_group cp_async 0
  func.return
}

// -----

// rule: A11
// fix: s|copy.barrier_arrive_expect_tx %bar[%c0], 4096 : !copy.barrier<1>|copy.barrier_arrive %bar[%c0] : !copy.barrier<1>|
func.func @a11_expect_tx_before_sm90() attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{arrive_expect_tx is only supported on Hopper+ hardware}}
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
  // expected-error@+2 {{Only single-thread arrival is supported on pre-Hopper hardware}}
  // expected-note@+1 {{sm_80 has no mbarrier.arrive count}}
  copy.barrier_arrive %bar[%c0] count 4 : !copy.barrier<1>
  func.return
}

// -----

// rule: I1
// fix: s|!copy.barrier<33>|!copy.barrier<32>|
func.func @i1_more_than_32_barriers() {
  // expected-error@+2 {{Only up to 32 barriers per group supported}}
  // expected-note@+1 {{got 33}}
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<33>
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
// fix: s|!copy.barrier<1>|!copy.barrier<4>|
// fix: s|!copy.barrier<1>|!copy.barrier<4>|
func.func @i2_copy_barrier_offset_out_of_bounds(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // The load would signal the mbarrier 24 bytes past the group.
  // expected-error@+2 {{Barrier offset 3 is out of bounds}}
  // expected-note@+1 {{the group !copy.barrier<1> holds barriers 0 to 0: use an index in that range, or a larger group (!copy.barrier<4>)}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c3] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: I2
// fix: s|arith.constant 2 : i32|arith.constant 1 : i32|
func.func @i2_copy_barrier_offset_cast_from_i32(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c2_i32 = arith.constant 2 : i32
  %slot = arith.index_cast %c2_i32 : i32 to index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  // expected-error@+2 {{Barrier offset 2 is out of bounds}}
  // expected-note@+1 {{holds barriers 0 to 1}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bars[%slot] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<2>
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
  // expected-error@+2 {{mbarrier scope cluster needs a target with clusters (sm_90 or newer), but the target is sm_86}}
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
  // expected-error@+2 {{a cluster ([2, 1, 1]) needs sm_90 or newer, but the target is sm_80}}
  // expected-note@+1 {{drop copy.cluster from the kernel, or target sm_90 or newer}}
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  func.return
}

// -----

// rule: TR6
// fix: none -- which buffers to shrink (pipeline stages, box sizes) is the kernel author's choice; the note names both
func.func @tr6_smem_above_the_block_limit() attributes {copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{the kernel's SMEM buffers and barriers take 262160 bytes (263184 with the 1024-byte alignment pad of the arena), more than the 232448 bytes a block can use on sm_90a}}
  // expected-note@+1 {{use fewer pipeline stages or smaller boxes}}
  %a = copy.alloc_smem : memref<4x128x128xf32, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  func.return
}

// -----

// rule: TR10
// fix: s|{alignment = 64 : i64} ||
func.func @tr10_alloc_aligned_below_128() {
  // expected-error@+2 {{TMA needs SMEM buffers aligned to 128 bytes, got alignment 64}}
  // expected-note@+1 {{drop alignment}}
  %buf = copy.alloc_smem {alignment = 64 : i64} : memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: TR11
// fix: s|{alignment = 512 : i64} ||
func.func @tr11_alloc_aligned_below_swizzle_period() {
  // expected-error@+2 {{a buffer with swizzle 128 must be aligned to its 1024-byte period, got alignment 512}}
  // expected-note@+1 {{TMA swizzles by absolute address bits}}
  %buf = copy.alloc_smem {alignment = 512 : i64} : memref<64x32xf32, #copy.smem<swizzle = 128>>
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

// fix: s| read_only||
func.func @wait_group_read_only_cp_async() attributes {copy.target = #copy.target<"sm_80">} {
  // expected-error@+2 {{read_only applies to bulk groups only}}
  // expected-note@+1 {{drop read_only}}
  copy.wait_group cp_async 0 read_only
  func.return
}

// -----

// fix: s|memref<64x64xf32>|memref<64x64xf32, #copy.smem>|
func.func @alloc_smem_in_gmem() {
  // expected-error@+2 {{copy.alloc_smem allocates SMEM, got a ref in GMEM}}
  // expected-note@+1 {{#copy.smem}}
  %buf = copy.alloc_smem : memref<64x64xf32>
  func.return
}

// -----

// fix: s|"sm_75"|"sm_90a"|
// expected-error@+2 {{unknown target 'sm_75'}}
// expected-note@+1 {{expected one of sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a}}
func.func @unknown_target() attributes {copy.target = #copy.target<"sm_75">} {
  copy.fence_async_shared
  func.return
}
