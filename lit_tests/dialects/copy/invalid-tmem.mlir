// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid TMEM (tcgen05) op per chunk, named after the rule it breaks (`// rule:` gives
// the id in copy_dialect/rules.toml). tcgen05 exists on sm_100a/f and sm_103a only: this
// code is assembled for those targets in the tests, never run (the project's GPU is an H200).

// rule: A14
// fix: s|"sm_90a"|"sm_100a"|
func.func @a14_tmem_on_hopper() attributes {copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{'copy.tmem_alloc' op needs a target with tcgen05 (TMEM) (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f), but the target is sm_90a}}
  // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f}}
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: A14
// fix: s|"sm_120a"|"sm_100a"|
func.func @a14_tmem_on_consumer_blackwell() attributes {copy.target = #copy.target<"sm_120a">} {
  // expected-error@+2 {{but the target is sm_120a (consumer Blackwell has no TMEM)}}
  // expected-note@+1 {{set copy.target}}
  copy.tmem_wait load
  func.return
}

// -----

// rule: J1
// fix: s|copy.tmem_load %buf[%col] shape shape_32x32b num 4 : memref<128x64xf32, #copy.smem> -> vector<4xf32>|memref.load %buf[%col, %col] : memref<128x64xf32, #copy.smem>|
func.func @j1_tmem_load_from_smem(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %buf = copy.alloc_smem : memref<128x64xf32, #copy.smem>
  // expected-error@+2 {{Async load only supports TMEM refs}}
  // expected-note@+1 {{got a ref in SMEM}}
  %v = copy.tmem_load %buf[%col] shape shape_32x32b num 4 : memref<128x64xf32, #copy.smem> -> vector<4xf32>
  func.return
}

// -----

// rule: J1
// fix: s|copy.tmem_store %v, %g[%col] shape shape_32x32b num 4 : vector<4xf32>, memref<128x64xf32>|memref.store %s, %g[%col, %col] : memref<128x64xf32>|
func.func @j1_tmem_store_to_gmem(%g: memref<128x64xf32>, %v: vector<4xf32>, %s: f32, %col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{Async store only supports TMEM refs}}
  // expected-note@+1 {{got a ref in GMEM}}
  copy.tmem_store %v, %g[%col] shape shape_32x32b num 4 : vector<4xf32>, memref<128x64xf32>
  func.return
}

// -----

// rule: J2
// fix: s|memref<128x64xf16, #copy.tmem>|memref<128x64xf32, #copy.tmem>|
// fix: s|memref<128x64xf16, #copy.tmem>|memref<128x64xf32, #copy.tmem>|
// fix: s|vector<4xf16>, f16|vector<4xf32>, f32|
func.func @j2_reduce_f16(%col: index) attributes {copy.target = #copy.target<"sm_103a">} {
  %t = copy.tmem_alloc : memref<128x64xf16, #copy.tmem>
  // expected-error@+2 {{Unsupported dtype for reduction: f16. Only float32,  int32 and uint32 are supported.}}
  // expected-note@+1 {{tcgen05.ld.red reduces f32, s32 and u32 values}}
  %v, %r = copy.tmem_load %t[%col] shape shape_32x32b num 4 reduce min : memref<128x64xf16, #copy.tmem> -> vector<4xf16>, f16
  func.return
}

// -----

// rule: J3
// fix: s|shape shape_16x64b|shape shape_32x32b|
func.func @j3_reduce_with_shape_16x64b(%col: index) attributes {copy.target = #copy.target<"sm_103a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{Fused load-reduce is not supported for this layout}}
  // expected-note@+1 {{for shapes 32x32b and 16x32bx2}}
  %v, %r = copy.tmem_load %t[%col] shape shape_16x64b num 4 reduce max : memref<128x64xf32, #copy.tmem> -> vector<4xf32>, f32
  func.return
}

// -----

// rule: J22
// fix: s|num 1 reduce max|num 2 reduce max|
// fix: s|vector<1xf32>|vector<2xf32>|
func.func @j22_load_reduce_of_one_register(%col: index) attributes {copy.target = #copy.target<"sm_103a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{Fused load-reduce needs num >= 2, got num 1}}
  // expected-note@+1 {{load at least 2 registers per thread (num 2 and a vector<2x...> result), or load without reduce}}
  %v, %r = copy.tmem_load %t[%col] shape shape_32x32b num 1 reduce max : memref<128x64xf32, #copy.tmem> -> vector<1xf32>, f32
  func.return
}

// -----

// rule: J4
// fix: s|num 3|num 4|
// fix: s|vector<3xf32>|vector<4xf32>|
func.func @j4_num_not_power_of_2(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{num must be a power of 2 and <= 128, got: 3}}
  // expected-note@+1 {{.x1 ... .x128}}
  %v = copy.tmem_load %t[%col] shape shape_32x32b num 3 : memref<128x64xf32, #copy.tmem> -> vector<3xf32>
  func.return
}

// -----

// rule: J4
// fix: s|num 64|num 32|
// fix: s|vector<256xf32>|vector<128xf32>|
func.func @j4_too_many_registers(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x512xf32, #copy.tmem>
  // expected-error@+2 {{TMEM translation too big : shape=shape_16x256b and num=64 involve 256 registers per-thread, which exceeds the limit of 128}}
  // expected-note@+1 {{use num <= 32 for shape shape_16x256b}}
  %v = copy.tmem_load %t[%col] shape shape_16x256b num 64 : memref<128x512xf32, #copy.tmem> -> vector<256xf32>
  func.return
}

// -----

// rule: J5
// fix: s|num 2 :|num 2 {offset = 16} :|
func.func @j5_16x32bx2_without_offset(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{shape 16x32bx2 requires offset argument}}
  // expected-note@+1 {{{offset = 16}}}
  %v = copy.tmem_load %t[%col] shape shape_16x32bx2 num 2 : memref<128x64xf32, #copy.tmem> -> vector<2xf32>
  func.return
}

// -----

// rule: J5
// fix: s|-> vector<4xf32>|-> vector<8xf32>|
func.func @j5_result_length(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{invalid result type length [4] for shape shape_16x128b in tcgen05.ld Op}}
  // expected-note@+1 {{use vector<8xf32>}}
  %v = copy.tmem_load %t[%col] shape shape_16x128b num 4 : memref<128x64xf32, #copy.tmem> -> vector<4xf32>
  func.return
}

// -----

// rule: J5
// fix: s|%v: vector<2xf32>|%v: vector<4xf32>|
// fix: s|: vector<2xf32>,|: vector<4xf32>,|
func.func @j5_store_operand_length(%v: vector<2xf32>, %col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{invalid operand type length [2] for shape shape_16x256b in tcgen05.st Op}}
  // expected-note@+1 {{use vector<4xf32>}}
  copy.tmem_store %v, %t[%col] shape shape_16x256b num 1 : vector<2xf32>, memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J17
// fix: s| {offset = 16 : i64}||
func.func @j17_offset_without_16x32bx2(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{offset applies to shape 16x32bx2 only, got shape shape_32x32b}}
  // expected-note@+1 {{drop offset}}
  %v = copy.tmem_load %t[%col] shape shape_32x32b num 2 {offset = 16 : i64} : memref<128x64xf32, #copy.tmem> -> vector<2xf32>
  func.return
}

// -----

// rule: J18
// fix: s|offset = -1|offset = 0|
func.func @j18_negative_half_offset(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x256xf32, #copy.tmem>
  // expected-error@+2 {{the 16x32bx2 half offset must be in [0, 252] for 4 columns per half from column 0 of a 256-column TMEM ref, got -1}}
  // expected-note@+1 {{use an offset of 0 to 252}}
  %v = copy.tmem_load %t[%col] shape shape_16x32bx2 num 4 {offset = -1 : i64} : memref<128x256xf32, #copy.tmem> -> vector<4xf32>
  func.return
}

// -----

// rule: J18
// fix: s|offset = 65536|offset = 190|
func.func @j18_half_offset_past_the_ref(%v: vector<2xf32>) attributes {copy.target = #copy.target<"sm_100a">} {
  %c64 = arith.constant 64 : index
  %t = copy.tmem_alloc : memref<128x256xf32, #copy.tmem>
  // expected-error@+2 {{the 16x32bx2 half offset must be in [0, 190] for 2 columns per half from column 64 of a 256-column TMEM ref, got 65536}}
  // expected-note@+1 {{use an offset of 0 to 190}}
  copy.tmem_store %v, %t[%c64] shape shape_16x32bx2 num 2 {offset = 65536 : i64} : vector<2xf32>, memref<128x256xf32, #copy.tmem>
  func.return
}

// -----

// rule: J6
// fix: s|memref<2x128x64xf32, #copy.tmem>|memref<128x64xf32, #copy.tmem>|
func.func @j6_tmem_ref_rank_3() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{TMEM can only represent 2D shapes, got [2, 128, 64]}}
  // expected-note@+1 {{lanes x columns}}
  %t = copy.tmem_alloc : memref<2x128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J6
// fix: s|memref<96x64xf32, #copy.tmem>|memref<128x64xf32, #copy.tmem>|
func.func @j6_tmem_ref_96_rows() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{Unsupported shape: [96, 64]. TMEM references must have either 128 or 64 rows, but got 96.}}
  // expected-note@+1 {{TMEM has 128 lanes}}
  %t = copy.tmem_alloc : memref<96x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J20
// fix: s|, strided<[1, 128]>||
// fix: s|, strided<[1, 128]>||
func.func @j20_transposed_tmem_load(%t: memref<128x64xf32, strided<[1, 128]>, #copy.tmem>, %col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{TMEM refs must have the standard lanes x columns layout, got strided<[1, 128]>}}
  // expected-note@+1 {{drop the layout strided<[1, 128]>}}
  %v = copy.tmem_load %t[%col] shape shape_32x32b num 4 : memref<128x64xf32, strided<[1, 128]>, #copy.tmem> -> vector<4xf32>
  func.return
}

// -----

// rule: J21
// fix: s|128x1024xi1|128x128xi8|
func.func @j21_i1_tmem() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{TMEM holds 32-bit cells, which cannot pack elements of type i1}}
  // expected-note@+1 {{(i1 values as i8 or i32)}}
  %t = copy.tmem_alloc : memref<128x1024xi1, #copy.tmem>
  func.return
}

// -----

// rule: J8
// fix: s|%v: vector<4xi32>|%vi: vector<4xi32>|
// fix: s|%t = copy.tmem_alloc|%v = arith.bitcast %vi : vector<4xi32> to vector<4xf32> %t = copy.tmem_alloc|
// fix: s|: vector<4xi32>, memref|: vector<4xf32>, memref|
func.func @j8_store_dtype(%v: vector<4xi32>, %col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{Stored array has dtype i32, but TMEM has dtype f32}}
  // expected-note@+1 {{bitcast the registers}}
  copy.tmem_store %v, %t[%col] shape shape_32x32b num 4 : vector<4xi32>, memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J9
// fix: s|-> vector<4xi32>|-> vector<4xf32>|
func.func @j9_load_result_dtype(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{The `source` and `result` must have the same element type.}}
  // expected-note@+1 {{the TMEM ref holds f32, the result has i32}}
  %v = copy.tmem_load %t[%col] shape shape_32x32b num 4 : memref<128x64xf32, #copy.tmem> -> vector<4xi32>
  func.return
}

// -----

// rule: J10
// fix: s|memref<128x96xf32, #copy.tmem>|memref<128x64xf32, #copy.tmem>|
func.func @j10_ncols_not_power_of_2() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{ncols must be a power of 2 and within [32, 512], got: 96}}
  // expected-note@+1 {{allocate 32, 64, 128, 256 or 512 columns}}
  %t = copy.tmem_alloc : memref<128x96xf32, #copy.tmem>
  func.return
}

// -----

// rule: J10
// fix: s|(%t: memref<128x64xf32, #copy.tmem>)|()|
// fix: s|copy.tmem_dealloc %t|%t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem> copy.tmem_dealloc %t|
func.func @j10_dealloc_of_a_view(%t: memref<128x64xf32, #copy.tmem>) attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{copy.tmem_dealloc frees the result of a copy.tmem_alloc}}
  // expected-note@+1 {{pass the TMEM ref that copy.tmem_alloc returned}}
  copy.tmem_dealloc %t : memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J10
// fix: s|128x65xbf16|128x64xbf16|
func.func @j10_columns_round_up(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  // 65 bf16 elements per lane span 33 columns: not a power of 2.
  // expected-error@+2 {{ncols must be a power of 2 and within [32, 512], got: 33}}
  // expected-note@+1 {{65 elements of bf16 per lane span 33 columns of 32 bits: allocate 32, 64, 128, 256 or 512 columns (64, 128, 256, 512, 1024 elements)}}
  %t = copy.tmem_alloc : memref<128x65xbf16, #copy.tmem>
  func.return
}

// -----

// rule: J10
// fix: s|128x1024xf32|128x512xf32|
func.func @j10_more_columns_than_sm_103a_has() attributes {copy.target = #copy.target<"sm_103a">} {
  // sm_103a's TMEM is 512 columns (hardware.toml [tmem]).
  // expected-error@+2 {{ncols must be a power of 2 and within [32, 512], got: 1024}}
  // expected-note@+1 {{1024 elements of f32 per lane span 1024 columns of 32 bits: allocate 32, 64, 128, 256 or 512 columns (32, 64, 128, 256, 512 elements)}}
  %t = copy.tmem_alloc : memref<128x1024xf32, #copy.tmem>
  func.return
}

// -----

// rule: J19
// fix: s|  %b = copy.tmem_alloc|  copy.tmem_dealloc %a : memref<128x512xf32, #copy.tmem>  %b = copy.tmem_alloc|
func.func @j19_past_sm_100f_capacity() attributes {copy.target = #copy.target<"sm_100f">} {
  %a = copy.tmem_alloc : memref<128x512xf32, #copy.tmem>
  // expected-error@+2 {{The number of allocated columns must be less than or equal to 512 but got: 544}}
  // expected-note@+1 {{512 columns are still allocated here and this allocation adds 32: free earlier TMEM with copy.tmem_dealloc first, or allocate fewer columns}}
  %b = copy.tmem_alloc : memref<128x32xf32, #copy.tmem>
  func.return
}

// -----

// rule: J19
// fix: s|  %out = copy.tmem_alloc|  copy.tmem_dealloc %acc : memref<128x256xf32, #copy.tmem>  %out = copy.tmem_alloc|
func.func @j19_tmem_out_of_memory() attributes {copy.target = #copy.target<"sm_100a">} {
  %acc = copy.tmem_alloc : memref<128x256xf32, #copy.tmem>
  %mid = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
  // expected-error@+2 {{The number of allocated columns must be less than or equal to 512 but got: 640}}
  // expected-note@+1 {{384 columns are still allocated here and this allocation adds 256: free earlier TMEM with copy.tmem_dealloc first, or allocate fewer columns}}
  %out = copy.tmem_alloc : memref<128x256xf32, #copy.tmem>
  func.return
}

// -----

// rule: J11
// fix: s|%t = copy.tmem_alloc|%c0 = arith.constant 0 : index %s = copy.alloc_smem : memref<128x8xf32, #copy.smem<swizzle = 32>> %bar = copy.barrier_init arrivals 1 : !copy.barrier<1> copy.async_copy %g[%c0, %c0] to %s barrier %bar[%c0] : memref<128x8xf32> to memref<128x8xf32, #copy.smem<swizzle = 32>>, !copy.barrier<1> %t = copy.tmem_alloc|
// fix: s|copy.smem_to_tmem %g|copy.smem_to_tmem %s|
// fix: s|: memref<128x8xf32>, memref<128x64xf32, #copy.tmem>|: memref<128x8xf32, #copy.smem<swizzle = 32>>, memref<128x64xf32, #copy.tmem>|
func.func @j11_smem_to_tmem_from_gmem(%g: memref<128x8xf32>, %col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{async_copy_smem_to_tmem source must be an SMEM ref}}
  // expected-note@+1 {{copy GMEM to SMEM first}}
  copy.smem_to_tmem %g to %t[%col] shape shape_128x256b : memref<128x8xf32>, memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J11
// fix: s|%d = copy.alloc_smem : memref<128x64xf32, #copy.smem>|%d = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>|
// fix: s|, memref<128x64xf32, #copy.smem>|, memref<128x64xf32, #copy.tmem>|
func.func @j11_smem_to_tmem_into_smem(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %s = copy.alloc_smem : memref<128x8xf32, #copy.smem<swizzle = 32>>
  %d = copy.alloc_smem : memref<128x64xf32, #copy.smem>
  // expected-error@+2 {{async_copy_smem_to_tmem target must be a TMEM ref}}
  // expected-note@+1 {{allocate it with copy.tmem_alloc}}
  copy.smem_to_tmem %s to %d[%col] shape shape_128x256b : memref<128x8xf32, #copy.smem<swizzle = 32>>, memref<128x64xf32, #copy.smem>
  func.return
}

// -----

// rule: J11
// fix: s|memref<128x8xi32, #copy.smem<swizzle = 32>>|memref<128x8xf32, #copy.smem<swizzle = 32>>|
// fix: s|memref<128x8xi32, #copy.smem<swizzle = 32>>|memref<128x8xf32, #copy.smem<swizzle = 32>>|
func.func @j11_smem_to_tmem_dtypes(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %s = copy.alloc_smem : memref<128x8xi32, #copy.smem<swizzle = 32>>
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{Expected SMEM element type (i32) to equal the TMEM element type (f32)}}
  // expected-note@+1 {{tcgen05.cp copies bits}}
  copy.smem_to_tmem %s to %t[%col] shape shape_128x256b : memref<128x8xi32, #copy.smem<swizzle = 32>>, memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J12
// fix: s|memref<128x4xf32, #copy.smem>|memref<256x4xf32, #copy.smem>|
// fix: s|memref<128x4xf32, #copy.smem>|memref<256x4xf32, #copy.smem>|
func.func @j12_smem_size_for_the_shape(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %s = copy.alloc_smem : memref<128x4xf32, #copy.smem>
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{SMEM has shape [128, 4] (2048 bytes), but expected 4096 bytes for TMEM copy shape shape_128x256b}}
  // expected-note@+1 {{resize the source}}
  copy.smem_to_tmem %s to %t[%col] shape shape_128x256b : memref<128x4xf32, #copy.smem>, memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J12
// fix: s|%ring[%c0, %c1]|%ring[%c0]|
func.func @j12_slot_of_rows(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ring = copy.alloc_smem : memref<4x128x64xi2, #copy.smem>
  %t = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
  // expected-error@+2 {{tcgen05.cp reads a 2-D tile (the dims of the source after its indices), got 1 dims of memref<4x128x64xi2, #copy.smem> after 2 indices}}
  // expected-note@+1 {{drop %c1: index the 1 leading dims (the slot), leaving the tile's rows and its rows of bytes}}
  copy.smem_to_tmem %ring[%c0, %c1] to %t[%col] shape shape_128x128b metadata : memref<4x128x64xi2, #copy.smem>, memref<128x512xi2, #copy.tmem>
  func.return
}

// -----

// rule: C10
// fix: s|%view to %t|%ring[%c1] to %t|
// fix: s|memref<128x64xi2, strided<[64, 1], offset: 8192>, #copy.smem>, memref<128x512xi2|memref<4x128x64xi2, #copy.smem>, memref<128x512xi2|
func.func @c10_a_subview_of_the_ring(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %c1 = arith.constant 1 : index
  %ring = copy.alloc_smem : memref<4x128x64xi2, #copy.smem>
  %view = memref.subview %ring[1, 0, 0] [1, 128, 64] [1, 1, 1] : memref<4x128x64xi2, #copy.smem> to memref<128x64xi2, strided<[64, 1], offset: 8192>, #copy.smem>
  %t = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
  // expected-error@+2 {{async_copy needs the SMEM reference to be a buffer, got a view at offset 8192 of one (memref<128x64xi2, strided<[64, 1], offset: 8192>, #copy.smem>)}}
  // expected-note@+1 {{pass the buffer with the slot's indices (%ring[%slot]) instead of a memref.subview of it}}
  copy.smem_to_tmem %view to %t[%col] shape shape_128x128b metadata : memref<128x64xi2, strided<[64, 1], offset: 8192>, #copy.smem>, memref<128x512xi2, #copy.tmem>
  func.return
}

// -----

// rule: F8
// fix: s|%c4 = arith.constant 4|%c4 = arith.constant 3|
func.func @f8_slot_past_the_ring(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %c4 = arith.constant 4 : index
  %ring = copy.alloc_smem : memref<4x128x64xi2, #copy.smem>
  %t = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
  // expected-error@+2 {{expected the SMEM slot index along dim 0 in [0, 4), found the constant 4: it lies outside memref<4x128x64xi2, #copy.smem>}}
  // expected-note@+1 {{dim 0 of the buffer has 4 entries (its indices are 0 to 3): index inside it, or allocate a buffer of 5 along dim 0}}
  copy.smem_to_tmem %ring[%c4] to %t[%col] shape shape_128x128b metadata : memref<4x128x64xi2, #copy.smem>, memref<128x512xi2, #copy.tmem>
  func.return
}

// -----

// rule: J12
// fix: s|memref<64x64xf32, #copy.tmem>|memref<128x64xf32, #copy.tmem>|
// fix: s|memref<64x64xf32, #copy.tmem>|memref<128x64xf32, #copy.tmem>|
func.func @j12_tmem_of_64_rows(%t: memref<64x64xf32, #copy.tmem>, %col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %s = copy.alloc_smem : memref<128x8xf32, #copy.smem<swizzle = 32>>
  // expected-error@+2 {{TMEM reference must have 128 rows, but got 64}}
  // expected-note@+1 {{tcgen05.cp writes all 128 lanes}}
  copy.smem_to_tmem %s to %t[%col] shape shape_128x256b : memref<128x8xf32, #copy.smem<swizzle = 32>>, memref<64x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J14
// fix: s|shape shape_64x128b :|shape shape_64x128b multicast warpx2_01_23 :|
func.func @j14_64x128b_without_multicast(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %s = copy.alloc_smem : memref<64x4xf32, #copy.smem>
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{Shape 64x128b requires multicast warpx2_01_23 or warpx2_02_13 for tcgen05.cp Op}}
  // expected-note@+1 {{add multicast warpx2_01_23}}
  copy.smem_to_tmem %s to %t[%col] shape shape_64x128b : memref<64x4xf32, #copy.smem>, memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J14
// fix: s|multicast warpx2_01_23|multicast warpx4|
func.func @j14_32x128b_with_warpx2(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %s = copy.alloc_smem : memref<32x4xf32, #copy.smem>
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{Shape 32x128b requires multicast warpx4 for tcgen05.cp Op}}
  // expected-note@+1 {{add multicast warpx4}}
  copy.smem_to_tmem %s to %t[%col] shape shape_32x128b multicast warpx2_01_23 : memref<32x4xf32, #copy.smem>, memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J14
// fix: s| multicast warpx4||
func.func @j14_multicast_on_128x256b(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %s = copy.alloc_smem : memref<128x8xf32, #copy.smem<swizzle = 32>>
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{Invalid multicast type for tcgen05.cp Op}}
  // expected-note@+1 {{takes no multicast}}
  copy.smem_to_tmem %s to %t[%col] shape shape_128x256b multicast warpx4 : memref<128x8xf32, #copy.smem<swizzle = 32>>, memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J15
// fix: s| abs :| :|
func.func @j15_abs_without_reduce(%col: index) attributes {copy.target = #copy.target<"sm_103a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{'abs' requires 'redOp' to be set}}
  // expected-note@+1 {{add reduce min|max}}
  %v = copy.tmem_load %t[%col] shape shape_32x32b num 4 abs : memref<128x64xf32, #copy.tmem> -> vector<4xf32>
  func.return
}

// -----

// rule: J15
// fix: s|%v = copy.tmem_load|%v, %r = copy.tmem_load|
// fix: s|-> vector<4xf32>|-> vector<4xf32>, f32|
func.func @j15_reduce_without_red_result(%col: index) attributes {copy.target = #copy.target<"sm_103a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{redOp is set but 'red' result is not present}}
  // expected-note@+1 {{bind the reduced value}}
  %v = copy.tmem_load %t[%col] shape shape_32x32b num 4 reduce max : memref<128x64xf32, #copy.tmem> -> vector<4xf32>
  func.return
}

// -----

// rule: J15
// fix: s| nan :| :|
func.func @j15_nan_on_integers(%col: index) attributes {copy.target = #copy.target<"sm_103a">} {
  %t = copy.tmem_alloc : memref<128x64xi32, #copy.tmem>
  // expected-error@+2 {{'NaN' requires floating-point element type (f32)}}
  // expected-note@+1 {{drop abs/nan for integer reductions}}
  %v, %r = copy.tmem_load %t[%col] shape shape_32x32b num 4 reduce max nan : memref<128x64xi32, #copy.tmem> -> vector<4xi32>, i32
  func.return
}

// -----

// rule: J12
// fix: s|memref<128x8xf32, #copy.smem>|memref<128x8xf32, #copy.smem<swizzle = 32>>|
// fix: s|memref<128x8xf32, #copy.smem>|memref<128x8xf32, #copy.smem<swizzle = 32>>|
func.func @j12_rows_that_do_not_fit_the_swizzle(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %s = copy.alloc_smem : memref<128x8xf32, #copy.smem>
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{Tiling does not fit swizzle: SMEM rows of 32 bytes with swizzle 16}}
  // expected-note@+1 {{(#copy.smem<swizzle = 32>)}}
  copy.smem_to_tmem %s to %t[%col] shape shape_128x256b : memref<128x8xf32, #copy.smem>, memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: A14
// fix: s|"sm_100a"|"sm_103a"|
func.func @a14_load_reduce_on_sm100a(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{'copy.tmem_load' op with reduce needs a target with tcgen05.ld.red (sm_103a, sm_110a, sm_110f), but the target is sm_100a}}
  // expected-note@+1 {{reduce the loaded registers with arith ops, or set copy.target to one of sm_103a, sm_110a, sm_110f}}
  %v, %r = copy.tmem_load %t[%col] shape shape_32x32b num 4 reduce max : memref<128x64xf32, #copy.tmem> -> vector<4xf32>, f32
  func.return
}

// -----

// A tcgen05.st of 16x256b x 16 spans 128 columns: from column 32 it runs past the 64 columns
// of its ref, into TMEM another allocation (or none) owns.
// rule: J23
// fix: s|copy.tmem_store %v, %t[%c32] shape shape_16x256b num 16 : vector<64xf32>|copy.tmem_store %w, %t[%c32] shape shape_16x256b num 4 : vector<16xf32>|
func.func @j23_store_past_the_ref(%v: vector<64xf32>, %w: vector<16xf32>) attributes {copy.target = #copy.target<"sm_100a">} {
  %c32 = arith.constant 32 : index
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{shape_16x256b x 16 reaches 128 TMEM columns from column 32, past the 64 columns of the ref}}
  // expected-note@+1 {{use a num that spans at most the ref's 32 columns from column 32 (num 4, 16 registers a thread), or a wider ref}}
  copy.tmem_store %v, %t[%c32] shape shape_16x256b num 16 : vector<64xf32>, memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// From column 48, a tcgen05.st of 32x32b x 32 (32 columns) runs 16 columns past the ref.
// rule: J23
// fix: s|%c48 = arith.constant 48|%c48 = arith.constant 32|
func.func @j23_store_from_too_far(%v: vector<32xf32>) attributes {copy.target = #copy.target<"sm_100a">} {
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{shape_32x32b x 32 reaches 32 TMEM columns from column 48, past the 64 columns of the ref}}
  // expected-note@+1 {{start it at a column in [0, 32]}}
  copy.tmem_store %v, %t[%c48] shape shape_32x32b num 32 : vector<32xf32>, memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// A tcgen05.ld of 16x128b x 64 spans 256 columns, more than its 128-column ref holds from any
// column.
// rule: J23
// fix: s|shape shape_16x128b num 64 : memref<128x128xf32, #copy.tmem> -> vector<128xf32>|shape shape_16x128b num 32 : memref<128x128xf32, #copy.tmem> -> vector<64xf32>|
func.func @j23_load_wider_than_the_ref(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
  // expected-error@+2 {{shape_16x128b x 64 reaches 256 TMEM columns, past the 128 columns of the ref}}
  // expected-note@+1 {{use a num that spans at most the ref's 128 columns (num 32, 64 registers a thread), or a wider ref}}
  %v = copy.tmem_load %t[%col] shape shape_16x128b num 64 : memref<128x128xf32, #copy.tmem> -> vector<128xf32>
  func.return
}

// -----

// rule: J24
// fix: s|num 2 pack reduce|num 2 reduce|
func.func @j24_pack_with_reduce(%col: index) attributes {copy.target = #copy.target<"sm_103a">} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{pack does not combine with reduce: tcgen05.ld.red has no .pack::16b}}
  // expected-note@+1 {{drop pack to reduce the 32-bit values, or drop reduce (and the 'red' result) to load packed 16-bit pairs}}
  %v, %m = copy.tmem_load %t[%col] shape shape_32x32b num 2 pack reduce max : memref<128x64xf32, #copy.tmem> -> vector<2xf32>, f32
  func.return
}

// -----

// rule: J25
// fix: s|vector<4xf32>|vector<4xf16>|
func.func @j25_pack_of_32_bit_values(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x64xi32, #copy.tmem>
  // expected-error@+2 {{pack moves 16-bit values, two to a 32-bit register, got elements of type f32}}
  // expected-note@+1 {{use a vector of f16, bf16 or i16 with pack (vector<4xf16>), or drop pack to move whole 32-bit registers}}
  %v = copy.tmem_load %t[%col] shape shape_32x32b num 2 pack : memref<128x64xi32, #copy.tmem> -> vector<4xf32>
  func.return
}

// -----

// rule: J25
// fix: s|memref<128x64xf16, #copy.tmem>|memref<128x64xi32, #copy.tmem>|
// fix: s|memref<128x64xf16, #copy.tmem>|memref<128x64xi32, #copy.tmem>|
func.func @j25_unpack_into_a_16_bit_ref(%col: index, %v: vector<4xf16>) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x64xf16, #copy.tmem>
  // expected-error@+2 {{unpack puts one 16-bit value in each 32-bit TMEM column, got a TMEM ref of f16}}
  // expected-note@+1 {{give the TMEM ref a 32-bit element type (i32: each column's low half holds a value), or drop unpack to move a ref of f16 packed as it is}}
  copy.tmem_store %v, %t[%col] shape shape_32x32b num 2 unpack : vector<4xf16>, memref<128x64xf16, #copy.tmem>
  func.return
}

// -----

// rule: J5
// fix: s|vector<2xf16>|vector<4xf16>|
func.func @j5_pack_counts_two_values_a_register(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x64xi32, #copy.tmem>
  // expected-error@+2 {{invalid pack vector length [2] for shape shape_32x32b and num 2}}
  // expected-note@+1 {{2 32-bit registers per thread hold 4 16-bit values with pack: use vector<4xf16>}}
  %v = copy.tmem_load %t[%col] shape shape_32x32b num 2 pack : memref<128x64xi32, #copy.tmem> -> vector<2xf16>
  func.return
}

// -----

// rule: J23
// fix: s|num 32 pack : memref<128x32xi32, #copy.tmem> -> vector<64xf16>|num 16 pack : memref<128x32xi32, #copy.tmem> -> vector<32xf16>|
func.func @j23_pack_spans_two_columns_a_register(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %t = copy.tmem_alloc : memref<128x32xi32, #copy.tmem>
  // expected-error@+2 {{shape_32x32b x 32 reaches 64 TMEM columns, past the 32 columns of the ref}}
  // expected-note@+1 {{use a num that spans at most the ref's 32 columns (num 16, 16 registers a thread), or a wider ref}}
  %v = copy.tmem_load %t[%col] shape shape_32x32b num 32 pack : memref<128x32xi32, #copy.tmem> -> vector<64xf16>
  func.return
}
