// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid copy.im2col_load per chunk, named after the rule it breaks (`// rule:` gives the
// id in copy_dialect/rules.toml). The checks: copy_dialect/im2col.py, and tma.py for the rules
// im2col maps share with tiled ones. `// fix: s|OLD|NEW|` lines give the edit the note
// describes; tests/tools/test_fix_notes.py applies them and checks that the result verifies.

// rule: IC1
// fix: s|memref<64x16xf16>|memref<1x64x16xf16>|
// fix: s|memref<64x16xf16>|memref<1x64x16xf16>|
// fix: s|%x[%c0, %c0]|%x[%c0, %c0, %c0]|
// fix: s|offsets []|offsets [%t]|
// fix: s|lower = array<i64>|lower = array<i64: 0>|
// fix: s|upper = array<i64>|upper = array<i64: 0>|
func.func @ic1_rank_2(%x: memref<64x16xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected an im2col tensor of rank 3, 4 or 5 (NWC, NHWC, NDHWC), got rank 2 (memref<64x16xf16>)}}
  // expected-note@+1 {{add the batch and spatial dims (size 1 where there are none)}}
  copy.im2col_load %x[%c0, %c0] offsets [] to %buf barrier %bar[%c0] {lower = array<i64>, upper = array<i64>} : memref<64x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: IC2
// fix: s|offsets [%t]|offsets [%t, %t]|
func.func @ic2_one_offset_for_two_spatial_dims(%x: memref<2x9x9x16xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected 2 im2col offsets (one per spatial dim of the rank-4 tensor), got 1}}
  // expected-note@+1 {{give one i16 offset per spatial dim (2)}}
  copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%t] to %buf barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: IC3
// fix: s|memref<4x16x16xf16, #copy.smem>|memref<64x16xf16, #copy.smem>|
// fix: s|memref<4x16x16xf16, #copy.smem>|memref<64x16xf16, #copy.smem>|
func.func @ic3_box_of_rank_3(%x: memref<2x9x9x16xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<4x16x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected the SMEM box of an im2col load to be [pixels, channels], got [4, 16, 16]}}
  // expected-note@+1 {{make each slot a 2-D box of pixels x channels, e.g. memref<64x16xf16, #copy.smem>}}
  copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>} : memref<2x9x9x16xf16> to memref<4x16x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: IC4
// fix: s|upper = array<i64: -1>|upper = array<i64: -1, -1>|
func.func @ic4_one_upper_corner_for_two_spatial_dims(%x: memref<2x9x9x16xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected 2 upper corner values (one per spatial dim of the rank-4 tensor), got 1}}
  // expected-note@+1 {{give upper = array<i64: ...> one value per spatial dim (2)}}
  copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: IC5
// fix: s|lower = array<i64: -200, -1>|lower = array<i64: -128, -1>|
func.func @ic5_lower_corner_past_8_bits(%x: memref<2x9x9x16xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected the lower corner of a rank-4 im2col map in [-128, 127], got -200 at spatial dim 0}}
  // expected-note@+1 {{keep the corners of a rank-4 map in [-128, 127] (8 bits)}}
  copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: -200, -1>, upper = array<i64: -1, -1>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: IC6
// fix: s|upper = array<i64: -9, -1>|upper = array<i64: -8, -1>|
func.func @ic6_empty_bounding_box(%x: memref<2x9x9x16xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected a bounding box of non-zero area, got an empty one along spatial dim 0: [0, 9 + -9) for an extent of 9}}
  // expected-note@+1 {{raise upper above -9, e.g. to -8}}
  copy.im2col_load %x[%c0, %c0, %m1, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: 0, -1>, upper = array<i64: -9, -1>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: IC7
// fix: s|memref<16x512xf16, #copy.smem>|memref<16x256xf16, #copy.smem>|
// fix: s|memref<16x512xf16, #copy.smem>|memref<16x256xf16, #copy.smem>|
func.func @ic7_512_channels(%x: memref<2x9x9x512xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<16x512xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected 1 to 256 channels per pixel, got 512}}
  // expected-note@+1 {{load at most 256 channels per im2col load}}
  copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>} : memref<2x9x9x512xf16> to memref<16x512xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: IC8
// fix: s|memref<2048x8xf16, #copy.smem>|memref<1024x8xf16, #copy.smem>|
// fix: s|memref<2048x8xf16, #copy.smem>|memref<1024x8xf16, #copy.smem>|
func.func @ic8_2048_pixels(%x: memref<2x33x33x8xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<2048x8xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected 1 to 1024 pixels per column, got 2048}}
  // expected-note@+1 {{load at most 1024 pixels per im2col load}}
  copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>} : memref<2x33x33x8xf16> to memref<2048x8xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: IC9
// fix: s|strides = array<i64: 2>|strides = array<i64: 2, 2>|
func.func @ic9_one_stride_for_two_spatial_dims(%x: memref<2x9x9x16xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected 2 traversal strides (one per spatial dim of the rank-4 tensor), got 1}}
  // expected-note@+1 {{give strides = array<i64: ...> one value per spatial dim (2), or drop it for strides 1}}
  copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>, strides = array<i64: 2>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: IC10
// fix: s|strides = array<i64: 9, 1>|strides = array<i64: 8, 1>|
func.func @ic10_stride_9(%x: memref<2x9x9x16xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected traversal strides in [1, 8], got 9 at spatial dim 0}}
  // expected-note@+1 {{a tensor map strides 1 to 8 elements}}
  copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>, strides = array<i64: 9, 1>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: IC11
// fix: s|%big = arith.constant 300 : i16|%big = arith.constant 255 : i16|
func.func @ic11_offset_past_8_bits(%x: memref<2x9x9x16xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %big = arith.constant 300 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected the im2col offsets of a rank-4 map in [0, 255], got 300 (as unsigned 16 bits: 300) at spatial dim 0}}
  // expected-note@+1 {{keep each offset in [0, 255] (unsigned, 8 bits for rank 4)}}
  copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%big, %t] to %buf barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// The channel coordinate is the innermost: 3 f16 elements are 6 bytes, which the equivalent
// tiled copy breaks as TR12 (issue S: it verified).
// rule: IC13
// fix: s|%c3 = arith.constant 3 : index|%c3 = arith.constant 8 : index|
func.func @ic13_channel_coordinate_6_bytes(%x: memref<2x9x9x32xf16>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected the channel coordinate of a TMA im2col load to be a multiple of 16 bytes, got 3 (6 bytes of f16)}}
  // expected-note@+1 {{start the channel block at a multiple of 8 elements (e.g. 0); a channel block that starts elsewhere is an illegal instruction, as a tiled copy's innermost coordinate (TR12)}}
  copy.im2col_load %x[%c0, %m1, %m1, %c3] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>} : memref<2x9x9x32xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// A negative channel coordinate is held to it too (the TMA unit fills what lies before the
// array, from a 16-byte boundary): -2 f32 elements are -8 bytes.
// rule: IC13
// fix: s|%m2 = arith.constant -2 : index|%m2 = arith.constant -4 : index|
func.func @ic13_negative_channel_coordinate(%x: memref<4x33x16xf32>) {
  %c0 = arith.constant 0 : index
  %m2 = arith.constant -2 : index
  %t = arith.constant 0 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected the channel coordinate of a TMA im2col load to be a multiple of 16 bytes, got -2 (-8 bytes of f32)}}
  // expected-note@+1 {{start the channel block at a multiple of 4 elements (e.g. -4)}}
  copy.im2col_load %x[%c0, %c0, %m2] offsets [%t] to %buf barrier %bar[%c0] {lower = array<i64: -2>, upper = array<i64: 0>} : memref<4x33x16xf32> to memref<64x16xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: C4
// fix: s|memref<64x12xf16, #copy.smem>|memref<64x16xf16, #copy.smem>|
// fix: s|memref<64x12xf16, #copy.smem>|memref<64x16xf16, #copy.smem>|
func.func @c4_im2col_channels_of_24_bytes(%x: memref<2x9x9x16xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x12xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Async copies require the number of bits copied along the last dimension to be divisible by 128, but got 192}}
  // expected-note@+1 {{make the innermost box dim a multiple of 8 elements (f16): 16 rather than 12}}
  copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>} : memref<2x9x9x16xf16> to memref<64x12xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: C5
// fix: s|#copy.smem<swizzle = 32>|#copy.smem<swizzle = 128>|
// fix: s|#copy.smem<swizzle = 32>|#copy.smem<swizzle = 128>|
func.func @c5_im2col_channels_wider_than_the_swizzle(%x: memref<2x9x9x64xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = arith.constant 1 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 32>>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Async copies with swizzle=32 require the last dimension of the slice to be at most 32 bytes i.e. 16 elements, but got 64 elements.}}
  // expected-note@+1 {{or use swizzle = 128}}
  copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>} : memref<2x9x9x64xf16> to memref<64x64xf16, #copy.smem<swizzle = 32>>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: A1
// fix: s|sm_80|sm_90a|
func.func @a1_im2col_before_sm90(%x: memref<2x9x9x16xf16>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %t = arith.constant 0 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{'copy.im2col_load' op needs a target with TMA (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{target sm_90 or newer, or gather the pixels with cp.async: impl cp_async (each issuing thread arrives once on the barrier: count them in its arrivals), or write the kernel for sm_90a and run copy-opt -p 'copy-legalize{target=sm_80}'}}
  copy.im2col_load %x[%c0, %c0, %c0, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: 0, 0>, upper = array<i64: 0, 0>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: B1
// fix: s|memref<64x16xbf16, #copy.smem>|memref<64x16xf16, #copy.smem>|
// fix: s|memref<64x16xbf16, #copy.smem>|memref<64x16xf16, #copy.smem>|
func.func @b1_im2col_converts(%x: memref<2x9x9x16xf16>) {
  %c0 = arith.constant 0 : index
  %t = arith.constant 0 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xbf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected same element type, got f16 and bf16}}
  // expected-note@+1 {{copies do not convert: give both refs the same element type, f16 or bf16}}
  copy.im2col_load %x[%c0, %c0, %c0, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: 0, 0>, upper = array<i64: 0, 0>} : memref<2x9x9x16xf16> to memref<64x16xbf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: IC12
// fix: s|impl bulk|impl cp_async|
func.func @ic12_im2col_bulk(%x: memref<2x9x9x16xf16>) attributes {copy.target = #copy.target<"sm_80">, gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %t = arith.constant 0 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 128 : !copy.barrier<1>
  // expected-error@+2 {{Expected an im2col load by TMA or cp.async, got impl bulk}}
  // expected-note@+1 {{use impl tma (sm_90 or newer), or impl cp_async (the threads gather the pixels): a bulk copy has no im2col mode}}
  copy.im2col_load %x[%c0, %c0, %c0, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] impl bulk {lower = array<i64: 0, 0>, upper = array<i64: 0, 0>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: H2
// fix: s|#copy.smem<swizzle = 32>|#copy.smem|
// fix: s|#copy.smem<swizzle = 32>|#copy.smem|
func.func @h2_im2col_cp_async_swizzled(%x: memref<2x9x9x16xf16>) attributes {copy.target = #copy.target<"sm_80">, gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %t = arith.constant 0 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem<swizzle = 32>>
  %bar = copy.barrier_init arrivals 128 : !copy.barrier<1>
  // expected-error@+2 {{Swizzle is not supported for CP_ASYNC copies}}
  // expected-note@+1 {{drop the swizzle (cp.async writes a plain #copy.smem buffer), or use impl tma on sm_90 or newer}}
  copy.im2col_load %x[%c0, %c0, %c0, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] impl cp_async {lower = array<i64: 0, 0>, upper = array<i64: 0, 0>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem<swizzle = 32>>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: L3
// fix: s| l2 evict_last||
func.func @l3_im2col_cp_async_l2(%x: memref<2x9x9x16xf16>) attributes {copy.target = #copy.target<"sm_80">, gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %t = arith.constant 0 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 128 : !copy.barrier<1>
  // expected-error@+2 {{Expected no L2 cache policy on a cp.async copy: the cp.async lowering has no cache-hint operand}}
  // expected-note@+1 {{drop the L2 policy (l2), or use impl tma on sm_90 or newer}}
  copy.im2col_load %x[%c0, %c0, %c0, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] impl cp_async l2 evict_last {lower = array<i64: 0, 0>, upper = array<i64: 0, 0>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: MB13
// fix: s|, arrive = false||
func.func @mb13_im2col_cp_async_no_arrival(%x: memref<2x9x9x16xf16>) attributes {copy.target = #copy.target<"sm_80">, gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %t = arith.constant 0 : i16
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 128 : !copy.barrier<1>
  // expected-error@+2 {{a cp.async copy on a barrier arrives on it (cp.async.mbarrier.arrive.noinc: one arrival per issuing thread once its chunks land), but it has arrive = false}}
  // expected-note@+1 {{drop arrive = false and count one arrival per issuing thread in the barrier's arrivals, or drop the barrier and wait with copy.commit_group cp_async + copy.wait_group cp_async}}
  copy.im2col_load %x[%c0, %c0, %c0, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] impl cp_async {lower = array<i64: 0, 0>, upper = array<i64: 0, 0>, arrive = false} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// rule: K4
// fix: s|%big = arith.constant 4294967297 : index|%big = arith.constant 0 : index|
// Image 2^32 + 1: the coordinate is .s32, and the load would read image 1.
func.func @k4_im2col_coordinate_beyond_32_bits(%x: memref<?x9x9x16xf16>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %big = arith.constant 4294967297 : index
  %t = arith.constant 0 : i16
  %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected the coordinates of a TMA im2col load in the signed 32-bit range [-2147483648, 2147483647], got 4294967297 at index 0: the instruction takes .s32 coordinates, and 4294967297 would address 1}}
  // expected-note@+1 {{pass the kernel a view of the array that starts at index 4294967297 of dim 0 (on the host, a slice), and index it from 0 there}}
  copy.im2col_load %x[%big, %c0, %c0, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: 0, 0>, upper = array<i64: 0, 0>} : memref<?x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
  func.return
}
