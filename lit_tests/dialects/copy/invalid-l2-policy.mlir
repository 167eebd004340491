// RUN: copy-opt %s --split-input-file --verify-diagnostics --no-verify-protocol

// One copy.async_copy with a bad L2 cache policy per chunk, named after the rule it breaks
// (`// rule:` gives the id in copy_dialect/rules.toml). The checks: copy_dialect/copies.py
// (`_verify_l2`). `// fix: s|OLD|NEW|` lines give the edit the note describes;
// tests/test_fix_notes.py applies them and checks that the result verifies.

// rule: L1
// fix: s|{cache_hint = 7 : i64}|l2 evict_first|
func.func @l1_raw_cache_hint_not_a_policy(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected cache_hint to be an L2 cache policy, got 0x7, which is none of the policies createpolicy makes (evict_normal 0x1000000000000000, evict_first 0x12f0000000000000, evict_last 0x14f0000000000000)}}
  // expected-note@+1 {{drop the cache_hint attribute and name the policy: l2 evict_normal, l2 evict_first, l2 evict_last}}
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
