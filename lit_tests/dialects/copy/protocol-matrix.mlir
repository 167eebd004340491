// RUN: copy-opt %s --split-input-file --verify-diagnostics
// RUN: copy-opt %s --split-input-file | filecheck %s

// copy.ldmatrix and copy.stmatrix in kernels whose protocol is correct: the fixed kernels of
// invalid-protocol-matrix.mlir, with no finding (no error, no warning).

// A warp reads a TMA-loaded tile with ldmatrix after the wait.
// CHECK-LABEL: func.func @ldmatrix_after_the_wait
func.func @ldmatrix_after_the_wait(%a: memref<64x64xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %false = arith.constant false
  %t = gpu.thread_id x
  %row = arith.remui %t, %c8 : index
  %tile = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 128>>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %a[%c0, %c0] to %tile barrier %bar[%c0] : memref<64x64xf16> to memref<64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // CHECK: copy.ldmatrix
  %frag = copy.ldmatrix %tile[%row, %c0] num 1 : memref<64x64xf16, #copy.smem<swizzle = 128>> -> vector<2xf16>
  func.return
}

// -----

// An epilogue writes two tiles with stmatrix, the second after the first's store has read it.
// CHECK-LABEL: func.func @stmatrix_after_the_store_read
func.func @stmatrix_after_the_store_read(%c: memref<64x64xf16>, %v: vector<2xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %t = gpu.thread_id x
  %row = arith.remui %t, %c8 : index
  %out = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 128>>
  copy.stmatrix %v, %out[%row, %c0] num 1 : vector<2xf16>, memref<64x64xf16, #copy.smem<swizzle = 128>>
  copy.fence_async_shared
  gpu.barrier
  copy.async_copy %out to %c[%c0, %c0] : memref<64x64xf16, #copy.smem<swizzle = 128>> to memref<64x64xf16>
  copy.commit_group bulk
  copy.wait_group bulk 0 read_only
  // CHECK: copy.stmatrix
  copy.stmatrix %v, %out[%row, %c8] num 1 : vector<2xf16>, memref<64x64xf16, #copy.smem<swizzle = 128>>
  copy.wait_group bulk 0 read_only
  func.return
}
