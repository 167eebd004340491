// RUN: copy-opt %s --split-input-file --verify-diagnostics --no-verify-protocol

// One copy.async_copy or copy.prefetch with a bad L2 cache policy or promotion per chunk,
// named after the rule it breaks (`// rule:` gives the id in copy_dialect/rules.toml). The
// checks: copy_dialect/copies.py (`_verify_l2`) and copy_dialect/l2_policy.py. `// fix: s|OLD|NEW|` lines give the edit
// the note describes; tests/tools/test_fix_notes.py applies them and checks that the result
// verifies.

// rule: L1
// fix: s|{cache_hint = 7 : i64}|l2 evict_first|
func.func @l1_raw_cache_hint_not_a_policy(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected cache_hint to be an L2 cache policy, got 0x7, which is none of the policies createpolicy makes (evict_normal 0x1000000000000000, evict_first 0x12f0000000000000, evict_last 0x14f0000000000000)}}
  // expected-note@+1 {{drop the cache_hint attribute and name the policy: l2 evict_normal, l2 evict_first, l2 evict_last, l2 evict_unchanged}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {cache_hint = 7 : i64} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: L2
// fix: s| {cache_hint = 1364590687093260288 : i64}||
func.func @l2_named_and_raw_policy(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected one L2 cache policy, got l2 evict_last and cache_hint = 0x12f0000000000000}}
  // expected-note@+1 {{drop the cache_hint attribute: l2 names the policy}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] l2 evict_last {cache_hint = 1364590687093260288 : i64} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: L3
// fix: s| l2 evict_first||
func.func @l3_policy_on_cp_async(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{Expected no L2 cache policy on a cp.async copy: the cp.async lowering has no cache-hint operand}}
  // expected-note@+1 {{drop the L2 policy (l2 / cache_hint), or use impl tma on sm_90 or newer}}
  copy.async_copy %x[%c0, %c0] to %buf l2 evict_first : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: L4
// fix: s|fraction 1.5|fraction 0.5|
func.func @l4_fraction_above_one(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected an L2 policy fraction in (0, 1] (as an f32), got 1.5}}
  // expected-note@+1 {{give the share of accesses that get the primary priority, e.g. fraction 0.5 (1.0 for all of them)}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] l2 evict_last fraction 1.5 : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: L4
// fix: s|fraction 0.0|fraction 0.5|
func.func @l4_prefetch_fraction_zero(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{Expected an L2 policy fraction in (0, 1] (as an f32), got 0.0}}
  // expected-note@+1 {{give the share of accesses that get the primary priority, e.g. fraction 0.5 (1.0 for all of them)}}
  copy.prefetch %x[%c0, %c0] l2 evict_first fraction 0.0 {box = array<i64: 64, 64>} : memref<256x256xf32>
  func.return
}

// -----

// rule: L5
// fix: s|secondary evict_last|secondary evict_first|
func.func @l5_secondary_not_first_or_unchanged(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected the secondary L2 priority to be evict_first or evict_unchanged, got evict_last}}
  // expected-note@+1 {{use secondary evict_first or secondary evict_unchanged (createpolicy takes no other)}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] l2 evict_normal fraction 0.5 secondary evict_last : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: L6
// fix: s|fraction 0.5|l2 evict_last fraction 0.5|
func.func @l6_fraction_without_primary(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected l2 <priority> before fraction, got a fraction without a primary L2 cache priority}}
  // expected-note@+1 {{name the primary priority first: l2 evict_last fraction ...}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] fraction 0.5 : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: L7
// fix: s|l2 evict_last secondary|l2 evict_last fraction 0.5 secondary|
func.func @l7_secondary_without_fraction(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected a fraction below 1 with secondary evict_first, got none (1.0): every access gets the primary priority}}
  // expected-note@+1 {{give the share of the primary priority, e.g. fraction 0.5, or drop the secondary priority}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] l2 evict_last secondary evict_first : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: L8
// fix: s|l2_promotion = 32|l2_promotion = 256|
func.func @l8_promotion_not_a_driver_value(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected l2_promotion to be one of 0, 64, 128, 256 (bytes; 0 for none), got 32}}
  // expected-note@+1 {{use l2_promotion = 64, 128 or 256, or 0 for none (the default is 128)}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {l2_promotion = 32 : i64} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: L9
// fix: s| {l2_promotion = 64 : i64}||
func.func @l9_promotion_on_cp_async(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{Expected no l2_promotion on a cp.async copy: it is a property of a TMA copy's tensor map}}
  // expected-note@+1 {{drop l2_promotion, or use impl tma on sm_90 or newer}}
  copy.async_copy %x[%c0, %c0] to %buf {l2_promotion = 64 : i64} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: L9
// fix: s| {l2_promotion = 256 : i64}||
func.func @l9_promotion_on_bulk_copy(%x: memref<64x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<4x256xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected no l2_promotion on a bulk copy: it is a property of a TMA copy's tensor map}}
  // expected-note@+1 {{drop l2_promotion, or use impl tma on sm_90 or newer}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds {l2_promotion = 256 : i64} : memref<64x256xf32> to memref<4x256xf32, #copy.smem>, !copy.barrier<1>
  func.return
}
