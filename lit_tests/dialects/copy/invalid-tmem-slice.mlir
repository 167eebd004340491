// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid TMEM slice (`copy.tmem_slice`) per chunk, named after the rule it breaks.
// Assembled in the tests, never run (the project's GPU is an H200).

// rule: J7
// fix: s|-> memref<64x64xf32, #copy.tmem>|-> memref<128x64xf32, #copy.tmem>|
func.func @j7_slice_lanes() attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
  // expected-error@+2 {{TMEM can only be sliced, not indexed: a slice keeps the ref's lanes and element type (128 x f32), got 64 x f32}}
  // expected-note@+1 {{slice columns only: memref<128x64xf32, #copy.tmem>}}
  %s = copy.tmem_slice %t[0] : memref<128x128xf32, #copy.tmem> -> memref<64x64xf32, #copy.tmem>
  copy.tmem_dealloc %t : memref<128x128xf32, #copy.tmem>
  func.return
}

// -----

// rule: J7
// fix: s|%t[96]|%t[64]|
func.func @j7_slice_past_the_ref() attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
  // expected-error@+2 {{the slice's columns [96, 160) are not within the 128 columns of the ref}}
  // expected-note@+1 {{start the slice at a column in [0, 64]}}
  %s = copy.tmem_slice %t[96] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
  copy.tmem_dealloc %t : memref<128x128xf32, #copy.tmem>
  func.return
}

// -----

// rule: J7
// fix: s|%t[3]|%t[2]|
func.func @j7_slice_half_a_column() attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x64xf16, #copy.tmem>
  // expected-error@+2 {{a TMEM slice starts and ends on a 32-bit column, but [3, 19) of f16 (2 to a column) does not}}
  // expected-note@+1 {{start at and take a multiple of 2 elements, e.g. [2]}}
  %s = copy.tmem_slice %t[3] : memref<128x64xf16, #copy.tmem> -> memref<128x16xf16, #copy.tmem>
  copy.tmem_dealloc %t : memref<128x64xf16, #copy.tmem>
  func.return
}

// -----

// rule: J7
// fix: s|%s = copy.tmem_slice %g[0] : memref<128x128xf32> -> memref<128x64xf32>|%s = memref.subview %g[0, 0] [128, 64] [1, 1] : memref<128x128xf32> to memref<128x64xf32, strided<[128, 1]>>|
func.func @j7_slice_gmem(%g: memref<128x128xf32>) attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{copy.tmem_slice views TMEM, got a GMEM ref and a GMEM result}}
  // expected-note@+1 {{index SMEM or GMEM with memref.subview}}
  %s = copy.tmem_slice %g[0] : memref<128x128xf32> -> memref<128x64xf32>
  func.return
}

// -----

// rule: J23
// fix: s|%c40 = arith.constant 40 : index|%c40 = arith.constant 28 : index|
func.func @j23_load_past_the_slice() attributes {copy.target = #copy.target<"sm_100a">} {
  %c40 = arith.constant 40 : index
  %t = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
  %s = copy.tmem_slice %t[64] : memref<128x128xf32, #copy.tmem> -> memref<128x32xf32, #copy.tmem>
  // expected-error@+2 {{shape_32x32b x 4 reaches 4 TMEM columns from column 40, past the 32 columns of the ref}}
  // expected-note@+1 {{start it at a column in [0, 28]}}
  %v = copy.tmem_load %s[%c40] shape shape_32x32b num 4 : memref<128x32xf32, #copy.tmem> -> vector<4xf32>
  copy.tmem_dealloc %t : memref<128x128xf32, #copy.tmem>
  func.return
}
