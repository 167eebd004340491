// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid copy.alloc_smem or copy.fence_async_shared per chunk, named after the rule it
// breaks (`// rule:` gives the id in copy_dialect/rules.toml). The checks: copy_dialect/smem.py.
// `// fix: s|OLD|NEW|` lines give the edit the note describes (or `// fix: none -- why`);
// tests/tools/test_fix_notes.py applies them and checks that the result verifies.

// rule: A1
// fix: s|copy.fence_async_shared||
func.func @a1_fence_before_sm90() attributes {copy.target = #copy.target<"sm_89">} {
  // expected-error@+2 {{'copy.fence_async_shared' op needs a target with fence.proxy.async (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_89}}
  // expected-note@+1 {{no fence is needed there}}
  copy.fence_async_shared
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

// fix: s|memref<64x64xf32>|memref<64x64xf32, #copy.smem>|
func.func @alloc_smem_in_gmem() {
  // expected-error@+2 {{copy.alloc_smem allocates SMEM, got a ref in GMEM}}
  // expected-note@+1 {{#copy.smem}}
  %buf = copy.alloc_smem : memref<64x64xf32>
  func.return
}

// -----

// rule: TR6
// fix: none -- which buffers to shrink is the kernel author's choice, as in tr6_smem_above_the_block_limit
func.func @tr6_barriers_first_and_a_buffer_in_a_branch(%p: i1) attributes {copy.target = #copy.target<"sm_90a">} {
  // The whole kernel's arena counts, in the order the lowering lays it out: the barrier group
  // first (its op reports), then the buffer allocated inside the scf.if.
  // expected-error@+2 {{the kernel's SMEM buffers and barriers take 262272 bytes (263296 with the 1024-byte alignment pad of the arena), more than the 232448 bytes a block can use on sm_90a}}
  // expected-note@+1 {{use fewer pipeline stages or smaller boxes}}
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  scf.if %p {
    %a = copy.alloc_smem : memref<4x128x128xf32, #copy.smem>
  }
  func.return
}

// -----

// rule: C16
// fix: s|{alignment = 384 : i64} ||
func.func @c16_alignment_not_a_power_of_two() attributes {copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{alignment must be a power of 2, got 384}}
  // expected-note@+1 {{drop alignment to get the one TMA needs}}
  %buf = copy.alloc_smem {alignment = 384 : i64} : memref<64x64xf32, #copy.smem>
  func.return
}
