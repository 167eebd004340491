// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid copy.ldmatrix / copy.stmatrix per chunk, named after the rule it breaks
// (`// rule:` gives the id in copy_dialect/rules.toml), with the fix its note gives.

// rule: LM1
// fix: s|%g[%r, %c] num 1 : memref<32x64xf16> -> vector<1xi32>|%s[%r, %c] num 1 : memref<32x64xf16, #copy.smem> -> vector<1xi32>|
func.func @lm1_ldmatrix_of_gmem(%g: memref<32x64xf16>, %r: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %c = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x64xf16, #copy.smem>
  // expected-error@+2 {{'copy.ldmatrix' op reads SMEM, got a ref in GMEM}}
  // expected-note@+1 {{give it a buffer of copy.alloc_smem}}
  %v = copy.ldmatrix %g[%r, %c] num 1 : memref<32x64xf16> -> vector<1xi32>
  func.return
}

// -----

// rule: LM2
// fix: s|num 3 : memref<32x64xf16, #copy.smem> -> vector<3xi32>|num 2 : memref<32x64xf16, #copy.smem> -> vector<2xi32>|
func.func @lm2_three_matrices(%r: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x64xf16, #copy.smem>
  // expected-error@+2 {{num must be 1, 2 or 4 for shape m8n8, got 3}}
  // expected-note@+1 {{num is the number of m8n8 matrices (.x1, .x2, .x4): use num 2}}
  %v = copy.ldmatrix %s[%r, %c0] num 3 : memref<32x64xf16, #copy.smem> -> vector<3xi32>
  func.return
}

// -----

// rule: LM2
// fix: s|num 4 trans : memref<32x64xi8, #copy.smem> -> vector<8xi32>|num 2 trans : memref<32x64xi8, #copy.smem> -> vector<4xi32>|
func.func @lm2_four_m16n16(%r: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x64xi8, #copy.smem>
  // expected-error@+2 {{num must be 1 or 2 for shape m16n16, got 4}}
  // expected-note@+1 {{use num 2}}
  %v = copy.ldmatrix %s[%r, %c0] shape m16n16 num 4 trans : memref<32x64xi8, #copy.smem> -> vector<8xi32>
  func.return
}

// -----

// rule: LM2
// fix: s|%s[%c0] num 1|%s[%c0, %c0] num 1|
func.func @lm2_one_index_of_two(%r: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %s = copy.alloc_smem : memref<32x64xf16, #copy.smem>
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{expected 2 indices into memref<32x64xf16, #copy.smem>, got 1}}
  // expected-note@+1 {{give one index per dim of the buffer}}
  %v = copy.ldmatrix %s[%c0] num 1 : memref<32x64xf16, #copy.smem> -> vector<1xi32>
  func.return
}

// -----

// rule: LM3
// fix: s|memref<32x64xf32, #copy.smem>|memref<32x64xf16, #copy.smem>|
// fix: s|memref<32x64xf32, #copy.smem>|memref<32x64xf16, #copy.smem>|
func.func @lm3_f32_matrix(%r: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x64xf32, #copy.smem>
  // expected-error@+2 {{shape m8n8 moves 16-bit elements, but the buffer holds f32}}
  // expected-note@+1 {{use a buffer of 16-bit elements}}
  %v = copy.ldmatrix %s[%r, %c0] num 1 : memref<32x64xf32, #copy.smem> -> vector<1xi32>
  func.return
}

// -----

// rule: LM3
// fix: s| num 1 : memref<32x64xi8| shape m16n16 num 1 trans : memref<32x64xi8|
// fix: s|vector<1xi32>|vector<2xi32>|
func.func @lm3_i8_as_m8n8(%r: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x64xi8, #copy.smem>
  // expected-error@+2 {{shape m8n8 moves 16-bit elements, but the buffer holds i8}}
  // expected-note@+1 {{use shape m16n16 for a buffer of 8-bit elements}}
  %v = copy.ldmatrix %s[%r, %c0] num 1 : memref<32x64xi8, #copy.smem> -> vector<1xi32>
  func.return
}

// -----

// rule: LM3
// fix: s|shape m16n8|shape m16n16|
// fix: s|vector<1xi32>|vector<2xi32>|
func.func @lm3_ldmatrix_m16n8(%r: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x64xi8, #copy.smem>
  // expected-error@+2 {{'copy.ldmatrix' op has no shape m16n8 (PTX: .m8n8 or .m16n16)}}
  // expected-note@+1 {{use shape m16n16 for 8-bit matrices}}
  %v = copy.ldmatrix %s[%r, %c0] shape m16n8 num 1 trans : memref<32x64xi8, #copy.smem> -> vector<1xi32>
  func.return
}

// -----

// rule: LM3
// fix: s| format b4x16_p64||
func.func @lm3_format_of_m8n8(%r: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x64xf16, #copy.smem>
  // expected-error@+2 {{format b4x16_p64 widens the sources of 8-bit matrices: it needs shape m16n16, got m8n8}}
  // expected-note@+1 {{drop format}}
  %v = copy.ldmatrix %s[%r, %c0] num 1 format b4x16_p64 : memref<32x64xf16, #copy.smem> -> vector<1xi32>
  func.return
}

// -----

// rule: LM4
// fix: s|num 2 :|num 2 trans :|
func.func @lm4_m16n8_untransposed(%r: index, %v: vector<2xi32>) attributes {copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x64xi8, #copy.smem>
  // expected-error@+2 {{shape m16n8 is transposed: it needs trans (PTX: .trans is mandatory for 16x8 matrices)}}
  // expected-note@+1 {{add trans}}
  copy.stmatrix %v, %s[%r, %c0] shape m16n8 num 2 : vector<2xi32>, memref<32x64xi8, #copy.smem>
  func.return
}

// -----

// rule: LM5
// fix: s|memref<32x4xf16, #copy.smem>|memref<32x8xf16, #copy.smem>|
// fix: s|memref<32x4xf16, #copy.smem>|memref<32x8xf16, #copy.smem>|
func.func @lm5_rows_of_8_bytes(%r: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x4xf16, #copy.smem>
  // expected-error@+2 {{a matrix row is 16 contiguous bytes of the buffer's innermost dim, but memref<32x4xf16, #copy.smem> has none}}
  // expected-note@+1 {{use a buffer whose innermost dim holds at least 8 f16 elements}}
  %v = copy.ldmatrix %s[%r, %c0] num 1 : memref<32x4xf16, #copy.smem> -> vector<1xi32>
  func.return
}

// -----

// rule: LM5
// fix: s|%col = arith.constant 64|%col = arith.constant 56|
func.func @lm5_row_past_the_end(%r: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %col = arith.constant 64 : index
  %s = copy.alloc_smem : memref<32x64xf16, #copy.smem>
  // expected-error@+2 {{the thread's 16-byte row from column 64 runs past the buffer's 64-element row}}
  // expected-note@+1 {{start the row at a column of at most 56}}
  %v = copy.ldmatrix %s[%r, %col] num 1 : memref<32x64xf16, #copy.smem> -> vector<1xi32>
  func.return
}

// -----

// rule: LM6
// fix: s|%c4 = arith.constant 4|%c4 = arith.constant 8|
func.func @lm6_unaligned_row(%r: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %col = arith.muli %r, %c4 : index
  %s = copy.alloc_smem : memref<32x64xf16, #copy.smem>
  // expected-error@+2 {{a matrix row's address must be 16-byte aligned, but the element offset of the indices is known to be a multiple of 8 bytes only}}
  // expected-note@+1 {{compute the innermost index as a multiple of 8 (e.g. arith.muli by 8)}}
  %v = copy.ldmatrix %s[%r, %col] num 1 : memref<32x64xf16, #copy.smem> -> vector<1xi32>
  func.return
}

// -----

// rule: LM7
// fix: s|%c4 = arith.constant 4|%c4 = arith.constant 8|
func.func @lm7_row_across_units(%r: index, %v: vector<8xbf16>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %s = copy.alloc_smem : memref<32x64xbf16, #copy.smem<swizzle = 128>>
  // expected-error@+2 {{under a 128B swizzle a matrix row must be one whole 16-byte unit (only a unit stays contiguous), but the indices' offset in the swizzled layout is known to be a multiple of 8 bytes only}}
  // expected-note@+1 {{start each row at an innermost index that is a multiple of 8 (e.g. arith.muli by 8)}}
  copy.stmatrix %v, %s[%r, %c4] num 4 : vector<8xbf16>, memref<32x64xbf16, #copy.smem<swizzle = 128>>
  func.return
}

// -----

// rule: LM8
// fix: s|vector<4xf16>|vector<8xf16>|
func.func @lm8_half_the_registers(%r: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x64xf16, #copy.smem>
  // expected-error@+2 {{expected the result to be vector<4xi32> or vector<8xf16> (num 4 of m8n8: 4 32-bit registers a thread), got vector<4xf16>}}
  // expected-note@+1 {{use vector<4xi32>, or vector<8xf16> for the same bits as the buffer's elements}}
  %v = copy.ldmatrix %s[%r, %c0] num 4 : memref<32x64xf16, #copy.smem> -> vector<4xf16>
  func.return
}

// -----

// rule: LM8
// fix: s|%v: vector<4xf32>|%v: vector<4xi32>|
// fix: s|vector<4xf32>, memref|vector<4xi32>, memref|
func.func @lm8_f32_registers(%r: index, %v: vector<4xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x64xbf16, #copy.smem>
  // expected-error@+2 {{expected the value to be vector<4xi32> or vector<8xbf16> (num 4 of m8n8: 4 32-bit registers a thread), got vector<4xf32>}}
  // expected-note@+1 {{use vector<4xi32>}}
  copy.stmatrix %v, %s[%r, %c0] num 4 : vector<4xf32>, memref<32x64xbf16, #copy.smem>
  func.return
}

// -----

// rule: LM9
// fix: s|"sm_80"|"sm_90a"|
func.func @lm9_stmatrix_on_ampere(%r: index, %v: vector<1xi32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x64xf16, #copy.smem>
  // expected-error@+2 {{'copy.stmatrix' op needs a target with stmatrix (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{set copy.target to one of sm_90, sm_90a}}
  copy.stmatrix %v, %s[%r, %c0] num 1 : vector<1xi32>, memref<32x64xf16, #copy.smem>
  func.return
}

// -----

// rule: LM10
// fix: s|"sm_90a"|"sm_100a"|
func.func @lm10_b8_on_hopper(%r: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x64xi8, #copy.smem>
  // expected-error@+2 {{'copy.ldmatrix' op with shape m16n16 needs a target with 8-bit ldmatrix/stmatrix (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120a), but the target is sm_90a}}
  // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120a}}
  %v = copy.ldmatrix %s[%r, %c0] shape m16n16 num 1 trans : memref<32x64xi8, #copy.smem> -> vector<2xi32>
  func.return
}

// -----

// rule: LM10
// fix: s|"sm_120"|"sm_120a"|
func.func @lm10_b8_on_portable_blackwell(%r: index, %v: vector<1xi32>) attributes {copy.target = #copy.target<"sm_120">} {
  %c0 = arith.constant 0 : index
  %s = copy.alloc_smem : memref<32x64xi8, #copy.smem>
  // expected-error@+2 {{but the target is sm_120}}
  // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120a}}
  copy.stmatrix %v, %s[%r, %c0] shape m16n8 num 1 trans : vector<1xi32>, memref<32x64xi8, #copy.smem>
  func.return
}

// -----

// rule: F8
// fix: s|%c32 = arith.constant 32 : index|%c32 = arith.constant 31 : index|
func.func @f8_ldmatrix_row_past_the_buffer(%c: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %s = copy.alloc_smem : memref<32x64xf16, #copy.smem>
  // expected-error@+2 {{expected the SMEM element index along dim 0 in [0, 32), found the constant 32: it lies outside memref<32x64xf16, #copy.smem>}}
  // expected-note@+1 {{dim 0 of the buffer has 32 entries (its indices are 0 to 31): index inside it, or allocate a buffer of 33 along dim 0}}
  %v = copy.ldmatrix %s[%c32, %c0] num 1 : memref<32x64xf16, #copy.smem> -> vector<1xi32>
  func.return
}
