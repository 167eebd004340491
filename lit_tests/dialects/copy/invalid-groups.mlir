// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid copy.commit_group or copy.wait_group per chunk, named after the rule it breaks
// (`// rule:` gives the id in copy_dialect/rules.toml). The checks: copy_dialect/groups.py.
// `// fix: s|OLD|NEW|` lines give the edit the note describes (or `// fix: none -- why`);
// tests/tools/test_fix_notes.py applies them and checks that the result verifies.

// rule: A1
// fix: s|commit_group bulk|commit_group cp_async|
func.func @a1_bulk_group_before_sm90() attributes {copy.target = #copy.target<"sm_80">} {
  // expected-error@+2 {{'copy.commit_group' op with bulk needs a target with bulk groups (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{use copy.commit_group cp_async}}
  copy.commit_group bulk
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

// rule: I11
// fix: s| read_only||
func.func @wait_group_read_only_cp_async() attributes {copy.target = #copy.target<"sm_80">} {
  // expected-error@+2 {{read_only applies to bulk groups only}}
  // expected-note@+1 {{drop read_only}}
  copy.wait_group cp_async 0 read_only
  func.return
}

// -----

// rule: I10
// fix: s|bulk 64|bulk 63|
func.func @i10_wait_group_pending_above_63() attributes {copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{pending must be in [0, 63], got 64}}
  // expected-note@+1 {{it counts committed groups still allowed in flight: use 0 to 63}}
  copy.wait_group bulk 64
  func.return
}
