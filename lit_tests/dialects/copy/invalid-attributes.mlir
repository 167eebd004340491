// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid attribute or type per chunk (#copy.target, #copy.smem, !copy.barrier), named
// after the rule it breaks (`// rule:` gives the id in copy_dialect/rules.toml). The checks:
// copy_dialect/attributes.py.
// `// fix: s|OLD|NEW|` lines give the edit the note describes (or `// fix: none -- why`);
// tests/tools/test_fix_notes.py applies them and checks that the result verifies.

// rule: C6
// fix: s|swizzle = 48|swizzle = 64|
func.func @c6_unsupported_swizzle() {
  // expected-error@+2 {{Unsupported swizzle: 48}}
  // expected-note@+1 {{16 (none), 32, 64 or 128 bytes}}
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem<swizzle = 48>>
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

// fix: s|"sm_75"|"sm_90a"|
// expected-error@+2 {{unknown target 'sm_75'}}
// expected-note@+1 {{expected one of sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a}}
func.func @unknown_target() attributes {copy.target = #copy.target<"sm_75">} {
  copy.fence_async_shared
  func.return
}
