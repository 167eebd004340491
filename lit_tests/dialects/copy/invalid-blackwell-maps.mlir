// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid use of the Blackwell tensor-map forms per chunk (copy_dialect/blackwell_maps.py:
// the packed 4-bit map type of f4E2M1FN, the 128B_ATOM swizzles), named after the rule it
// breaks (`// rule:` gives the id in copy_dialect/rules.toml), with the fix its note gives.

// rule: PK1
// fix: s|"sm_90a"|"sm_100a"|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @pk1_fp4_on_hopper(%x: memref<256x256xf4E2M1FN>) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : memref<64x128xf4E2M1FN, #copy.smem>
    // expected-error@+2 {{'copy.async_copy' op with f4E2M1FN elements (a 16U4_ALIGN8B map) needs a target with Blackwell tensor maps (packed 4- and 6-bit types, 128B_ATOM swizzles) (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_90a}}
    // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a, or carry the values as i8 pairs}}
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf4E2M1FN> to memref<64x128xf4E2M1FN, #copy.smem>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    func.return
  }
}

// -----

// rule: PK2
// fix: s| oob nan :| :|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @pk2_fp4_nan_fill(%x: memref<256x256xf4E2M1FN>) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : memref<64x128xf4E2M1FN, #copy.smem>
    // expected-error@+2 {{Expected oob zeros for a 16U4_ALIGN8B map (f4E2M1FN elements), got oob nan: the driver fills out-of-bounds elements of packed types with zeros only}}
    // expected-note@+1 {{drop oob nan (the fill is then zeros)}}
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] oob nan : memref<256x256xf4E2M1FN> to memref<64x128xf4E2M1FN, #copy.smem>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    func.return
  }
}

// -----

// rule: SW1
// fix: s|swizzle = 64, atom = 32|swizzle = 128, atom = 32|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @sw1_atom_under_64b(%x: memref<256x256xbf16>) attributes {gpu.kernel} {
    // expected-error@+2 {{Expected a swizzle atom of 16 bytes, or of 32 or 64 bytes under swizzle = 128 (flip only with atom = 32), got swizzle = 64, atom = 32}}
    // expected-note@+1 {{the 128-byte swizzles of sm_100 are #copy.smem<swizzle = 128, atom = 32>, #copy.smem<swizzle = 128, atom = 32, flip> and #copy.smem<swizzle = 128, atom = 64>}}
    %buf = copy.alloc_smem : memref<64x32xbf16, #copy.smem<swizzle = 64, atom = 32>>
    func.return
  }
}

// -----

// rule: SW1
// fix: s|atom = 64, flip|atom = 32, flip|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @sw1_flip_of_atom_64(%x: memref<256x256xbf16>) attributes {gpu.kernel} {
    // expected-error@+2 {{got swizzle = 128, atom = 64, flip}}
    // expected-note@+1 {{#copy.smem<swizzle = 128, atom = 32, flip>}}
    %buf = copy.alloc_smem : memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 64, flip>>
    func.return
  }
}

// -----

// rule: SW2
// fix: s|"sm_90a"|"sm_100a"|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @sw2_atom_on_hopper(%x: memref<256x256xbf16>) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 32>>
    // expected-error@+2 {{'copy.async_copy' op with CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B needs a target with Blackwell tensor maps (packed 4- and 6-bit types, 128B_ATOM swizzles) (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_90a}}
    // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a, or allocate the buffer with #copy.smem<swizzle = 128> (16-byte atoms)}}
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xbf16> to memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 32>>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    func.return
  }
}

// -----

// rule: SW3
// fix: s| map(%m : !copy.tensormap<64x64xbf16, swizzle 128>)||
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @sw3_atom_through_map_value(%x: memref<256x256xbf16>) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %m = copy.tensormap_global %x slot %c0 of 1 : memref<256x256xbf16> -> !copy.tensormap<64x64xbf16, swizzle 128>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 64>>
    // expected-error@+2 {{Expected a copy through a tensor-map value to move a buffer of 16-byte swizzle atoms without align16, got CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B: a !copy.tensormap type has neither}}
    // expected-note@+1 {{drop map(...) to use the kernel's .param map, which carries the atom, or allocate the buffer with #copy.smem<swizzle = 128>}}
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<64x64xbf16, swizzle 128>) : memref<256x256xbf16> to memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 64>>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    func.return
  }
}

// -----

// rule: SW4
// fix: s|, atom = 32>|>|
// fix: s|, atom = 32>|>|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @sw4_descriptor_of_atom_32(%slot: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %a = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128, atom = 32>>
    // expected-error@+2 {{a matrix descriptor takes swizzles of 16-byte atoms (and 32-byte ones, MN-major, in tcgen05's form) only, got CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B in memref<2x128x64xf16, #copy.smem<swizzle = 128, atom = 32>>}}
    // expected-note@+1 {{drop the atom: allocate the buffer with #copy.smem<swizzle = 128> (a TMA load writes it with CU_TENSOR_MAP_SWIZZLE_128B)}}
    %d = copy.matrix_descriptor %a[%slot] major k tcgen05 : memref<2x128x64xf16, #copy.smem<swizzle = 128, atom = 32>> -> i64
    func.return
  }
}

// -----

// rule: SW4
// fix: s|, atom = 32, flip>|>|
// fix: s|, atom = 32, flip>|>|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @sw4_ldmatrix_of_flip(%r: index) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %s = copy.alloc_smem : memref<32x64xf16, #copy.smem<swizzle = 128, atom = 32, flip>>
    // expected-error@+2 {{a 16-byte matrix row takes swizzles of no flip (which splits each 16-byte unit) only, got CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B}}
    // expected-note@+1 {{drop the atom: allocate the buffer with #copy.smem<swizzle = 128>}}
    %v = copy.ldmatrix %s[%r, %c0] num 1 : memref<32x64xf16, #copy.smem<swizzle = 128, atom = 32, flip>> -> vector<1xi32>
    func.return
  }
}

// -----

// rule: PK3
// fix: s|xbf16, #copy.smem<align16>>|xbf16, #copy.smem>|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @pk3_align16_of_bf16() attributes {gpu.kernel} {
    // expected-error@+2 {{Expected f4E2M1FN, f6E2M3FN, f6E3M2FN elements in an align16 buffer (16 packed values to a 16-byte unit), got bf16}}
    // expected-note@+1 {{drop align16: it lays out packed 4- and 6-bit values, 16 to a 16-byte unit}}
    %buf = copy.alloc_smem : memref<64x64xbf16, #copy.smem<align16>>
    func.return
  }
}

// -----

// rule: PK4
// fix: s|xf6E2M3FN, #copy.smem>|xf6E2M3FN, #copy.smem<align16>>|
// fix: s|xf6E2M3FN, #copy.smem>|xf6E2M3FN, #copy.smem<align16>>|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @pk4_fp6_into_packed_smem(%x: memref<256x256xf6E2M3FN>) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : memref<32x128xf6E2M3FN, #copy.smem>
    // expected-error@+2 {{Expected an align16 SMEM buffer for a TMA copy of f6E2M3FN elements: their only map type is 16U6_ALIGN16B, which lays 16 values to a 16-byte unit}}
    // expected-note@+1 {{add align16 to the buffer's memory space: #copy.smem<align16>}}
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf6E2M3FN> to memref<32x128xf6E2M3FN, #copy.smem>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    func.return
  }
}

// -----

// rule: PK5
// fix: s|32x64xf4E2M1FN|32x128xf4E2M1FN|
// fix: s|32x64xf4E2M1FN|32x128xf4E2M1FN|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @pk5_align16_box_of_64(%x: memref<256x256xf4E2M1FN>) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : memref<32x64xf4E2M1FN, #copy.smem<align16>>
    // expected-error@+2 {{Expected a 16U4_ALIGN16B map's box to be 128 elements in its innermost dim and its array's innermost dim a multiple of 128 elements, rows a multiple of 32 bytes apart, got a box of [32, 64] over memref<256x256xf4E2M1FN>}}
    // expected-note@+1 {{copy boxes of 128 elements along the innermost dim, and pad the array's rows to a multiple of 128 elements}}
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf4E2M1FN> to memref<32x64xf4E2M1FN, #copy.smem<align16>>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    func.return
  }
}

// -----

// rule: PK5
// fix: s|memref<256x192xf6E3M2FN>|memref<256x256xf6E3M2FN>|
// fix: s|memref<256x192xf6E3M2FN>|memref<256x256xf6E3M2FN>|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @pk5_align16_rows_of_192(%x: memref<256x192xf6E3M2FN>) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : memref<32x128xf6E3M2FN, #copy.smem<align16>>
    // expected-error@+2 {{got a box of [32, 128] over memref<256x192xf6E3M2FN>}}
    // expected-note@+1 {{pad the array's rows to a multiple of 128 elements (memref<256x256xf6E3M2FN>)}}
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x192xf6E3M2FN> to memref<32x128xf6E3M2FN, #copy.smem<align16>>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    func.return
  }
}

// -----

// rule: PK6
// fix: s|#copy.smem<swizzle = 128, atom = 64, align16>|#copy.smem<swizzle = 128, atom = 32, align16>|
// fix: s|#copy.smem<swizzle = 128, atom = 64, align16>|#copy.smem<swizzle = 128, atom = 32, align16>|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @pk6_fp6_load_with_atom_64(%x: memref<256x256xf6E2M3FN>) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : memref<32x128xf6E2M3FN, #copy.smem<swizzle = 128, atom = 64, align16>>
    // expected-error@+2 {{Expected a load through a 16U6_ALIGN16B map to use swizzle NONE or 128B or 128B_ATOM_32B, got 128B_ATOM_64B}}
    // expected-note@+1 {{cuda.h lists 16U4_ALIGN16B for loads only (NONE, 128B, 128B_ATOM_32B) and 16U6_ALIGN16B for loads (the same) and stores (and 128B_ATOM_64B)}}
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf6E2M3FN> to memref<32x128xf6E2M3FN, #copy.smem<swizzle = 128, atom = 64, align16>>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    func.return
  }
}

// -----

// rule: PK6
// fix: s|xf4E2M1FN, #copy.smem<align16>>|xf4E2M1FN, #copy.smem>|
// fix: s|xf4E2M1FN, #copy.smem<align16>>|xf4E2M1FN, #copy.smem>|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @pk6_fp4_align16_store(%y: memref<256x256xf4E2M1FN>) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<32x128xf4E2M1FN, #copy.smem<align16>>
    // expected-error@+2 {{Expected a store through a 16U4_ALIGN16B map to use swizzle (none: the map type loads only), got NONE}}
    // expected-note@+1 {{store the values from a packed (not align16) buffer}}
    copy.async_copy %buf to %y[%c0, %c0] : memref<32x128xf4E2M1FN, #copy.smem<align16>> to memref<256x256xf4E2M1FN>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// rule: PK7
// fix: s| impl bulk oob promise_in_bounds| impl tma|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @pk7_bulk_into_align16(%x: memref<256x128xf4E2M1FN>) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : memref<32x128xf4E2M1FN, #copy.smem<align16>>
    // expected-error@+2 {{Expected a TMA copy of an align16 SMEM buffer: only a 16U4_ALIGN16B or 16U6_ALIGN16B tensor map lays packed values 16 to a 16-byte unit}}
    // expected-note@+1 {{use impl tma}}
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl bulk oob promise_in_bounds : memref<256x128xf4E2M1FN> to memref<32x128xf4E2M1FN, #copy.smem<align16>>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    func.return
  }
}
