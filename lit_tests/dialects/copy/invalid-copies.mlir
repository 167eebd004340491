// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid copy.async_copy per chunk, named after the rule it breaks (`// rule:` gives
// the id in copy_dialect/rules.toml). The checks: copy_dialect/copies.py, tma.py (TMA) and
// cp_async.py (cp.async).
// `// fix: s|OLD|NEW|` lines give the edit the note describes (or `// fix: none -- why`);
// tests/tools/test_fix_notes.py applies them and checks that the result verifies.

// rule: A1
// fix: s|impl tma|impl cp_async|
func.func @a1_tma_before_sm90(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{'copy.async_copy' op with impl tma needs a target with TMA (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{use impl cp_async}}
  copy.async_copy %x[%c0, %c0] to %buf impl tma : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: A1
// fix: s|"sm_80"|"sm_90"|
func.func @a1_tma_store_before_sm90(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{'copy.async_copy' op with impl tma needs a target with TMA (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{cp.async cannot store}}
  copy.async_copy %buf to %x[%c0, %c0] impl tma : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  func.return
}

// -----

// rule: A2
// fix: s| barrier %bar[%c0]||
// fix: s|, !copy.barrier<1>||
func.func @a2_cp_async_with_barrier(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{copy_gmem_to_smem with a barrier is only supported Hopper and newer GPUs, which use the TMA implementation}}
  // expected-note@+1 {{drop the barrier}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: A3
// fix: s|%buf = copy.alloc_smem|%bar = copy.barrier_init arrivals 1 : !copy.barrier<1> %buf = copy.alloc_smem|
// fix: s|to %buf |to %buf barrier %bar[%c0] |
// fix: s|to memref<64x64xf32, #copy.smem>|to memref<64x64xf32, #copy.smem>, !copy.barrier<1>|
func.func @a3_tma_load_without_barrier(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{Barriers are required for TMA GMEM -> SMEM copies}}
  // expected-note@+1 {{give the load a barrier}}
  copy.async_copy %x[%c0, %c0] to %buf : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: A4
// fix: s|impl cp_async|impl tma|
// fix: s|%buf = copy.alloc_smem|%bar = copy.barrier_init arrivals 1 : !copy.barrier<1> %buf = copy.alloc_smem|
// fix: s|to %buf |to %buf barrier %bar[%c0] |
// fix: s|to memref<64x64xf32, #copy.smem>|to memref<64x64xf32, #copy.smem>, !copy.barrier<1>|
func.func @a4_collective_cp_async(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{Only the TMA implementation supports collective copies}}
  // expected-note@+1 {{use impl tma}}
  copy.async_copy %x[%c0, %c0] to %buf impl cp_async {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: A4
// fix: s|"sm_90"|"sm_90a"|
func.func @a4_multicast_on_sm90(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{'copy.async_copy' op with collective needs a target with .multicast::cluster (sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f), but the target is sm_90}}
  // expected-note@+1 {{.multicast::cluster is an arch-specific feature: set copy.target to one of sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: A5
// fix: s|impl cp_async|impl tma|
// fix: s|<replicated> :|<replicated> {collective = array<i64: 0>} :|
// fix: s|%buf = copy.alloc_smem|%bar = copy.barrier_init arrivals 1 : !copy.barrier<1> %buf = copy.alloc_smem|
// fix: s|to %buf |to %buf barrier %bar[%c0] |
// fix: s|to memref<64x64xf32, #copy.smem>|to memref<64x64xf32, #copy.smem>, !copy.barrier<1>|
func.func @a5_leader_tracked_cp_async(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{Only the TMA implementation supports leader_tracked copies}}
  // expected-note@+1 {{use impl tma on sm_100a}}
  copy.async_copy %x[%c0, %c0] to %buf impl cp_async leader_tracked <replicated> : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: A5, A14
// fix: s| leader_tracked <replicated>||
func.func @a5_leader_tracked_on_sm90a(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{'copy.async_copy' op with leader_tracked needs a target with .cta_group::2 (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f), but the target is sm_90a}}
  // expected-note@+1 {{drop leader_tracked for a plain collective copy (multicast)}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] leader_tracked <replicated> {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: A5
// fix: s|to %buf impl cp_async|to %buf barrier %bar[%c0] impl tma|
// fix: s|to memref<64x64xf32, #copy.smem>|to memref<64x64xf32, #copy.smem>, !copy.barrier<1>|
func.func @a5_well_formed_leader_tracked_cp_async(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // A leader-tracked copy is collective too (D3): A5, not A4 ("collective copies"), is reported.
  // expected-error@+2 {{Only the TMA implementation supports leader_tracked copies}}
  // expected-note@+1 {{use impl tma on sm_100a, with a barrier (barrier %bar[%i])}}
  copy.async_copy %x[%c0, %c0] to %buf impl cp_async leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: A5
// fix: s|"sm_90a"|"sm_100a"|
// fix: s|to %buf impl cp_async|to %buf barrier %bar[%c0] impl tma|
// fix: s|to memref<64x64xf16, #copy.smem>|to memref<64x64xf16, #copy.smem>, !copy.barrier<1>|
func.func @a5_leader_tracked_cp_async_on_sm90a(%x: memref<256x256xf16>) attributes {copy.target = #copy.target<"sm_90a">, copy.cluster = array<i32: 1, 2, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Only the TMA implementation supports leader_tracked copies}}
  // expected-note@+1 {{use impl tma on one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, with a barrier (barrier %bar[%i])}}
  copy.async_copy %x[%c0, %c0] to %buf impl cp_async leader_tracked <replicated> {collective = array<i64: 1>} : memref<256x256xf16> to memref<64x64xf16, #copy.smem>
  func.return
}

// -----

// rule: A6
// fix: s|oob nan|oob zeros|
func.func @a6_cp_async_nan_fill(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{The cp.async implementation only supports oob promise_in_bounds or zeros, got nan}}
  // expected-note@+1 {{cannot fill NaN: use oob zeros}}
  copy.async_copy %x[%c0, %c0] to %buf oob nan : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: A9
// fix: s|impl cp_async|impl tma|
func.func @a9_cp_async_reduction(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{Only the TMA implementation supports reductions}}
  // expected-note@+1 {{use impl tma}}
  copy.async_copy %buf to %x[%c0, %c0] impl cp_async reduce add : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  func.return
}

// -----

// rule: A10, H1
// fix: s|copy.async_copy %x[%c0, %c0] to %buf if %p :|scf.if %p { copy.async_copy %x[%c0, %c0] to %buf :|
// fix: s|func.return|} func.return|
func.func @a10_cp_async_predicate(%x: memref<256x256xf32>, %p: i1) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{The cp.async implementation does not support user-defined predicates}}
  // expected-note@+1 {{guard the whole copy with scf.if}}
  copy.async_copy %x[%c0, %c0] to %buf if %p : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: B1
// fix: s|memref<64x64xi32, #copy.smem>|memref<64x64xf32, #copy.smem>|
// fix: s|memref<64x64xi32, #copy.smem>|memref<64x64xf32, #copy.smem>|
func.func @b1_element_types_differ(%x: memref<256x256xf32>) {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xi32, #copy.smem>
  // expected-error@+2 {{Expected same element type, got f32 and i32}}
  // expected-note@+1 {{copies do not convert}}
  copy.async_copy %x[%c0, %c0] to %buf : memref<256x256xf32> to memref<64x64xi32, #copy.smem>
  func.return
}

// -----

// rule: B2
// fix: s|%y: memref<64x64xf32>|%y: memref<64x64xf32, #copy.smem>|
// fix: s|to memref<64x64xf32>|to memref<64x64xf32, #copy.smem>|
func.func @b2_gmem_to_gmem(%x: memref<256x256xf32>, %y: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{Only SMEM <-> GMEM copies supported}}
  // expected-note@+1 {{got a copy from GMEM to GMEM}}
  copy.async_copy %x[%c0, %c0] to %y : memref<256x256xf32> to memref<64x64xf32>
  func.return
}

// -----

// rule: B2
// fix: s|memref<128x64xf32, #copy.tmem>|memref<128x64xf32, #copy.smem>|
// fix: s|memref<128x64xf32, #copy.tmem>|memref<128x64xf32, #copy.smem>|
func.func @b2_copy_into_tmem(%x: memref<256x256xf32>, %t: memref<128x64xf32, #copy.tmem>) {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{Only SMEM <-> GMEM copies supported}}
  // expected-note@+1 {{TMEM is reached with copy.tmem_load, copy.tmem_store and copy.smem_to_tmem}}
  copy.async_copy %x[%c0, %c0] to %t : memref<256x256xf32> to memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: B3
// fix: s| barrier %bar[%c0]||
// fix: s|, !copy.barrier<1>||
func.func @b3_store_with_barrier(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Barriers are unsupported for SMEM -> GMEM copies}}
  // expected-note@+1 {{stores complete through bulk groups}}
  copy.async_copy %buf to %x[%c0, %c0] barrier %bar[%c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>, !copy.barrier<1>
  func.return
}

// -----

// rule: B4
// fix: s| {collective = array<i64: 0>}||
func.func @b4_collective_store(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{Only GMEM -> SMEM copies can be collective}}
  // expected-note@+1 {{each CTA stores its own SMEM}}
  copy.async_copy %buf to %x[%c0, %c0] {collective = array<i64: 0>} : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  func.return
}

// -----

// rule: B4
// fix: s| leader_tracked <replicated>||
func.func @b4_leader_tracked_store(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // Not D3's "collective_axes must be specified": a store cannot be leader-tracked at all.
  // expected-error@+2 {{Only GMEM -> SMEM copies can be collective}}
  // expected-note@+1 {{drop collective/leader_tracked}}
  copy.async_copy %buf to %x[%c0, %c0] leader_tracked <replicated> : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  func.return
}

// -----

// rule: B5
// fix: s|"sm_80"|"sm_90"|
func.func @b5_cp_async_store(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{CP_ASYNC implementation only supports GMEM -> SMEM copies}}
  // expected-note@+1 {{cp.async cannot store: use impl tma on sm_90 or newer}}
  copy.async_copy %buf to %x[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  func.return
}

// -----

// rule: B6
// fix: s|(%x: memref<4096xf32>)|(%x: memref<4096xf32>, %i: index)|
// fix: s|to %buf :|to %buf[%i] :|
func.func @b6_box_rank_above_gmem_rank(%x: memref<4096xf32>) {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<4x64xf32, #copy.smem>
  // expected-error@+2 {{Expected shapes to match, but src has shape [4096] and dst has shape [4, 64]}}
  // expected-note@+1 {{may leave out leading GMEM dims}}
  copy.async_copy %x[%c0] to %buf : memref<4096xf32> to memref<4x64xf32, #copy.smem>
  func.return
}

// -----

// rule: B8
// fix: s|memref<3x3xi4, #copy.smem>|memref<3x4xi4, #copy.smem>|
// fix: s|memref<3x3xi4, #copy.smem>|memref<3x4xi4, #copy.smem>|
func.func @b8_odd_number_of_nibbles(%x: memref<256x256xi4>) {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<3x3xi4, #copy.smem>
  // expected-error@+2 {{Can only transfer integer bytes (shape=[3, 3], dtype=i4)}}
  // expected-note@+1 {{needs a multiple of 2 elements}}
  copy.async_copy %x[%c0, %c0] to %buf : memref<256x256xi4> to memref<3x3xi4, #copy.smem>
  func.return
}

// -----

// rule: B10
// fix: s|memref<256x256xf32, affine_map<(d0, d1) -> (d1, d0)>>|memref<256x256xf32>|
// fix: s|memref<256x256xf32, affine_map<(d0, d1) -> (d1, d0)>>|memref<256x256xf32>|
func.func @b10_gmem_not_contiguous(%x: memref<256x256xf32, affine_map<(d0, d1) -> (d1, d0)>>) {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{async_copy assumes the GMEM reference is contiguous}}
  // expected-note@+1 {{use a row-major ref}}
  copy.async_copy %x[%c0, %c0] to %buf : memref<256x256xf32, affine_map<(d0, d1) -> (d1, d0)>> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: B11
// fix: s|@b11_gmem_not_a_kernel_argument()|@b11_gmem_not_a_kernel_argument(%x: memref<256x256xf32>)|
// fix: s|%x = "test.op"() : () -> memref<256x256xf32>||
func.func @b11_gmem_not_a_kernel_argument() attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %x = "test.op"() : () -> memref<256x256xf32>
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected %x to be a GMEM kernel argument.}}
  // expected-note@+1 {{a TMA descriptor is encoded on the host before launch}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: B14
// fix: s|, offset: 8||
// fix: s|, offset: 8||
func.func @b14_gmem_layout_offset(%x: memref<64x64xf32, strided<[64, 1], offset: 8>>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{expected the layout of a GMEM ref to have offset 0 (the runtime passes the address of the array's first element, and every address starts there), got offset 8 in memref<64x64xf32, strided<[64, 1], offset: 8>>}}
  // expected-note@+1 {{drop the offset, and pass the view of the array that starts where it pointed}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<64x64xf32, strided<[64, 1], offset: 8>> to memref<16x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: B14
// fix: s|, offset: ?||
// fix: s|, offset: ?||
func.func @b14_gmem_layout_dynamic_offset(%x: memref<64x64xf32, strided<[64, 1], offset: ?>>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
  // expected-error@+2 {{got offset ? in memref<64x64xf32, strided<[64, 1], offset: ?>>}}
  // expected-note@+1 {{drop the offset}}
  copy.async_copy %x[%c0, %c0] to %buf : memref<64x64xf32, strided<[64, 1], offset: ?>> to memref<16x64xf32, #copy.smem>
  func.return
}

// -----

// rule: B12
// fix: s|to %buf[%c0, %c0] :|to %buf[%c0] :|
func.func @b12_too_many_smem_indices(%x: memref<256x256xf32>) {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<2x64xf32, #copy.smem>
  // expected-error@+2 {{The size of the SMEM `indices` must be smaller than the rank of the SMEM ref (2), got 2}}
  // expected-note@+1 {{SMEM indices pick a slot along leading dims}}
  copy.async_copy %x[%c0, %c0] to %buf[%c0, %c0] : memref<256x256xf32> to memref<2x64xf32, #copy.smem>
  func.return
}

// -----

// rule: C1
// fix: s|strided<[65, 1]>|strided<[68, 1]>|
// fix: s|strided<[65, 1]>|strided<[68, 1]>|
func.func @c1_gmem_stride_not_16_bytes(%x: memref<64x64xf32, strided<[65, 1]>>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{async_copy requires all GMEM strides except the last one to be a multiple of 16 bytes}}
  // expected-note@+1 {{stride 0 is 65 elements = 260 bytes}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<64x64xf32, strided<[65, 1]>> to memref<16x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: C2
// fix: s|strided<[128, 2]>|strided<[128, 1]>|
// fix: s|strided<[128, 2]>|strided<[128, 1]>|
func.func @c2_innermost_stride_not_1(%x: memref<64x64xf32, strided<[128, 2]>>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{TMA requires the stride of the last dimension after transforming the GMEM reference to be 1, but it is 2.}}
  // expected-note@+1 {{innermost dimension is contiguous}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<64x64xf32, strided<[128, 2]>> to memref<16x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: C3
// fix: s|memref<2x2x2x2x2x64xf32>|memref<4x2x2x2x64xf32>|
// fix: s|memref<2x2x2x2x2x64xf32>|memref<4x2x2x2x64xf32>|
// fix: s|%x[%c0, %c0, %c0, %c0, %c0, %c0]|%x[%c0, %c0, %c0, %c0, %c0]|
func.func @c3_rank_6(%x: memref<2x2x2x2x2x64xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<2x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Async copies only support striding up to 5 dimensions}}
  // expected-note@+1 {{the GMEM ref has rank 6}}
  copy.async_copy %x[%c0, %c0, %c0, %c0, %c0, %c0] to %buf barrier %bar[%c0] : memref<2x2x2x2x2x64xf32> to memref<2x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: C4, TR5
// fix: s|memref<64x6xf32, #copy.smem>|memref<64x8xf32, #copy.smem>|
// fix: s|memref<64x6xf32, #copy.smem>|memref<64x8xf32, #copy.smem>|
func.func @c4_minor_box_not_16_bytes(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x6xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Async copies require the number of bits copied along the last dimension to be divisible by 128, but got 192}}
  // expected-note@+1 {{make the innermost box dim a multiple of 4 elements (f32)}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<64x6xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: C5, TR8
// fix: s|memref<64x64xf32, #copy.smem<swizzle = 64>>|memref<64x16xf32, #copy.smem<swizzle = 64>>|
// fix: s|memref<64x64xf32, #copy.smem<swizzle = 64>>|memref<64x16xf32, #copy.smem<swizzle = 64>>|
func.func @c5_minor_box_wider_than_swizzle(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem<swizzle = 64>>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Async copies with swizzle=64 require the last dimension of the slice to be at most 64 bytes i.e. 16 elements, but got 64 elements.}}
  // expected-note@+1 {{narrow the innermost box dim to 16 elements (one swizzle span)}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem<swizzle = 64>>, !copy.barrier<1>
  func.return
}

// -----

// rule: C5, TR8
// fix: s|memref<8x64xf32, #copy.smem<swizzle = 128>>|memref<8x32xf32, #copy.smem<swizzle = 128>>|
// fix: s|memref<8x64xf32, #copy.smem<swizzle = 128>>|memref<8x32xf32, #copy.smem<swizzle = 128>>|
func.func @c5_row_of_256_bytes_under_swizzle_128(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem<swizzle = 128>>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Async copies with swizzle=128 require the last dimension of the slice to be at most 128 bytes i.e. 32 elements, but got 64 elements.}}
  // expected-note@+1 {{or use an unswizzled buffer}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<8x64xf32, #copy.smem<swizzle = 128>>, !copy.barrier<1>
  func.return
}

// -----

// rule: C7, TR5
// fix: s|memref<512x16xf32, #copy.smem>|memref<256x16xf32, #copy.smem>|
// fix: s|memref<512x16xf32, #copy.smem>|memref<256x16xf32, #copy.smem>|
func.func @c7_box_dim_above_256(%x: memref<1024x1024xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<512x16xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Async copies only support copying <=256 elements along each dimension, got 512}}
  // expected-note@+1 {{split the box [512, 16]}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<1024x1024xf32> to memref<512x16xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: C8
// fix: none -- a tensor-map dimension holds at most 2**32 elements: the array must be split into several refs (kernel arguments), a change of the kernel's interface
func.func @c8_gmem_dim_above_2_pow_32(%x: memref<4294967297x16xi8>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x16xi8, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{TMA size must be at most 2**32, but got 4294967297 at index 0}}
  // expected-note@+1 {{a tensor-map dimension holds at most 2**32 elements}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<4294967297x16xi8> to memref<64x16xi8, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: C10
// fix: s|, %buf: memref<64x64xf32, strided<[128, 1]>, #copy.smem>||
// fix: s|%c0 = arith.constant 0 : index|%c0 = arith.constant 0 : index %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>|
// fix: s|to memref<64x64xf32, strided<[128, 1]>, #copy.smem>|to memref<64x64xf32, #copy.smem>|
func.func @c10_smem_not_contiguous(%x: memref<256x256xf32>, %buf: memref<64x64xf32, strided<[128, 1]>, #copy.smem>) {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{async_copy needs the SMEM reference to be contiguous, but got strides [128, 1] for shape [64, 64]}}
  // expected-note@+1 {{use a row-major SMEM buffer}}
  copy.async_copy %x[%c0, %c0] to %buf : memref<256x256xf32> to memref<64x64xf32, strided<[128, 1]>, #copy.smem>
  func.return
}

// -----

// rule: C11
// fix: s|memref<256x256xi1>|memref<256x256xi8>|
// fix: s|memref<64x128xi1, #copy.smem>|memref<64x128xi8, #copy.smem>|
// fix: s|memref<256x256xi1>|memref<256x256xi8>|
// fix: s|memref<64x128xi1, #copy.smem>|memref<64x128xi8, #copy.smem>|
func.func @c11_unsupported_tma_dtype(%x: memref<256x256xi1>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x128xi1, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{unsupported TMA dtype i1}}
  // expected-note@+1 {{store the values as i8}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xi1> to memref<64x128xi1, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: C11
// fix: s|memref<256x256xi4>|memref<256x128xi8>|
// fix: s|memref<64x128xi4, #copy.smem>|memref<64x64xi8, #copy.smem>|
// fix: s|memref<256x256xi4> to memref<64x128xi4, #copy.smem>|memref<256x128xi8> to memref<64x64xi8, #copy.smem>|
func.func @c11_tma_of_packed_i4(%x: memref<256x256xi4>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x128xi4, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{unsupported TMA dtype i4}}
  // expected-note@+1 {{(and f4E2M1FN, f6E2M3FN, f6E3M2FN in tiled copies and prefetches on sm_100+); pack 4-bit elements into i8}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xi4> to memref<64x128xi4, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: C12
// fix: s|memref<256x255xi4>|memref<256x256xi4>|
// fix: s|memref<256x255xi4>|memref<256x256xi4>|
func.func @c12_sub_byte_gmem_not_packed(%x: memref<256x255xi4>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x32xi4, #copy.smem>
  // expected-error@+2 {{sub-byte element type i4: the innermost GMEM dim (255) and box dim (32) must be multiples of the packing 2}}
  // expected-note@+1 {{pad the innermost dimension to whole bytes}}
  copy.async_copy %x[%c0, %c0] to %buf : memref<256x255xi4> to memref<64x32xi4, #copy.smem>
  func.return
}

// -----

// rule: C14
// fix: s|, %buf: memref<?x64xf32, #copy.smem>||
// fix: s|%c0 = arith.constant 0 : index|%c0 = arith.constant 0 : index %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>|
// fix: s|to memref<?x64xf32, #copy.smem>|to memref<64x64xf32, #copy.smem>|
func.func @c14_smem_not_static(%x: memref<256x256xf32>, %buf: memref<?x64xf32, #copy.smem>) {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{the SMEM memref must be static shaped, got memref<?x64xf32, #copy.smem>}}
  // expected-note@+1 {{allocate SMEM buffers with copy.alloc_smem}}
  copy.async_copy %x[%c0, %c0] to %buf : memref<256x256xf32> to memref<?x64xf32, #copy.smem>
  func.return
}

// -----

// rule: C15
// fix: s| {swizzle = 64 : i64}||
func.func @c15_swizzle_differs_from_buffer(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x32xf32, #copy.smem<swizzle = 128>>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{TMA descriptor layout must match shared layout, but got descriptor layout swizzle 64 and shared memory layout swizzle 128}}
  // expected-note@+1 {{allocate the buffer as #copy.smem<swizzle = 64>}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {swizzle = 64 : i64} : memref<256x256xf32> to memref<64x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<1>
  func.return
}

// -----

// rule: D1
// fix: s|array<i64: 0, 1>|array<i64: 0>|
func.func @d1_leader_tracked_two_axes(%x: memref<256x256xf16>) attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected exactly one collective axis, got collective_axes=[0, 1]}}
  // expected-note@+1 {{shared by a pair of CTAs along one cluster dim}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] leader_tracked <replicated> {collective = array<i64: 0, 1>} : memref<256x256xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: D2
// fix: s|array<i32: 4, 1, 1>|array<i32: 2, 1, 1>|
func.func @d2_leader_tracked_cluster_of_4(%x: memref<256x256xf16>) attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 4, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Partitioned loads only supported for clusters of size 2. Got cluster size 4.}}
  // expected-note@+1 {{set copy.cluster = array<i32: 2, 1, 1>}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<256x256xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: D2
// fix: s|collective = array<i64: 1>|collective = array<i64: 0>|
func.func @d2_leader_tracked_axis_of_extent_1(%x: memref<256x256xf16>) attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{the collective axis 1 of a leader-tracked copy has extent 1 in the cluster [2, 1, 1]: expected the pair's axis, of extent 2}}
  // expected-note@+1 {{use collective = array<i64: 0> (the cluster dim that holds the pair)}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] leader_tracked <partitioned 0> {collective = array<i64: 1>} : memref<256x256xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: D3
// fix: s|<partitioned 0> :|<partitioned 0> {collective = array<i64: 0>} :|
func.func @d3_leader_tracked_without_collective(%x: memref<256x256xf16>) attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{`collective_axes` must be specified when `leader_tracked` is set}}
  // expected-note@+1 {{collective = array<i64: 0>}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] leader_tracked <partitioned 0> : memref<256x256xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: D4
// fix: s|<partitioned 2>|<partitioned 0>|
func.func @d4_partition_axis_out_of_range(%x: memref<256x256xf16>) attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{partition axis 2 is out of range for the rank-2 slice [64, 64]}}
  // expected-note@+1 {{partition along a dim of the box}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] leader_tracked <partitioned 2> {collective = array<i64: 0>} : memref<256x256xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: D5
// fix: s|#copy.target<"sm_90a">}|#copy.target<"sm_90a">, copy.cluster = array<i32: 2, 1, 1>}|
func.func @d5_collective_without_cluster(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{a collective copy over cluster dims [0] needs a cluster larger than 1 along them, got cluster [1, 1, 1]}}
  // expected-note@+1 {{set copy.cluster}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: D5
// fix: s|memref<6x32xf32, #copy.smem>|memref<8x32xf32, #copy.smem>|
// fix: s|memref<6x32xf32, #copy.smem>|memref<8x32xf32, #copy.smem>|
func.func @d5_box_not_divisible_by_collective(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">, copy.cluster = array<i32: 4, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<6x32xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{None of the leading dimensions in the transformed slice shape [6, 32] is divisible by the collective size 4}}
  // expected-note@+1 {{make that dim a multiple of 4}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {collective = array<i64: 0>} : memref<256x256xf32> to memref<6x32xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: D7
// fix: s|array<i64: 0, 0>|array<i64: 0>|
func.func @d7_duplicate_collective_dims(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{The `collective` attribute must not contain duplicate dimensions.}}
  // expected-note@+1 {{got [0, 0]}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {collective = array<i64: 0, 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: E1
// fix: s|reduce min|reduce add|
func.func @e1_min_on_f32(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{Reduction op min not supported by the TMA implementation for element type f32}}
  // expected-note@+1 {{f32 (tensor map FLOAT32) takes add}}
  copy.async_copy %buf to %x[%c0, %c0] reduce min : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  func.return
}

// -----

// rule: E1
// fix: s|reduce umin|reduce min|
func.func @e1_umin_on_f16(%x: memref<256x256xf16>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  // expected-error@+2 {{Reduction op umin not supported by the TMA implementation for element type f16}}
  // expected-note@+1 {{use reduce min: umin names the signedness of an integer comparison, and f16 (tensor map FLOAT16) takes add, max, min}}
  copy.async_copy %buf to %x[%c0, %c0] reduce umin : memref<64x64xf16, #copy.smem> to memref<256x256xf16>
  func.return
}

// -----

// rule: E1
// fix: s|reduce smax|reduce max|
func.func @e1_smax_on_bf16(%x: memref<256x256xbf16>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xbf16, #copy.smem>
  // expected-error@+2 {{Reduction op smax not supported by the TMA implementation for element type bf16}}
  // expected-note@+1 {{use reduce max: smax names the signedness of an integer comparison}}
  copy.async_copy %buf to %x[%c0, %c0] reduce smax : memref<64x64xbf16, #copy.smem> to memref<256x256xbf16>
  func.return
}

// -----

// rule: E1
// fix: s|reduce min|reduce add|
func.func @e1_min_on_tf32(%x: memref<256x256xtf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  // A 64-wide tf32 box is 256 bytes a row (tf32 is stored in 32 bits): only the op is wrong.
  %buf = copy.alloc_smem : memref<64x64xtf32, #copy.smem>
  // expected-error@+2 {{Reduction op min not supported by the TMA implementation for element type tf32}}
  // expected-note@+1 {{tf32 (tensor map TFLOAT32) takes add}}
  copy.async_copy %buf to %x[%c0, %c0] reduce min : memref<64x64xtf32, #copy.smem> to memref<256x256xtf32>
  func.return
}

// -----

// rule: E1
// fix: none -- no TMA reduction exists for i16: the data must be widened (a different array) or reduced by threads
func.func @e1_add_on_i16(%x: memref<256x256xi16>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xi16, #copy.smem>
  // expected-error@+2 {{Reduction op add not supported by the TMA implementation for element type i16}}
  // expected-note@+1 {{no TMA reduction exists for i16}}
  copy.async_copy %buf to %x[%c0, %c0] reduce add : memref<64x64xi16, #copy.smem> to memref<256x256xi16>
  func.return
}

// -----

// rule: E1
// fix: s|reduce inc|reduce add|
func.func @e1_inc_on_signed_i32(%x: memref<256x256xsi32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xsi32, #copy.smem>
  // expected-error@+2 {{Reduction op inc not supported by the TMA implementation for element type si32}}
  // expected-note@+1 {{si32 (tensor map INT32) takes add, and, max, min, or, xor}}
  copy.async_copy %buf to %x[%c0, %c0] reduce inc : memref<64x64xsi32, #copy.smem> to memref<256x256xsi32>
  func.return
}

// -----

// rule: E2
// fix: s|reduce min|reduce umin|
func.func @e2_min_without_signedness(%x: memref<256x256xi32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xi32, #copy.smem>
  // expected-error@+2 {{reduction min on the signless integer type i32 does not say whether to compare signed or unsigned}}
  // expected-note@+1 {{use umin or smin}}
  copy.async_copy %buf to %x[%c0, %c0] reduce min : memref<64x64xi32, #copy.smem> to memref<256x256xi32>
  func.return
}

// -----

// rule: E2
// fix: s|reduce smax|reduce umax|
func.func @e2_smax_on_unsigned(%x: memref<256x256xui64>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xui64, #copy.smem>
  // expected-error@+2 {{reduction smax contradicts the signedness of the element type ui64}}
  // expected-note@+1 {{the tensor-map type decides signedness}}
  copy.async_copy %buf to %x[%c0, %c0] reduce smax : memref<64x64xui64, #copy.smem> to memref<256x256xui64>
  func.return
}

// -----

// rule: E3
// fix: s| reduce add||
func.func @e3_reduction_on_a_load(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Reductions are only supported for SMEM -> GMEM copies}}
  // expected-note@+1 {{swap src and dst}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] reduce add : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: E3
// fix: s| reduce add||
func.func @e3_reduction_on_a_cp_async_load(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // Not A9 ("use impl tma"): no implementation reduces into SMEM.
  // expected-error@+2 {{Reductions are only supported for SMEM -> GMEM copies}}
  // expected-note@+1 {{drop reduce for a plain load}}
  copy.async_copy %x[%c0, %c0] to %buf impl cp_async reduce add : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: E5
// fix: s|reduce add|reduce max|
func.func @e5_add_on_signed_i64(%x: memref<256x256xsi64>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xsi64, #copy.smem>
  // expected-error@+2 {{Reduction op add not supported by the TMA implementation for element type si64}}
  // expected-note@+1 {{si64 (tensor map INT64) takes max, min}}
  copy.async_copy %buf to %x[%c0, %c0] reduce add : memref<64x64xsi64, #copy.smem> to memref<256x256xsi64>
  func.return
}

// -----

// rule: F1
// fix: s| oob zeros||
func.func @f1_zero_fill_on_a_store(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{oob zeros only applies to GMEM -> SMEM copies}}
  // expected-note@+1 {{a TMA store never writes outside the array}}
  copy.async_copy %buf to %x[%c0, %c0] oob zeros : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  func.return
}

// -----

// rule: F3
// fix: s|oob promise_in_bounds|oob zeros|
func.func @f3_promised_in_bounds_but_not(%x: memref<100x256xf16>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  // expected-error@+2 {{the copy window [64, 128) along dim 0 is out of bounds of the GMEM ref (size 100), but oob is promise_in_bounds}}
  // expected-note@+1 {{use oob zeros}}
  copy.async_copy %x[%c64, %c0] to %buf oob promise_in_bounds : memref<100x256xf16> to memref<64x64xf16, #copy.smem>
  func.return
}

// -----

// rule: F8
// fix: s|%c3 = arith.constant 3 : index|%c3 = arith.constant 2 : index|
func.func @f8_slot_past_the_buffer(%x: memref<100x256xf32>, %i: index) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %buf = copy.alloc_smem : memref<3x32xf32, #copy.smem>
  // expected-error@+2 {{expected the SMEM slot index along dim 0 in [0, 3), found the constant 3: it lies outside memref<3x32xf32, #copy.smem>}}
  // expected-note@+1 {{dim 0 of the buffer has 3 entries (its indices are 0 to 2): index inside it, or allocate a buffer of 4 along dim 0}}
  copy.async_copy %x[%i, %c0] to %buf[%c3] impl cp_async : memref<100x256xf32> to memref<3x32xf32, #copy.smem>
  copy.commit_group cp_async
  copy.wait_group cp_async 0
  func.return
}

// -----

// rule: F8
// fix: s|%cm1 = arith.constant -1 : index|%cm1 = arith.constant 0 : index|
func.func @f8_negative_slot_of_a_store(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %cm1 = arith.constant -1 : index
  %buf = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
  // expected-error@+2 {{expected the SMEM slot index along dim 0 in [0, 2), found the constant -1: it lies outside memref<2x64x64xf32, #copy.smem>}}
  // expected-note@+1 {{dim 0 of the buffer has 2 entries (its indices are 0 to 1): index inside it}}
  copy.async_copy %buf[%cm1] to %x[%c0, %c0] : memref<2x64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: H2
// fix: s|memref<64x32xf32, #copy.smem<swizzle = 128>>|memref<64x32xf32, #copy.smem>|
// fix: s|memref<64x32xf32, #copy.smem<swizzle = 128>>|memref<64x32xf32, #copy.smem>|
func.func @h2_cp_async_swizzled(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x32xf32, #copy.smem<swizzle = 128>>
  // expected-error@+2 {{Swizzle is not supported for CP_ASYNC copies}}
  // expected-note@+1 {{drop the swizzle}}
  copy.async_copy %x[%c0, %c0] to %buf : memref<256x256xf32> to memref<64x32xf32, #copy.smem<swizzle = 128>>
  func.return
}

// -----

// rule: H2
// fix: s|memref<64x2xi8, #copy.smem>|memref<64x4xi8, #copy.smem>|
// fix: s|memref<64x2xi8, #copy.smem>|memref<64x4xi8, #copy.smem>|
func.func @h2_cp_async_row_of_2_bytes(%x: memref<256x256xi8>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x2xi8, #copy.smem>
  // expected-error@+2 {{CP_ASYNC requires at least 4 bytes per transfer}}
  // expected-note@+1 {{the innermost box row is 2 bytes}}
  copy.async_copy %x[%c0, %c0] to %buf : memref<256x256xi8> to memref<64x2xi8, #copy.smem>
  func.return
}

// -----

// rule: H6
// fix: s|cache cg|cache ca|
func.func @h6_cg_needs_16_bytes(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x2xf32, #copy.smem>
  // expected-error@+2 {{CG cache modifier is only support for 16 bytes copy.}}
  // expected-note@+1 {{use cache ca}}
  copy.async_copy %x[%c0, %c0] to %buf cache cg : memref<256x256xf32> to memref<64x2xf32, #copy.smem>
  func.return
}

// -----

// rule: H6
// fix: s|cache cg|cache ca|
func.func @h6_cg_with_8_byte_chunks(%x: memref<64x34xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<16x32xf32, #copy.smem>
  // The box row is 128 bytes, but the GMEM rows are 136 bytes apart: 8-byte chunks.
  // expected-error@+2 {{CG cache modifier is only support for 16 bytes copy.}}
  // expected-note@+1 {{this copy moves 8-byte chunks (a GMEM row stride or the innermost coordinate is not a multiple of 16 bytes); use cache ca}}
  copy.async_copy %x[%c0, %c0] to %buf cache cg : memref<64x34xf32> to memref<16x32xf32, #copy.smem>
  func.return
}

// -----

// rule: H8
// fix: s|memref<?x?xf32, strided<[?, 1]>>|memref<?x?xf32>|
// fix: s|memref<?x?xf32, strided<[?, 1]>>|memref<?x?xf32>|
func.func @h8_cp_async_dynamic_layout_stride(%x: memref<?x?xf32, strided<[?, 1]>>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{the cp.async implementation needs the GMEM strides at compile time, from the array's sizes or from the memref.reinterpret_cast that made the ref: expected a row-major ref, a strided layout of static strides or a view made in the kernel, got memref<?x?xf32, strided<[?, 1]>>}}
  // expected-note@+1 {{drop the strided layout (a row-major ref, whose strides follow from its sizes), view the array with memref.reinterpret_cast in the kernel (its stride operands are the strides), or use impl tma (sm_90+)}}
  copy.async_copy %x[%c0, %c0] to %buf : memref<?x?xf32, strided<[?, 1]>> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: H9
// fix: s|strided<[64, 1], offset: ?>|strided<[?, 1], offset: ?>|
// fix: s|strided<[64, 1], offset: ?>|strided<[?, 1], offset: ?>|
func.func @h9_view_layout_disagrees_with_its_cast(%pool: memref<4096xf32>, %off: index, %n: index, %pitch: index) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %v = memref.reinterpret_cast %pool to offset: [%off], sizes: [%n, %n], strides: [%pitch, 1] : memref<4096xf32> to memref<?x?xf32, strided<[64, 1], offset: ?>>
  %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
  // expected-error@+2 {{expected the view's layout to give the offset and strides its memref.reinterpret_cast gives, got memref<?x?xf32, strided<[64, 1], offset: ?>>: stride 0 is 64 where the cast gives a value (?)}}
  // expected-note@+1 {{give the view the type memref<?x?xf32, strided<[?, 1], offset: ?>> in place of memref<?x?xf32, strided<[64, 1], offset: ?>>: a `?` where the cast takes a value, the constant where it takes one}}
  copy.async_copy %v[%c0, %c0] to %buf impl cp_async oob zeros : memref<?x?xf32, strided<[64, 1], offset: ?>> to memref<16x64xf32, #copy.smem>
  func.return
}

// -----

// rule: H9
// fix: s|strided<[?, 1]>>|strided<[?, 1], offset: ?>>|
// fix: s|strided<[?, 1]>>|strided<[?, 1], offset: ?>>|
func.func @h9_view_offset_disagrees_with_its_cast(%pool: memref<4096xf32>, %off: index, %n: index, %pitch: index) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %v = memref.reinterpret_cast %pool to offset: [%off], sizes: [%n, %n], strides: [%pitch, 1] : memref<4096xf32> to memref<?x?xf32, strided<[?, 1]>>
  %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
  // expected-error@+2 {{expected the view's layout to give the offset and strides its memref.reinterpret_cast gives, got memref<?x?xf32, strided<[?, 1]>>: the offset is 0 where the cast gives a value (?)}}
  // expected-note@+1 {{give the view the type memref<?x?xf32, strided<[?, 1], offset: ?>>}}
  copy.async_copy %v[%c0, %c0] to %buf impl cp_async oob zeros : memref<?x?xf32, strided<[?, 1]>> to memref<16x64xf32, #copy.smem>
  func.return
}

// -----

// rule: H7
// fix: s|strided<[512, 2]>|strided<[512, 1]>|
// fix: s|strided<[512, 2]>|strided<[512, 1]>|
func.func @h7_cp_async_innermost_stride(%x: memref<256x256xf32, strided<[512, 2]>>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{source memref most minor dim must have unit stride}}
  // expected-note@+1 {{the innermost stride is 2}}
  copy.async_copy %x[%c0, %c0] to %buf : memref<256x256xf32, strided<[512, 2]>> to memref<64x64xf32, #copy.smem>
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

// rule: J16
// fix: s|copy.async_copy %buf to|copy.fence_async_shared copy.async_copy %buf to|
func.func @j16_tma_store_of_unfenced_smem(%x: memref<256x256xf32>, %v: f32) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  memref.store %v, %buf[%c0, %c0] : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{SMEM written by threads must be made visible to the TMA unit before a TMA store reads it}}
  // expected-note@+1 {{add copy.fence_async_shared}}
  copy.async_copy %buf to %x[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  func.return
}

// -----

// rule: K1
// fix: s|%x[%c0] to|%x[%c0, %c0] to|
func.func @k1_wrong_number_of_coordinates(%x: memref<256x256xf32>) {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{expected 2 coordinates, but got 1}}
  // expected-note@+1 {{one index per dimension}}
  copy.async_copy %x[%c0] to %buf : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: TR10
// fix: s|memref<3x2x4xf32, #copy.smem>|memref<3x8x4xf32, #copy.smem>|
// fix: s|memref<3x2x4xf32, #copy.smem>|memref<3x8x4xf32, #copy.smem>|
func.func @tr10_slot_not_128_byte_aligned(%x: memref<256x256xf32>, %i: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<3x2x4xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{TMA needs its SMEM address aligned to 128 bytes, but slots are 32 bytes apart}}
  // expected-note@+1 {{CUDA_ERROR_MISALIGNED_ADDRESS}}
  copy.async_copy %x[%c0, %c0] to %buf[%i] barrier %bar[%c0] : memref<256x256xf32> to memref<3x2x4xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: TR11
// fix: s|memref<2x4x32xf32, #copy.smem<swizzle = 128>>|memref<2x8x32xf32, #copy.smem<swizzle = 128>>|
// fix: s|memref<2x4x32xf32, #copy.smem<swizzle = 128>>|memref<2x8x32xf32, #copy.smem<swizzle = 128>>|
func.func @tr11_slot_not_aligned_to_swizzle_period(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<2x4x32xf32, #copy.smem<swizzle = 128>>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{TMA needs its SMEM address aligned to 1024 bytes (swizzle 128 repeats every 1024 bytes), but slot [1] starts at byte 512}}
  // expected-note@+1 {{silently swizzles by absolute address bits}}
  copy.async_copy %x[%c0, %c0] to %buf[%c1] barrier %bar[%c0] : memref<256x256xf32> to memref<2x4x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<1>
  func.return
}

// -----

// rule: TR12
// fix: s|%c2 = arith.constant 2 : index|%c2 = arith.constant 4 : index|
func.func @tr12_innermost_coordinate_not_16_bytes(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{the innermost TMA coordinate must be a multiple of 16 bytes, got 2 (8 bytes)}}
  // expected-note@+1 {{illegal instruction}}
  copy.async_copy %x[%c0, %c2] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: TR13
// fix: s|%cm1 = arith.constant -1 : index|%cm1 = arith.constant 0 : index|
func.func @tr13_negative_store_coordinate(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %cm1 = arith.constant -1 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{TMA store coordinates must be >= 0, got -1 at index 0}}
  // expected-note@+1 {{loads may start out of bounds, stores may not}}
  copy.async_copy %buf to %x[%cm1, %c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  func.return
}

// -----

// rule: K4
// fix: s|%big = arith.constant 4294967360 : index|%big = arith.constant 0 : index|
// A load at row 2^32 + 64: the coordinate is .s32, the lowering keeps its low 32 bits, and
// the load would read row 64.
func.func @k4_load_coordinate_beyond_32_bits(%x: memref<?x64xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %big = arith.constant 4294967360 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected the coordinates of a TMA copy in the signed 32-bit range [-2147483648, 2147483647], got 4294967360 at index 0: the instruction takes .s32 coordinates, and 4294967360 would address 64}}
  // expected-note@+1 {{a tensor map cannot reach that far along one dim: pass the kernel a view of the array that starts at index 4294967360 of dim 0 (on the host, a slice), and index it from 0 there}}
  copy.async_copy %x[%big, %c0] to %buf barrier %bar[%c0] : memref<?x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: K4
// fix: s|%far = arith.constant -2147483652 : index|%far = arith.constant -2147483648 : index|
// A load whose innermost coordinate is below -2^31 (a multiple of 16 bytes, TR12's rule).
func.func @k4_load_coordinate_below_32_bits(%x: memref<?x64xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %far = arith.constant -2147483652 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected the coordinates of a TMA copy in the signed 32-bit range [-2147483648, 2147483647], got -2147483652 at index 1: the instruction takes .s32 coordinates, and -2147483652 would address 2147483644}}
  // expected-note@+1 {{the box lies wholly before the array (a load reads only the OOB fill): start it at -2147483648 or more}}
  copy.async_copy %x[%c0, %far] to %buf barrier %bar[%c0] : memref<?x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: K4
// fix: s|%big = arith.constant 2147483648 : index|%big = arith.constant 0 : index|
// A store at row 2^31: the first row a .s32 coordinate cannot name.
func.func @k4_store_coordinate_beyond_32_bits(%x: memref<?x64xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %big = arith.constant 2147483648 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{Expected the coordinates of a TMA copy in the signed 32-bit range [-2147483648, 2147483647], got 2147483648 at index 0: the instruction takes .s32 coordinates, and 2147483648 would address -2147483648}}
  // expected-note@+1 {{pass the kernel a view of the array that starts at index 2147483648 of dim 0}}
  copy.async_copy %buf to %x[%big, %c0] : memref<64x64xf32, #copy.smem> to memref<?x64xf32>
  func.return
}

// -----

// rule: TR15
// fix: s|oob nan|oob zeros|
func.func @tr15_nan_fill_of_integers(%x: memref<256x256xi32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xi32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{oob nan needs a floating-point element type, got i32}}
  // expected-note@+1 {{use oob zeros}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] oob nan : memref<256x256xi32> to memref<64x64xi32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: TR19
// fix: s|%x: memref<3xf32>|%x: memref<4xf32>|
// fix: s|to memref<3xf32>|to memref<4xf32>|
func.func @tr19_store_into_a_12_byte_tensor(%x: memref<3xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<16xf32, #copy.smem>
  // The store is clipped at the 3 elements, but writes the whole 16-byte chunk: the f32 after
  // the tensor is overwritten (an H200 did).
  // expected-error@+2 {{a TMA store or reduction writes whole 16-byte chunks: expected the innermost GMEM extent to be a multiple of 16 bytes, got 3 elements of f32 (12 bytes), which overwrites 4 bytes after each innermost row}}
  // expected-note@+1 {{pad the innermost dimension to a multiple of 4 elements (here 4: memref<4xf32>), or store the elements with threads (memref.store)}}
  copy.async_copy %buf to %x[%c0] : memref<16xf32, #copy.smem> to memref<3xf32>
  func.return
}

// -----

// rule: TR19
// fix: s|%x: memref<64x3xf32, strided<[4, 1]>>|%x: memref<64x4xf32, strided<[4, 1]>>|
// fix: s|to memref<64x3xf32, strided<[4, 1]>>|to memref<64x4xf32, strided<[4, 1]>>|
func.func @tr19_reduce_into_3_columns_of_a_wider_array(%x: memref<64x3xf32, strided<[4, 1]>>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x4xf32, #copy.smem>
  // Rows 16 bytes apart (C1 holds), 12 bytes wide: each row's chunk overwrites column 3.
  // expected-error@+2 {{expected the innermost GMEM extent to be a multiple of 16 bytes, got 3 elements of f32 (12 bytes)}}
  // expected-note@+1 {{pad the innermost dimension to a multiple of 4 elements (here 4: memref<64x4xf32, strided<[4, 1]>>)}}
  copy.async_copy %buf to %x[%c0, %c0] reduce add : memref<64x4xf32, #copy.smem> to memref<64x3xf32, strided<[4, 1]>>
  func.return
}

// -----

// rule: TR19
// fix: s|%x: memref<100x10xi8>|%x: memref<100x16xi8>|
// fix: s|to memref<100x10xi8>|to memref<100x16xi8>|
func.func @tr19_store_into_10_byte_rows(%x: memref<100x10xi8>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x16xi8, #copy.smem>
  // Contiguous 10-byte rows also break C1 (row stride 10); TR19, whose fix mends both, is
  // the one reported.
  // expected-error@+2 {{got 10 elements of i8 (10 bytes), which overwrites 6 bytes after each innermost row}}
  // expected-note@+1 {{pad the innermost dimension to a multiple of 16 elements (here 16: memref<100x16xi8>)}}
  copy.async_copy %buf to %x[%c0, %c0] : memref<64x16xi8, #copy.smem> to memref<100x10xi8>
  func.return
}

// -----

// rule: D5, TR11
// fix: s|memref<8x32xf32, #copy.smem<swizzle = 128>>|memref<16x32xf32, #copy.smem<swizzle = 128>>|
// fix: s|memref<8x32xf32, #copy.smem<swizzle = 128>>|memref<16x32xf32, #copy.smem<swizzle = 128>>|
func.func @d5_multicast_share_breaks_the_swizzle_period(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<8x32xf32, #copy.smem<swizzle = 128>>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{each CTA's share of the multicast box is 512 bytes, not a multiple of the 1024 bytes TMA needs its SMEM destination aligned to}}
  // expected-note@+1 {{make the box's share per CTA ([4, 32]) a multiple of 1024 bytes}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {collective = array<i64: 0>} : memref<256x256xf32> to memref<8x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<1>
  func.return
}

// -----

// rule: H2
// fix: s|memref<64x301xf16>|memref<64x302xf16>|
// fix: s|memref<64x301xf16>|memref<64x302xf16>|
func.func @h2_cp_async_rows_not_4_byte_aligned(%x: memref<64x301xf16>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<8x64xf16, #copy.smem>
  // expected-error@+2 {{CP_ASYNC requires at least 4 bytes per transfer}}
  // expected-note@+1 {{the GMEM rows are 602 bytes apart}}
  copy.async_copy %x[%c0, %c0] to %buf : memref<64x301xf16> to memref<8x64xf16, #copy.smem>
  func.return
}

// -----

// rule: C1
// fix: s|memref<100x300xf16>|memref<100x300xf16, strided<[304, 1]>>|
// fix: s|memref<100x300xf16>|memref<100x300xf16, strided<[304, 1]>>|
func.func @c1_contiguous_rows_not_16_bytes(%x: memref<100x300xf16>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{async_copy requires all GMEM strides except the last one to be a multiple of 16 bytes}}
  // expected-note@+1 {{the rows of memref<100x300xf16> are 600 bytes apart}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<100x300xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: C1
// fix: s|memref<4x8x3xf32>|memref<4x8x3xf32, strided<[32, 4, 1]>>|
// fix: s|memref<4x8x3xf32>|memref<4x8x3xf32, strided<[32, 4, 1]>>|
// A 3-D ref: the note's layout has a stride per dim, the outer one scaled with the rows.
func.func @c1_contiguous_rows_not_16_bytes_3d(%x: memref<4x8x3xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<8x4xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{async_copy requires all GMEM strides except the last one to be a multiple of 16 bytes}}
  // expected-note@+1 {{the rows of memref<4x8x3xf32> are 12 bytes apart: pad them to 4 elements, a multiple of 16 bytes (memref<4x8x3xf32, strided<[32, 4, 1]>>)}}
  copy.async_copy %x[%c0, %c0, %c0] to %buf barrier %bar[%c0] : memref<4x8x3xf32> to memref<8x4xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: B10
// fix: s|strided<[4, 1]>|strided<[32, 4, 1]>|
// fix: s|strided<[4, 1]>|strided<[32, 4, 1]>|
// A layout of 2 strides on a 3-D ref (what the C1 note above used to suggest).
func.func @b10_fewer_strides_than_dims(%x: memref<4x8x3xf32, strided<[4, 1]>>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<8x4xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected one stride per dim in the layout of memref<4x8x3xf32, strided<[4, 1]>> (3), got 2}}
  // expected-note@+1 {{give every dim its stride, outermost first, e.g. the row-major memref<4x8x3xf32, strided<[32, 4, 1]>>}}
  copy.async_copy %x[%c0, %c0, %c0] to %buf barrier %bar[%c0] : memref<4x8x3xf32, strided<[4, 1]>> to memref<8x4xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: C1
// fix: s|strided<[300, 1]>|strided<[304, 1]>|
// fix: s|strided<[300, 1]>|strided<[304, 1]>|
func.func @c1_store_rows_not_16_bytes(%x: memref<100x296xf16, strided<[300, 1]>>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  // 592-byte rows (TR19 holds) 600 bytes apart.
  // expected-error@+2 {{async_copy requires all GMEM strides except the last one to be a multiple of 16 bytes}}
  // expected-note@+1 {{stride 0 is 300 elements = 600 bytes; pad it to 304 elements, a multiple of 16 bytes}}
  copy.async_copy %buf to %x[%c0, %c0] : memref<64x64xf16, #copy.smem> to memref<100x296xf16, strided<[300, 1]>>
  func.return
}

// -----

// rule: H2
// fix: s|%c3 = arith.constant 3 : index|%c3 = arith.constant 2 : index|
func.func @h2_cp_async_coordinate_not_4_byte_aligned(%x: memref<64x256xf16>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %buf = copy.alloc_smem : memref<8x64xf16, #copy.smem>
  // expected-error@+2 {{CP_ASYNC requires at least 4 bytes per transfer}}
  // expected-note@+1 {{the innermost coordinate 3 starts 6 bytes into a row}}
  copy.async_copy %x[%c0, %c3] to %buf : memref<64x256xf16> to memref<8x64xf16, #copy.smem>
  func.return
}

// -----

// rule: D13
// fix: s|array<i64: 3>|array<i64: 0>|
func.func @d13_collective_dim_not_a_cluster_dim(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{collective dims are cluster dims 0 (x), 1 (y) or 2 (z), got [3]}}
  // expected-note@+1 {{name each cluster dimension the copy is shared over once: 0 (x), 1 (y), 2 (z)}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {collective = array<i64: 3>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// A cache mode on a TMA copy was accepted and dropped (issue S): it is cp.async's.
// rule: AT3
// fix: s| cache cg||
func.func @at3_cache_on_a_tma_copy(%x: memref<4096x4096xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected no cache mode on a tma copy, got cache cg: the cache mode is cp.async's cache operator (.ca, .cg), which the copy would drop}}
  // expected-note@+1 {{drop cache cg, or use impl cp_async}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] cache cg : memref<4096x4096xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// A swizzle on a cp.async copy was accepted and dropped, whatever its value: cp.async has no
// tensor map.
// rule: AT3
// fix: s| {swizzle = 128 : i64}||
func.func @at3_swizzle_on_a_cp_async_copy(%x: memref<1000x256xf16>, %i: index) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<32x256xf16, #copy.smem>
  // expected-error@+2 {{Expected no swizzle attribute on a cp_async copy, got swizzle = 128: it states a TMA copy's tensor-map swizzle, and a cp_async copy has no tensor map}}
  // expected-note@+1 {{drop swizzle = 128 (the SMEM buffer's type, #copy.smem<swizzle = N>, is its layout)}}
  copy.async_copy %x[%i, %c0] to %buf oob promise_in_bounds {swizzle = 128 : i64} : memref<1000x256xf16> to memref<32x256xf16, #copy.smem>
  func.return
}

// -----

// A store has no barrier: an arrive on it was dropped.
// rule: AT3
// fix: s| {arrive = false}||
func.func @at3_arrive_on_a_store(%y: memref<4096x4096xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{Expected no arrive attribute on a copy without a barrier, got arrive = false: it says whether the copy arrives on its barrier}}
  // expected-note@+1 {{drop arrive = false}}
  copy.async_copy %buf to %y[%c0, %c0] {arrive = false} : memref<64x64xf32, #copy.smem> to memref<4096x4096xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}
