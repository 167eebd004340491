// RUN: copy-opt %s --split-input-file --verify-diagnostics --no-verify-protocol

// One bulk (non-tensor `cp.async.bulk`) copy.async_copy that breaks a rule per chunk, named
// after the rule (`// rule:` gives the id in copy_dialect/rules.toml). The checks:
// copy_dialect/bulk.py, and copy_dialect/copies.py for A1, A3. `// fix: s|OLD|NEW|` lines
// give the edit the note describes; tests/tools/test_fix_notes.py applies them and checks that the
// result verifies.

// rule: A1
// fix: s|impl bulk|impl cp_async|
// fix: s| barrier %bar[%c0]||
// fix: s|, !copy.barrier<1>||
func.func @a1_bulk_on_sm80(%x: memref<64x256xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<4x256xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{'copy.async_copy' op with impl bulk needs a target with cp.async.bulk (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{use impl cp_async without the barrier, or target sm_90 or newer}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds : memref<64x256xf32> to memref<4x256xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: A3
// fix: s|%buf = copy.alloc_smem|%bar = copy.barrier_init arrivals 1 : !copy.barrier<1> %buf = copy.alloc_smem|
// fix: s|to %buf |to %buf barrier %bar[%c0] |
// fix: s|to memref<4x256xf32, #copy.smem>|to memref<4x256xf32, #copy.smem>, !copy.barrier<1>|
func.func @a3_bulk_load_without_barrier(%x: memref<64x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<4x256xf32, #copy.smem>
  // expected-error@+2 {{Barriers are required for BULK GMEM -> SMEM copies}}
  // expected-note@+1 {{give the load a barrier (barrier %bar[%i], from copy.barrier_init) and wait on it with copy.barrier_wait}}
  copy.async_copy %x[%c0, %c0] to %buf impl bulk oob promise_in_bounds : memref<64x256xf32> to memref<4x256xf32, #copy.smem>
  func.return
}

// -----

// rule: A5
// fix: s|impl bulk|impl tma|
func.func @a5_leader_tracked_bulk(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x256xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Only the TMA implementation supports leader_tracked copies}}
  // expected-note@+1 {{use impl tma: the .cta_group::2 forms are tensor copies}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds leader_tracked <replicated> {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x256xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: BK1
// fix: s|impl bulk|impl tma|
func.func @bk1_dynamic_row(%x: memref<64x?xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<4x256xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected a GMEM ref of static strides, and static sizes in the dims the box spans whole, for a bulk copy, got memref<64x?xf32>}}
  // expected-note@+1 {{give those dims and the strides a size (only the outer dims may be dynamic), or use impl tma, whose tensor map is encoded at launch}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds : memref<64x?xf32> to memref<4x256xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: BK1
// fix: s|memref<4x64xf32, #copy.smem>|memref<4x256xf32, #copy.smem>|
// fix: s|memref<4x64xf32, #copy.smem>|memref<4x256xf32, #copy.smem>|
func.func @bk1_box_not_whole_rows(%x: memref<64x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<4x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected the box to be one contiguous range of the GMEM array for a bulk copy, got the box [4, 64] of memref<64x256xf32>, whose dim 1 copies 64 of 256 elements}}
  // expected-note@+1 {{copy whole rows (a box [4, 256]) from a row-major ref for impl bulk, or use impl tma, whose tensor map addresses any box}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds : memref<64x256xf32> to memref<4x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: BK1
// fix: s|strided<[512, 1]>|strided<[256, 1]>|
// fix: s|strided<[512, 1]>|strided<[256, 1]>|
func.func @bk1_rows_with_gaps(%x: memref<64x256xf32, strided<[512, 1]>>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<4x256xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected the box to be one contiguous range of the GMEM array for a bulk copy, got the box [4, 256] of memref<64x256xf32, strided<[512, 1]>>, whose strides leave gaps between its rows}}
  // expected-note@+1 {{copy whole rows (a box [4, 256]) from a row-major ref for impl bulk, or use impl tma, whose tensor map addresses any box}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds : memref<64x256xf32, strided<[512, 1]>> to memref<4x256xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: BK2
// fix: s|memref<3xf32, #copy.smem>|memref<4xf32, #copy.smem>|
// fix: s|memref<3xf32, #copy.smem>|memref<4xf32, #copy.smem>|
func.func @bk2_size_not_16_bytes(%x: memref<64xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<3xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected a bulk copy of a multiple of 16 bytes, got 12 bytes}}
  // expected-note@+1 {{copy a multiple of 16 bytes, a box [4] (pad the array to match), or use impl tma}}
  copy.async_copy %x[%c0] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds : memref<64xf32> to memref<3xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: BK2
// fix: s|arith.constant 1 : index|arith.constant 4 : index|
func.func @bk2_start_not_16_bytes(%x: memref<64xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = copy.alloc_smem : memref<4xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected a bulk copy to start at a multiple of 16 bytes, got an offset of 4 bytes}}
  // expected-note@+1 {{start the box at a multiple of 16 bytes into the array (a multiple of 4 elements), or use impl tma}}
  copy.async_copy %x[%c1] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds : memref<64xf32> to memref<4xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: BK2
// fix: s|impl bulk|impl tma|
func.func @bk2_dynamic_start_not_16_bytes(%x: memref<1000xf16>, %i: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<8xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected a bulk copy to start at a multiple of 16 bytes, but the dynamic coordinate of dim 0 is only known to be a multiple of 1 (2 bytes)}}
  // expected-note@+1 {{compute the coordinate as a multiple of 8 (arith.muli by a constant), or use impl tma}}
  copy.async_copy %x[%i] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds : memref<1000xf16> to memref<8xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: BK2
// fix: s|memref<12xf32, #copy.smem>|memref<16xf32, #copy.smem>|
// fix: s|memref<12xf32, #copy.smem>|memref<16xf32, #copy.smem>|
func.func @bk2_multicast_share_not_16_bytes(%x: memref<64xf32>) attributes {copy.target = #copy.target<"sm_90a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<12xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected a bulk copy of a multiple of 16 bytes, got 24 bytes per CTA (its share of the multicast box)}}
  // expected-note@+1 {{copy a multiple of 16 bytes, a box [16] (pad the array to match), or use impl tma}}
  copy.async_copy %x[%c0] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds {collective = array<i64: 0>} : memref<64xf32> to memref<12xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: BK3
// fix: s|#copy.smem<swizzle = 128>|#copy.smem|
// fix: s|#copy.smem<swizzle = 128>|#copy.smem|
func.func @bk3_swizzled_smem(%x: memref<64x32xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<8x32xf32, #copy.smem<swizzle = 128>>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected an unswizzled SMEM buffer for a bulk copy, got swizzle 128: cp.async.bulk writes bytes in order}}
  // expected-note@+1 {{use a #copy.smem buffer without swizzle, or use impl tma, whose tensor map swizzles}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds : memref<64x32xf32> to memref<8x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<1>
  func.return
}

// -----

// rule: BK4
// fix: s|impl bulk|impl bulk oob promise_in_bounds|
func.func @bk4_bulk_without_promise(%x: memref<64x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<4x256xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected oob promise_in_bounds on a bulk copy, got oob zeros: cp.async.bulk has no out-of-bounds handling}}
  // expected-note@+1 {{add oob promise_in_bounds (the box lies inside the array), or use impl tma, which zero-fills loads and clips stores}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl bulk : memref<64x256xf32> to memref<4x256xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: BK5
// fix: s|impl bulk|impl tma|
func.func @bk5_bulk_reduction(%y: memref<64x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<4x256xf32, #copy.smem>
  // expected-error@+2 {{Expected no reduction on a bulk copy, got reduce add: the dialect lowers reductions to TMA tensor reductions only}}
  // expected-note@+1 {{use impl tma for the reduction}}
  copy.async_copy %buf to %y[%c0, %c0] impl bulk reduce add oob promise_in_bounds : memref<4x256xf32, #copy.smem> to memref<64x256xf32>
  func.return
}

// -----

// rule: BK1
// fix: s|box = array<i64: 4, 64>|box = array<i64: 4, 256>|
func.func @bk1_bulk_prefetch_not_whole_rows(%x: memref<64x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{Expected the box to be one contiguous range of the GMEM array for a bulk copy, got the box [4, 64] of memref<64x256xf32>, whose dim 1 copies 64 of 256 elements}}
  // expected-note@+1 {{copy whole rows (a box [4, 256]) from a row-major ref for impl bulk, or use impl tma, whose tensor map addresses any box}}
  copy.prefetch %x[%c0, %c0] impl bulk {box = array<i64: 4, 64>} : memref<64x256xf32>
  func.return
}

// -----

// rule: BK4
// fix: s|arith.constant 62 : index|arith.constant 60 : index|
func.func @bk4_bulk_prefetch_outside(%x: memref<64x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %row = arith.constant 62 : index
  // expected-error@+2 {{Expected the bulk prefetch's box to lie inside the array, but its window [62, 66) along dim 0 leaves [0, 64)}}
  // expected-note@+1 {{start the box at 0 to 60 along dim 0, or drop impl bulk for a TMA prefetch, which skips what lies outside}}
  copy.prefetch %x[%row, %c0] impl bulk {box = array<i64: 4, 256>} : memref<64x256xf32>
  func.return
}

// -----

// rule: BK6
// fix: s|impl cp_async|impl bulk|
func.func @bk6_cp_async_prefetch(%x: memref<64x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{Expected impl tma or bulk on copy.prefetch, got impl cp_async: cp.async has no prefetch}}
  // expected-note@+1 {{use impl bulk for a box of whole rows, or drop impl for a TMA prefetch}}
  copy.prefetch %x[%c0, %c0] impl cp_async {box = array<i64: 4, 256>} : memref<64x256xf32>
  func.return
}
