// RUN: copy-opt %s --split-input-file --verify-diagnostics --no-verify-protocol

// One bad tensor-map op (copy.tensormap_global, copy.tensormap_replace, a copy through a
// map in global memory) per chunk, named after the rule it breaks (`// rule:` gives the id
// in copy_dialect/rules.toml). The checks: copy_dialect/tensormap.py (the stride rule C1 is
// the host-encoded maps' check, copy_dialect/gmem.py). `// fix: s|OLD|NEW|` lines give the
// edit the note describes; tests/tools/test_fix_notes.py applies them and checks that the result
// verifies.
// -----

// rule: TU1
// fix: s|"sm_90">|"sm_90a">|
func.func @tu1_tensormap_on_sm_90(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90">} {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{'copy.tensormap_global' op needs a target with tensormap.replace (sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f), but the target is sm_90}}
  // expected-note@+1 {{set copy.target to one of sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f (#copy.target<"sm_90a">), or use the kernel's .param tensor maps (drop map(...) from the copies)}}
  %m = copy.tensormap_global %x slot %c0 of 4 : memref<256x256xf32> -> !copy.tensormap<64x64xf32>
  func.return
}

// -----

// rule: TU2
// fix: s|swizzle 48|swizzle 128|
func.func @tu2_map_swizzle(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{Expected a tensor map with a swizzle of 16, 32, 64, 128 bytes and oob zeros or nan, got swizzle 48 and oob zeros}}
  // expected-note@+1 {{write the map type as !copy.tensormap<64x64xf32, swizzle 128, oob nan> (swizzle 16 and oob zeros are the defaults)}}
  %m = copy.tensormap_global %x slot %c0 of 4 : memref<256x256xf32> -> !copy.tensormap<64x64xf32, swizzle 48>
  func.return
}

// -----

// rule: TU3
// fix: s|<64xf32>|<1x64xf32>|
func.func @tu3_map_box_rank(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{Expected the map's box to have one dim per dim of memref<256x256xf32> and its element type, got !copy.tensormap<64xf32>}}
  // expected-note@+1 {{write the box of the copies through it, with a 1 for each leading dim they leave out: !copy.tensormap<1x64xf32>}}
  %m = copy.tensormap_global %x slot %c0 of 4 : memref<256x256xf32> -> !copy.tensormap<64xf32>
  func.return
}

// -----

// rule: TU4
// fix: s|of 4|of 6|
func.func @tu4_slot_past_the_workspace(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  // expected-error@+2 {{Expected a workspace of at least one slot and a slot in [0, 4), got slot 5 of 4}}
  // expected-note@+1 {{give the workspace one slot per block that rewrites its map (of 6 or more here) and index it with the block's index}}
  %m = copy.tensormap_global %x slot %c5 of 4 : memref<256x256xf32> -> !copy.tensormap<64x64xf32>
  func.return
}

// -----

// rule: TU5
// fix: s|global_stride[1]|global_stride[0]|
func.func @tu5_stride_of_the_innermost_dim(%x: memref<256x256xf32>, %s: i64) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %m = copy.tensormap_global %x slot %c0 of 4 : memref<256x256xf32> -> !copy.tensormap<64x64xf32>
  // expected-error@+2 {{Expected global_stride of a rank-2 map to take a dim in [0, 1), got 1}}
  // expected-note@+1 {{global_address takes no dim; global_dim[d] takes d in [0, 2) (outermost first), global_stride[d] d in [0, 1) (the innermost stride is one element)}}
  copy.tensormap_replace %m global_stride[1] to %s : !copy.tensormap<64x64xf32>, i64
  func.return
}

// -----

// rule: TU6
// fix: s|%n: i64|%n: i32|
// fix: s|, i64|, i32|
func.func @tu6_dim_not_i32(%x: memref<256x256xf32>, %n: i64) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %m = copy.tensormap_global %x slot %c0 of 4 : memref<256x256xf32> -> !copy.tensormap<64x64xf32>
  // expected-error@+2 {{Expected global_dim to be an i32, got i64}}
  // expected-note@+1 {{pass an i32 (arith.index_cast / arith.trunci / arith.extui)}}
  copy.tensormap_replace %m global_dim[0] to %n : !copy.tensormap<64x64xf32>, i64
  func.return
}

// -----

// rule: TU6
// fix: s|memref<?xi32>|memref<?xf32>|
// fix: s|memref<?xi32>|memref<?xf32>|
func.func @tu6_address_of_another_type(%x: memref<256x256xf32>, %pool: memref<?xi32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %m = copy.tensormap_global %x slot %c0 of 4 : memref<256x256xf32> -> !copy.tensormap<64x64xf32>
  // expected-error@+2 {{Expected global_address to be an element of a GMEM ref of f32, one index per dim, got memref<?xi32> with 1 indices}}
  // expected-note@+1 {{pass the group's first element: to %pool[%offset] with %pool a GMEM kernel argument of f32 (memref<?xf32>, say)}}
  copy.tensormap_replace %m global_address to %pool[%c0] : !copy.tensormap<64x64xf32>, memref<?xi32>
  func.return
}

// -----

// rule: TU7
// fix: s|arith.constant 0 : i32|arith.constant 1 : i32|
func.func @tu7_empty_dim(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %m = copy.tensormap_global %x slot %c0 of 4 : memref<256x256xf32> -> !copy.tensormap<64x64xf32>
  %zero = arith.constant 0 : i32
  // expected-error@+2 {{Expected a global dim in [1, 2**31), got 0}}
  // expected-note@+1 {{give the dim 1 or more elements (an empty group has no copies: skip its copies instead of mapping it)}}
  copy.tensormap_replace %m global_dim[0] to %zero : !copy.tensormap<64x64xf32>, i32
  func.return
}

// -----

// rule: C1
// fix: s|arith.constant 100 : i64|arith.constant 112 : i64|
func.func @c1_replaced_stride_not_16_bytes(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %m = copy.tensormap_global %x slot %c0 of 4 : memref<256x256xf32> -> !copy.tensormap<64x64xf32>
  %s = arith.constant 100 : i64
  // expected-error@+2 {{async_copy requires all GMEM strides except the last one to be a multiple of 16 bytes}}
  // expected-note@+1 {{the stride is 100 bytes: pad the rows to a multiple of 16 bytes, 112 here (4 elements of f32)}}
  copy.tensormap_replace %m global_stride[0] to %s : !copy.tensormap<64x64xf32>, i64
  func.return
}

// -----

// rule: TU8
// fix: s|arith.constant 3 : index|arith.constant 4 : index|
func.func @tu8_address_not_16_bytes(%x: memref<256x256xf32>, %pool: memref<?xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %m = copy.tensormap_global %x slot %c0 of 4 : memref<256x256xf32> -> !copy.tensormap<64x64xf32>
  %c3 = arith.constant 3 : index
  // expected-error@+2 {{Expected a global address 16-byte aligned for TMA, got element 3 (12 bytes past the ref's start)}}
  // expected-note@+1 {{start each group at a multiple of 4 elements of f32}}
  copy.tensormap_replace %m global_address to %pool[%c3] : !copy.tensormap<64x64xf32>, memref<?xf32>
  func.return
}

// -----

// rule: TU9
// fix: s|32x64xf32|64x64xf32|
// fix: s|32x64xf32|64x64xf32|
func.func @tu9_map_of_another_box(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %m = copy.tensormap_global %x slot %c0 of 4 : memref<256x256xf32> -> !copy.tensormap<32x64xf32>
  // expected-error@+2 {{Expected a TMA copy through a map of its GMEM ref with its tensor map !copy.tensormap<64x64xf32>, got !copy.tensormap<32x64xf32>}}
  // expected-note@+1 {{give the map the copy's type !copy.tensormap<64x64xf32> and make it with copy.tensormap_global of the copy's GMEM ref %x, or drop map(...) to use the kernel's .param map}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<32x64xf32>) : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: TU9
// fix: s|%y slot|%x slot|
func.func @tu9_map_of_another_array(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %m = copy.tensormap_global %y slot %c0 of 4 : memref<256x256xf32> -> !copy.tensormap<64x64xf32>
  // expected-error@+2 {{Expected a TMA copy through a map of its GMEM ref with its tensor map !copy.tensormap<64x64xf32>, got a map of another array}}
  // expected-note@+1 {{give the map the copy's type !copy.tensormap<64x64xf32> and make it with copy.tensormap_global of the copy's GMEM ref %x, or drop map(...) to use the kernel's .param map}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<64x64xf32>) : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: TU13
// fix: s|, %m: !copy.tensormap<64x64xf32>) attributes {copy.target = #copy.target<"sm_90a">} {|) attributes {copy.target = #copy.target<"sm_90a">} { %c0 = arith.constant 0 : index %m = copy.tensormap_global %x slot %c0 of 1 : memref<256x256xf32> -> !copy.tensormap<64x64xf32>|
func.func @tu13_map_from_an_argument(%x: memref<256x256xf32>, %m: !copy.tensormap<64x64xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{Expected the map to be made by copy.tensormap_global, got %m of type !copy.tensormap<64x64xf32>}}
  // expected-note@+1 {{make the map in the kernel: %m = copy.tensormap_global %x slot %s of N : <%x's type> -> !copy.tensormap<64x64xf32>}}
  copy.tensormap_fence_acquire %m : !copy.tensormap<64x64xf32>
  func.return
}

// -----

// rule: L9
// fix: s| {l2_promotion = 256 : i64}||
func.func @l9_promotion_through_a_global_map(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %m = copy.tensormap_global %x slot %c0 of 4 : memref<256x256xf32> -> !copy.tensormap<64x64xf32>
  // expected-error@+2 {{Expected no l2_promotion on a copy through a map in global memory: the map's promotion is that of the map the runtime encodes for it (128 bytes)}}
  // expected-note@+1 {{drop l2_promotion, or drop map(...) to use the kernel's .param map}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<64x64xf32>) {l2_promotion = 256 : i64} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}
