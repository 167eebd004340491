// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid copy.matrix_descriptor per chunk, named after the rule it breaks (`// rule:`
// gives the id in copy_dialect/rules.toml), with the fix its note gives.

// rule: MD1
// fix: s|%g[%i] major k : memref<2x64x64xf16> -> i64|%s[%i] major k : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64|
func.func @md1_descriptor_of_gmem(%g: memref<2x64x64xf16>, %i: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %s = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
  // expected-error@+2 {{'copy.matrix_descriptor' op describes an SMEM tile, got a ref in GMEM}}
  // expected-note@+1 {{give it a buffer of copy.alloc_smem}}
  %d = copy.matrix_descriptor %g[%i] major k : memref<2x64x64xf16> -> i64
  func.return
}

// -----

// rule: MD2
// fix: s|memref<2x64x16xf64, #copy.smem<swizzle = 128>>|memref<2x64x64xf16, #copy.smem<swizzle = 128>>|
// fix: s|memref<2x64x16xf64, #copy.smem<swizzle = 128>>|memref<2x64x64xf16, #copy.smem<swizzle = 128>>|
func.func @md2_f64(%i: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %s = copy.alloc_smem : memref<2x64x16xf64, #copy.smem<swizzle = 128>>
  // expected-error@+2 {{wgmma reads f16, bf16, tf32 (f32), f8E4M3FN, f8E5M2 or 8-bit integer operands, got f64}}
  // expected-note@+1 {{use a buffer of one of those types}}
  %d = copy.matrix_descriptor %s[%i] major k : memref<2x64x16xf64, #copy.smem<swizzle = 128>> -> i64
  func.return
}

// -----

// rule: MD2
// fix: s|major mn|major k|
func.func @md2_transposed_fp8(%i: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %s = copy.alloc_smem : memref<2x64x128xf8E4M3FN, #copy.smem<swizzle = 128>>
  // expected-error@+2 {{major mn (a transposed operand) of wgmma needs 16-bit elements, got f8E4M3FN}}
  // expected-note@+1 {{use major k}}
  %d = copy.matrix_descriptor %s[%i] major mn : memref<2x64x128xf8E4M3FN, #copy.smem<swizzle = 128>> -> i64
  func.return
}

// -----

// rule: MD3
// fix: s|%s[] major k|%s[%slot] major k|
func.func @md3_whole_ring(%slot: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %s = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
  // expected-error@+2 {{the tile is the buffer's dims after the indices: major k under 128B swizzle it has 2 dims, got 3}}
  // expected-note@+1 {{give 1 index (the slot: [%slot])}}
  %d = copy.matrix_descriptor %s[] major k : memref<4x128x64xf16, #copy.smem<swizzle = 128>> -> i64
  func.return
}

// -----

// rule: MD4
// fix: s|4x128x32xf16|4x128x64xf16|
// fix: s|4x128x32xf16|4x128x64xf16|
func.func @md4_half_an_atom(%i: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %s = copy.alloc_smem : memref<4x128x32xf16, #copy.smem<swizzle = 128>>
  // expected-error@+2 {{major k under 128B swizzle, a tile row (the innermost dim) is the 128B swizzle's atom: 128 bytes (64 f16), got 32 (64 bytes)}}
  // expected-note@+1 {{make the innermost dim 64 (a TMA box of that width under swizzle 128): memref<4x128x64xf16, #copy.smem<swizzle = 128>>, or the swizzle 64}}
  %d = copy.matrix_descriptor %s[%i] major k : memref<4x128x32xf16, #copy.smem<swizzle = 128>> -> i64
  func.return
}

// -----

// rule: MD5
// fix: s|4x60x64xf16|4x64x64xf16|
// fix: s|4x60x64xf16|4x64x64xf16|
func.func @md5_rows_not_groups(%i: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %s = copy.alloc_smem : memref<4x60x64xf16, #copy.smem<swizzle = 128>>
  // expected-error@+2 {{a tile holds whole groups of 8 rows (core matrices, and the swizzle's repeat, which every slot must start at), got 60 rows}}
  // expected-note@+1 {{make the rows a multiple of 8: memref<4x64x64xf16, #copy.smem<swizzle = 128>>}}
  %d = copy.matrix_descriptor %s[%i] major k : memref<4x60x64xf16, #copy.smem<swizzle = 128>> -> i64
  func.return
}

// -----

// rule: MD5
// fix: s|memref<1x64x8xf16, #copy.smem>|memref<2x64x8xf16, #copy.smem>|
// fix: s|memref<1x64x8xf16, #copy.smem>|memref<2x64x8xf16, #copy.smem>|
func.func @md5_one_block_of_k() attributes {copy.target = #copy.target<"sm_90a">} {
  %s = copy.alloc_smem : memref<1x64x8xf16, #copy.smem>
  // expected-error@+2 {{one wgmma reads 32 bytes of K, but the tile holds 16}}
  // expected-note@+1 {{make the blocks of 16 bytes of K (dim -3) at least 2}}
  %d = copy.matrix_descriptor %s[] major k : memref<1x64x8xf16, #copy.smem> -> i64
  func.return
}

// -----

// rule: MD5
// fix: s|2x8x64xbf16|2x16x64xbf16|
// fix: s|2x8x64xbf16|2x16x64xbf16|
func.func @md5_eight_k_rows(%i: index) attributes {copy.target = #copy.target<"sm_90a">} {
  %s = copy.alloc_smem : memref<2x8x64xbf16, #copy.smem<swizzle = 128>>
  // expected-error@+2 {{one wgmma reads 32 bytes of K, but the tile holds 16}}
  // expected-note@+1 {{make K rows at least 16}}
  %d = copy.matrix_descriptor %s[%i] major mn : memref<2x8x64xbf16, #copy.smem<swizzle = 128>> -> i64
  func.return
}
