// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid copy.prefetch per chunk, named after the rule it breaks (`// rule:` gives the
// id in copy_dialect/rules.toml). The checks: copy_dialect/prefetch.py and tma.py.
// `// fix: s|OLD|NEW|` lines give the edit the note describes (or `// fix: none -- why`);
// tests/tools/test_fix_notes.py applies them and checks that the result verifies.

// rule: A1
// fix: s|copy.prefetch %x[%c0, %c0] {box = array<i64: 64, 64>} : memref<256x256xf32>||
func.func @a1_prefetch_before_sm90(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_86">} {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{'copy.prefetch' op needs a target with TMA (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_86}}
  // expected-note@+1 {{drop copy.prefetch on this target}}
  copy.prefetch %x[%c0, %c0] {box = array<i64: 64, 64>} : memref<256x256xf32>
  func.return
}

// -----

// rule: B2
// fix: s|@b2_prefetch_smem()|@b2_prefetch_smem(%x: memref<64x64xf32>)|
// fix: s|copy.prefetch %buf|copy.prefetch %x|
// fix: s|{box = array<i64: 64, 64>} : memref<64x64xf32, #copy.smem>|{box = array<i64: 64, 64>} : memref<64x64xf32>|
func.func @b2_prefetch_smem() {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // expected-error@+2 {{copy.prefetch reads GMEM, got a ref in SMEM}}
  // expected-note@+1 {{prefetch a GMEM ref}}
  copy.prefetch %buf[%c0, %c0] {box = array<i64: 64, 64>} : memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// rule: C3
// fix: s|memref<2x2x2x2x2x64xf32>|memref<4x2x2x2x64xf32>|
// fix: s|memref<2x2x2x2x2x64xf32>|memref<4x2x2x2x64xf32>|
// fix: s|%x[%c0, %c0, %c0, %c0, %c0, %c0]|%x[%c0, %c0, %c0, %c0, %c0]|
// fix: s|array<i64: 2, 2, 2, 2, 2, 64>|array<i64: 4, 2, 2, 2, 64>|
func.func @c3_prefetch_box_rank_6(%x: memref<2x2x2x2x2x64xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{Async copies only support striding up to 5 dimensions}}
  // expected-note@+1 {{the box [2, 2, 2, 2, 2, 64] needs 1 to 5 dims and at most the ref's rank 6: reshape the array, e.g. to memref<4x2x2x2x64xf32> (merging leading dims)}}
  copy.prefetch %x[%c0, %c0, %c0, %c0, %c0, %c0] {box = array<i64: 2, 2, 2, 2, 2, 64>} : memref<2x2x2x2x2x64xf32>
  func.return
}

// -----

// rule: C4
// fix: s|array<i64: 64, 3>|array<i64: 64, 8>|
func.func @c4_prefetch_minor_box(%x: memref<256x256xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{Async copies require the number of bits copied along the last dimension to be divisible by 128, but got 48}}
  // expected-note@+1 {{multiple of 8 elements}}
  copy.prefetch %x[%c0, %c0] {box = array<i64: 64, 3>} : memref<256x256xbf16>
  func.return
}

// -----

// rule: C7
// fix: s|array<i64: 0, 64>|array<i64: 1, 64>|
func.func @c7_prefetch_box_dim_0(%x: memref<1024x1024xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{Async copies only support copying <=256 elements along each dimension, got 0}}
  // expected-note@+1 {{prefetch 1 to 256 elements per dimension}}
  copy.prefetch %x[%c0, %c0] {box = array<i64: 0, 64>} : memref<1024x1024xf32>
  func.return
}

// -----

// rule: C11
// fix: s|memref<64x256xi4>|memref<64x128xi8>|
// fix: s|memref<64x256xi4>|memref<64x128xi8>|
func.func @c11_prefetch_of_packed_i4(%x: memref<64x256xi4>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{unsupported TMA dtype i4}}
  // expected-note@+1 {{pack 4-bit elements into i8}}
  copy.prefetch %x[%c0, %c0] {box = array<i64: 64, 32>} : memref<64x256xi4>
  func.return
}

// -----

// rule: K1
// fix: s|%x[%c0, %c0, %c0]|%x[%c0, %c0]|
func.func @k1_prefetch_coordinates(%x: memref<256x256xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{expected 2 coordinates, but got 3}}
  // expected-note@+1 {{one index per dimension}}
  copy.prefetch %x[%c0, %c0, %c0] {box = array<i64: 64, 64>} : memref<256x256xf32>
  func.return
}

// -----

// rule: K4
// fix: s|%big = arith.constant 4294967360 : index|%big = arith.constant 0 : index|
func.func @k4_prefetch_coordinate_beyond_32_bits(%x: memref<?x256xf32>) {
  %c0 = arith.constant 0 : index
  %big = arith.constant 4294967360 : index
  // expected-error@+2 {{Expected the coordinates of a TMA prefetch in the signed 32-bit range [-2147483648, 2147483647], got 4294967360 at index 0: the instruction takes .s32 coordinates, and 4294967360 would address 64}}
  // expected-note@+1 {{pass the kernel a view of the array that starts at index 4294967360 of dim 0 (on the host, a slice), and index it from 0 there}}
  copy.prefetch %x[%big, %c0] {box = array<i64: 64, 64>} : memref<?x256xf32>
  func.return
}

// -----

// An attribute of copy.async_copy that a prefetch has no use for (it writes no SMEM) is an
// error, not ignored.
// rule: AT1
// fix: s|, bypass_l1||
func.func @at1_prefetch_bypass_l1(%x: memref<4096x4096xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{unknown attribute 'bypass_l1' on copy.prefetch, whose attributes are: box, cache_hint, implementation, l2, l2_fraction, l2_promotion, l2_secondary}}
  // expected-note@+1 {{drop 'bypass_l1'}}
  copy.prefetch %x[%c0, %c0] {box = array<i64: 64, 64>, bypass_l1} : memref<4096x4096xf32>
  func.return
}

// -----

// A prefetch's raw cache_hint (it reaches the PTX's .L2::cache_hint: cache-hint-ptx.mlir) is
// one of the policies createpolicy makes, as a copy's.
// rule: L1
// fix: s|{box = array<i64: 64, 64>, cache_hint = 7 : i64}|l2 evict_last {box = array<i64: 64, 64>}|
func.func @l1_prefetch_raw_cache_hint_not_a_policy(%x: memref<4096x4096xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{Expected cache_hint to be an L2 cache policy, got 0x7, which is none of the policies createpolicy makes (evict_normal 0x1000000000000000, evict_first 0x12f0000000000000, evict_last 0x14f0000000000000)}}
  // expected-note@+1 {{drop the cache_hint attribute and name the policy: l2 evict_normal, l2 evict_first, l2 evict_last, l2 evict_unchanged}}
  copy.prefetch %x[%c0, %c0] {box = array<i64: 64, 64>, cache_hint = 7 : i64} : memref<4096x4096xf32>
  func.return
}

// -----

// rule: L2
// fix: s|, cache_hint = 1364590687093260288 : i64||
func.func @l2_prefetch_named_and_raw_policy(%x: memref<4096x4096xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{Expected one L2 cache policy, got l2 evict_last and cache_hint = 0x12f0000000000000}}
  // expected-note@+1 {{drop the cache_hint attribute: l2 names the policy}}
  copy.prefetch %x[%c0, %c0] l2 evict_last {box = array<i64: 64, 64>, cache_hint = 1364590687093260288 : i64} : memref<4096x4096xf32>
  func.return
}
