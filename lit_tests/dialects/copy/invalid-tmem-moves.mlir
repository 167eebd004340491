// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid TMEM data movement (tcgen05.cp with `scales` or `metadata`, tcgen05.shift) per
// chunk, named after the rule it breaks. Assembled in the tests, never run (the project's GPU
// is an H200).

// rule: J13
// fix: s|memref<32x16xi8, #copy.smem>|memref<32x16xf8E8M0FNU, #copy.smem>|
// fix: s|memref<32x16xi8, #copy.smem>|memref<32x16xf8E8M0FNU, #copy.smem>|
// fix: s|memref<128x128xi8, #copy.tmem>|memref<128x128xf8E8M0FNU, #copy.tmem>|
// fix: s|memref<128x128xi8, #copy.tmem>|memref<128x128xf8E8M0FNU, #copy.tmem>|
func.func @j13_scales_of_i8(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x128xi8, #copy.tmem>
  %s = copy.alloc_smem : memref<32x16xi8, #copy.smem>
  // expected-error@+2 {{Unsupported dtype: i8, only f8e8m0fnu and f8e4m3fn are supported}}
  // expected-note@+1 {{give both refs the element type f8E8M0FNU or f8E4M3FN}}
  copy.smem_to_tmem %s to %t[%col] shape shape_32x128b multicast warpx4 scales : memref<32x16xi8, #copy.smem>, memref<128x128xi8, #copy.tmem>
  func.return
}

// -----

// rule: J13
// fix: s|memref<128x16xf8E8M0FNU, #copy.smem>|memref<32x16xf8E8M0FNU, #copy.smem>|
// fix: s|shape shape_128x128b scales : memref<128x16xf8E8M0FNU, #copy.smem>|shape shape_32x128b multicast warpx4 scales : memref<32x16xf8E8M0FNU, #copy.smem>|
func.func @j13_scales_row_by_row(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x128xf8E8M0FNU, #copy.tmem>
  %s = copy.alloc_smem : memref<128x16xf8E8M0FNU, #copy.smem>
  // expected-error@+2 {{scale factors are copied with shape 32x128b or 64x128b, got 128x128b}}
  // expected-note@+1 {{use shape shape_32x128b multicast warpx4}}
  copy.smem_to_tmem %s to %t[%col] shape shape_128x128b scales : memref<128x16xf8E8M0FNU, #copy.smem>, memref<128x128xf8E8M0FNU, #copy.tmem>
  func.return
}

// -----

// rule: J13
// fix: s|memref<32x16xf8E4M3FN, #copy.smem<swizzle = 32>>|memref<32x16xf8E4M3FN, #copy.smem>|
// fix: s|memref<32x16xf8E4M3FN, #copy.smem<swizzle = 32>>|memref<32x16xf8E4M3FN, #copy.smem>|
func.func @j13_scales_swizzled(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x128xf8E4M3FN, #copy.tmem>
  %s = copy.alloc_smem : memref<32x16xf8E4M3FN, #copy.smem<swizzle = 32>>
  // expected-error@+2 {{scale factors are read from an unswizzled SMEM tile, got swizzle 32}}
  // expected-note@+1 {{give the scale tile the memory space #copy.smem (no swizzle)}}
  copy.smem_to_tmem %s to %t[%col] shape shape_32x128b multicast warpx4 scales : memref<32x16xf8E4M3FN, #copy.smem<swizzle = 32>>, memref<128x128xf8E4M3FN, #copy.tmem>
  func.return
}

// -----

// rule: J13
// fix: s|memref<128x16xi8, #copy.smem>|memref<128x64xi2, #copy.smem>|
// fix: s|memref<128x16xi8, #copy.smem>|memref<128x64xi2, #copy.smem>|
// fix: s|memref<128x128xi8, #copy.tmem>|memref<128x512xi2, #copy.tmem>|
// fix: s|memref<128x128xi8, #copy.tmem>|memref<128x512xi2, #copy.tmem>|
func.func @j13_metadata_of_i8(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x128xi8, #copy.tmem>
  %s = copy.alloc_smem : memref<128x16xi8, #copy.smem>
  // expected-error@+2 {{Unsupported dtype: i8, only i2 supported}}
  // expected-note@+1 {{sparse metadata are 2-bit indices: give both refs the element type i2}}
  copy.smem_to_tmem %s to %t[%col] shape shape_128x128b metadata : memref<128x16xi8, #copy.smem>, memref<128x128xi8, #copy.tmem>
  func.return
}

// -----

// rule: J13
// fix: s|memref<32x64xi2, #copy.smem>|memref<128x64xi2, #copy.smem>|
// fix: s|shape shape_32x128b multicast warpx4 metadata : memref<32x64xi2, #copy.smem>|shape shape_128x128b metadata : memref<128x64xi2, #copy.smem>|
func.func @j13_metadata_to_lane_quarters(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
  %s = copy.alloc_smem : memref<32x64xi2, #copy.smem>
  // expected-error@+2 {{sparse metadata are copied with shape 128x128b, got 32x128b}}
  // expected-note@+1 {{use shape shape_128x128b (no multicast): a row of 64 values to each lane}}
  copy.smem_to_tmem %s to %t[%col] shape shape_32x128b multicast warpx4 metadata : memref<32x64xi2, #copy.smem>, memref<128x512xi2, #copy.tmem>
  func.return
}

// -----

// rule: J13
// fix: s|memref<128x64xi2, #copy.smem<swizzle = 32>>|memref<128x64xi2, #copy.smem>|
// fix: s|memref<128x64xi2, #copy.smem<swizzle = 32>>|memref<128x64xi2, #copy.smem>|
func.func @j13_metadata_swizzled(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
  %s = copy.alloc_smem : memref<128x64xi2, #copy.smem<swizzle = 32>>
  // expected-error@+2 {{sparse metadata are read from an unswizzled SMEM tile, got swizzle 32}}
  // expected-note@+1 {{give the metadata tile the memory space #copy.smem (no swizzle)}}
  copy.smem_to_tmem %s to %t[%col] shape shape_128x128b metadata : memref<128x64xi2, #copy.smem<swizzle = 32>>, memref<128x512xi2, #copy.tmem>
  func.return
}

// -----

// rule: J13
// fix: s| scales metadata| metadata|
func.func @j13_scales_and_metadata(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
  %s = copy.alloc_smem : memref<128x64xi2, #copy.smem>
  // expected-error@+2 {{a copy moves either scale factors or sparse metadata, got both `scales` and `metadata`}}
  // expected-note@+1 {{drop `scales` (the refs are i2: sparse metadata)}}
  copy.smem_to_tmem %s to %t[%col] shape shape_128x128b scales metadata : memref<128x64xi2, #copy.smem>, memref<128x512xi2, #copy.tmem>
  func.return
}

// -----

// rule: J23
// fix: s|%c30 = arith.constant 30 : index|%c30 = arith.constant 28 : index|
func.func @j23_copy_past_the_ref() attributes {copy.target = #copy.target<"sm_100a">} {
  %c30 = arith.constant 30 : index
  %t = copy.tmem_alloc : memref<128x32xf32, #copy.tmem>
  %s = copy.alloc_smem : memref<128x4xf32, #copy.smem>
  // expected-error@+2 {{tcgen05.cp writes 4 TMEM columns from column 30 (rows of 16 bytes), past the 32 columns of the ref}}
  // expected-note@+1 {{start it at a column in [0, 28]}}
  copy.smem_to_tmem %s to %t[%c30] shape shape_128x128b : memref<128x4xf32, #copy.smem>, memref<128x32xf32, #copy.tmem>
  func.return
}

// -----

// rule: J23
// fix: s|%c28 = arith.constant 28 : index|%c28 = arith.constant 24 : index|
func.func @j23_shift_past_the_ref() attributes {copy.target = #copy.target<"sm_100a">} {
  %c28 = arith.constant 28 : index
  %t = copy.tmem_alloc : memref<128x32xf32, #copy.tmem>
  // expected-error@+2 {{tcgen05.shift moves 8 TMEM columns (32 bytes) from column 28, past the 32 columns of the ref}}
  // expected-note@+1 {{start it at a column in [0, 24]}}
  copy.tmem_shift %t[%c28] : memref<128x32xf32, #copy.tmem>
  func.return
}

// -----

// rule: J30
// fix: s|memref<64x32xf32, #copy.tmem>|memref<128x32xf32, #copy.tmem>|
// fix: s|memref<64x32xf32, #copy.tmem>|memref<128x32xf32, #copy.tmem>|
func.func @j30_shift_half_the_lanes(%t: memref<64x32xf32, #copy.tmem>, %col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{tcgen05.shift moves rows down across all 128 TMEM lanes, but the ref has 64 lanes}}
  // expected-note@+1 {{shift a ref of 128 lanes: memref<128x32xf32, #copy.tmem>}}
  copy.tmem_shift %t[%col] : memref<64x32xf32, #copy.tmem>
  func.return
}

// -----

// rule: J30
// fix: s|copy.tmem_shift %s[%col] : memref<128x32xf32, #copy.smem>|copy.tmem_shift %t[%col] : memref<128x32xf32, #copy.tmem>|
func.func @j30_shift_smem(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x32xf32, #copy.tmem>
  %s = copy.alloc_smem : memref<128x32xf32, #copy.smem>
  // expected-error@+2 {{copy.tmem_shift shifts TMEM rows, got a ref in SMEM}}
  // expected-note@+1 {{shift a TMEM ref (from copy.tmem_alloc) of type memref<128x32xf32, #copy.tmem>}}
  copy.tmem_shift %s[%col] : memref<128x32xf32, #copy.smem>
  copy.tmem_dealloc %t : memref<128x32xf32, #copy.tmem>
  func.return
}

// -----

// rule: A14
// fix: s|"sm_100f"|"sm_100a"|
func.func @a14_shift_on_sm_100f(%col: index) attributes {copy.target = #copy.target<"sm_100f">} {
  %t = copy.tmem_alloc : memref<128x32xf32, #copy.tmem>
  // expected-error@+2 {{'copy.tmem_shift' op needs a target with tcgen05.shift (sm_100a, sm_103a, sm_110a), but the target is sm_100f}}
  // expected-note@+1 {{shift the rows with copy.tmem_load and copy.tmem_store, or set copy.target to one of sm_100a, sm_103a, sm_110a}}
  copy.tmem_shift %t[%col] : memref<128x32xf32, #copy.tmem>
  func.return
}

// -----

// rule: J28
// fix: s|copy.tmem_shift %t[%col] cta_group 2|copy.tmem_shift %t[%col]|
func.func @j28_shift_of_the_other_group(%col: index) attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %t = copy.tmem_alloc : memref<128x32xf32, #copy.tmem>
  // expected-error@+2 {{copy.tmem_shift has cta_group 2, but the kernel's first tcgen05 op (copy.tmem_alloc) has cta_group 1}}
  // expected-note@+1 {{drop cta_group}}
  copy.tmem_shift %t[%col] cta_group 2 : memref<128x32xf32, #copy.tmem>
  copy.tmem_dealloc %t : memref<128x32xf32, #copy.tmem>
  func.return
}
