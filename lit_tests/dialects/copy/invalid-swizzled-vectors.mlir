// RUN: copy-opt %s --split-input-file --verify-diagnostics

// Vector accesses of swizzled SMEM that may cross a 16-byte unit (rule SV1, a kernel rule:
// vector.load/store are upstream ops); one per chunk, with the fix its note gives.
// lit_tests/passes/swizzled-vector-ptx.mlir has the accesses that stay in one unit.

// rule: SV1
// fix: s|vector<16xbf16>|vector<8xbf16>|
func.func @sv1_32_bytes(%r: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<64x64xbf16, #copy.smem<swizzle = 128>>
  // expected-error@+2 {{a vector access of 128B-swizzled SMEM must stay inside one 16-byte unit (the swizzle moves units apart), but this 32-byte access may cross one: 32 bytes do not fit one 16-byte unit}}
  // expected-note@+1 {{access at most 16 bytes at an innermost index that is a multiple of the vector's length (e.g. vector<8xbf16> at a column computed with arith.muli by 8), or use memref.load/store}}
  %v = vector.load %s[%r, %c0] : memref<64x64xbf16, #copy.smem<swizzle = 128>>, vector<16xbf16>
  func.return
}

// -----

// rule: SV1
// fix: s|%c6 = arith.constant 6|%c6 = arith.constant 4|
func.func @sv1_across_units(%r: index, %v: vector<4xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c6 = arith.constant 6 : index
  %s = copy.alloc_smem : memref<64x32xf32, #copy.smem<swizzle = 128>>
  // expected-error@+2 {{but this 16-byte access may cross one: its offset is known to be a multiple of 8 bytes only, not of 16}}
  // expected-note@+1 {{e.g. vector<4xf32> at a column computed with arith.muli by 4}}
  vector.store %v, %s[%r, %c6] : memref<64x32xf32, #copy.smem<swizzle = 128>>, vector<4xf32>
  func.return
}

// -----

// rule: SV1
// fix: s|%c2 = arith.constant 2|%c2 = arith.constant 4|
func.func @sv1_unknown_column(%r: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %col = arith.muli %r, %c2 : index
  %s = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 64>>
  // expected-error@+2 {{a vector access of 64B-swizzled SMEM must stay inside one 16-byte unit (the swizzle moves units apart), but this 8-byte access may cross one: its offset is known to be a multiple of 4 bytes only, not of 8}}
  // expected-note@+1 {{arith.muli by 4}}
  %v = vector.load %s[%r, %col] : memref<64x64xf16, #copy.smem<swizzle = 64>>, vector<4xf16>
  func.return
}
