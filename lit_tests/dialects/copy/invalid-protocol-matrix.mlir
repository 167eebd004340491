// RUN: copy-opt %s --split-input-file --verify-diagnostics

// copy.ldmatrix and copy.stmatrix are the warp's reads and writes of SMEM: the protocol checks
// them as threads' loads and stores (P1-P3), one mistake per chunk; protocol-matrix.mlir holds
// the fixed kernels. `// fix: s|OLD|NEW|` lines give the edit the note describes
// (tests/tools/test_fix_notes.py).

// A warp reads a TMA-loaded tile with ldmatrix before it waits for the load.
// rule: P1
// fix: s|  %frag = copy.ldmatrix|  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> %frag = copy.ldmatrix|
func.func @p1_ldmatrix_before_the_wait(%a: memref<64x64xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %false = arith.constant false
  %t = gpu.thread_id x
  %row = arith.remui %t, %c8 : index
  %tile = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 128>>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{the copy that fills it}}
  copy.async_copy %a[%c0, %c0] to %tile barrier %bar[%c0] : memref<64x64xf16> to memref<64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
  // expected-error@+2 {{the warp's ldmatrix reads %tile[?, 0] before the copy that fills %tile completes}}
  // expected-note@+1 {{wait on barrier 0 of %bar for phase 0 (copy.barrier_wait with parity 0) before the read}}
  %frag = copy.ldmatrix %tile[%row, %c0] num 1 : memref<64x64xf16, #copy.smem<swizzle = 128>> -> vector<2xf16>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// An epilogue writes its tile with stmatrix while the TMA store of the previous tile may
// still be reading it.
// rule: P2
// fix: s|  copy.stmatrix %v, %out[%row, %c8]|  copy.wait_group bulk 0 read_only copy.stmatrix %v, %out[%row, %c8]|
func.func @p2_stmatrix_under_a_store(%c: memref<64x64xf16>, %v: vector<2xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %t = gpu.thread_id x
  %row = arith.remui %t, %c8 : index
  %out = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 128>>
  copy.stmatrix %v, %out[%row, %c0] num 1 : vector<2xf16>, memref<64x64xf16, #copy.smem<swizzle = 128>>
  copy.fence_async_shared
  gpu.barrier
  // expected-note@+1 {{the TMA store that reads it}}
  copy.async_copy %out to %c[%c0, %c0] : memref<64x64xf16, #copy.smem<swizzle = 128>> to memref<64x64xf16>
  copy.commit_group bulk
  // expected-error@+2 {{the warp's stmatrix writes %out[?, 8] while a TMA store from it may still be reading it}}
  // expected-note@+1 {{commit the store and wait until it has read its source (copy.commit_group bulk, then copy.wait_group bulk 0 read_only, or a count that covers its group) before the write}}
  copy.stmatrix %v, %out[%row, %c8] num 1 : vector<2xf16>, memref<64x64xf16, #copy.smem<swizzle = 128>>
  copy.wait_group bulk 0 read_only
  func.return
}
