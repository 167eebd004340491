// RUN: not copy-opt %s --split-input-file 2>&1 | filecheck %s

// The five messages of JAX's Mosaic GPU that the design keeps verbatim, as copy-opt prints
// them: file:line:col, the source line with a caret, and a note with the fix.

// fix: s|impl cp_async|impl tma|
func.func @reduction_needs_tma(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // CHECK: seed-diagnostics.mlir:14:3: error: 'copy.async_copy' op Only the TMA implementation supports reductions
  // CHECK-NEXT: copy.async_copy %buf to %x[%c0, %c0] impl cp_async reduce add
  // CHECK-NEXT: ^
  // CHECK-NEXT: seed-diagnostics.mlir:14:3: note: use impl tma on sm_90 or newer
  copy.async_copy %buf to %x[%c0, %c0] impl cp_async reduce add : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  func.return
}

// -----

// fix: s|impl cp_async|impl tma|
// fix: s|%buf = copy.alloc_smem|%bar = copy.barrier_init arrivals 1 : !copy.barrier<1> %buf = copy.alloc_smem|
// fix: s|to %buf |to %buf barrier %bar[%c0] |
// fix: s|to memref<64x64xf32, #copy.smem>|to memref<64x64xf32, #copy.smem>, !copy.barrier<1>|
func.func @collective_needs_tma(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // CHECK: seed-diagnostics.mlir:31:3: error: 'copy.async_copy' op Only the TMA implementation supports collective copies
  // CHECK-NEXT: copy.async_copy %x[%c0, %c0] to %buf impl cp_async
  // CHECK-NEXT: ^
  // CHECK-NEXT: seed-diagnostics.mlir:31:3: note: use impl tma on sm_90a, with a barrier (barrier %bar[%i])
  copy.async_copy %x[%c0, %c0] to %buf impl cp_async {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// fix: s|impl cp_async|impl tma|
// fix: s|%buf = copy.alloc_smem|%bar = copy.barrier_init arrivals 1 : !copy.barrier<1> %buf = copy.alloc_smem|
// fix: s|to %buf |to %buf barrier %bar[%c0] |
// fix: s|to memref<64x64xf32, #copy.smem>|to memref<64x64xf32, #copy.smem>, !copy.barrier<1>|
func.func @leader_tracked_needs_tma(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  // CHECK: seed-diagnostics.mlir:48:3: error: 'copy.async_copy' op Only the TMA implementation supports leader_tracked copies
  // CHECK-NEXT: copy.async_copy %x[%c0, %c0] to %buf impl cp_async leader_tracked <partitioned 0>
  // CHECK-NEXT: ^
  // CHECK-NEXT: seed-diagnostics.mlir:48:3: note: use impl tma on sm_100a, with a barrier (barrier %bar[%i])
  copy.async_copy %x[%c0, %c0] to %buf impl cp_async leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
  func.return
}

// -----

// fix: s| barrier %bar[%c0]||
// fix: s|, !copy.barrier<1>||
func.func @barrier_needs_hopper(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // CHECK: seed-diagnostics.mlir:64:3: error: 'copy.async_copy' op copy_gmem_to_smem with a barrier is only supported Hopper and newer GPUs, which use the TMA implementation
  // CHECK-NEXT: copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0]
  // CHECK-NEXT: ^
  // CHECK-NEXT: seed-diagnostics.mlir:64:3: note: drop the barrier and wait with copy.commit_group cp_async + copy.wait_group cp_async, or use impl tma on sm_90+, or name impl cp_async to track the copy with the barrier (each issuing thread arrives once: count them in its arrivals), or write the kernel for sm_90a and run copy-opt -p 'copy-legalize{target=sm_80}'{{$}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// fix: s|copy.tmem_load %buf[%col] shape shape_32x32b num 4 : memref<128x64xf32, #copy.smem> -> vector<4xf32>|memref.load %buf[%col, %col] : memref<128x64xf32, #copy.smem>|
func.func @tmem_load_needs_tmem(%col: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %buf = copy.alloc_smem : memref<128x64xf32, #copy.smem>
  // CHECK: seed-diagnostics.mlir:77:3: error: 'copy.tmem_load' op Async load only supports TMEM refs
  // CHECK-NEXT: %v = copy.tmem_load %buf[%col] shape shape_32x32b num 4
  // CHECK-NEXT: ^
  // CHECK-NEXT: seed-diagnostics.mlir:77:3: note: got a ref in SMEM; load SMEM or GMEM from threads with memref.load, and copy GMEM to SMEM with copy.async_copy
  %v = copy.tmem_load %buf[%col] shape shape_32x32b num 4 : memref<128x64xf32, #copy.smem> -> vector<4xf32>
  func.return
}
