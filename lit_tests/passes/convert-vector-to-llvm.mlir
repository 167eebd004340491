// RUN: copy-opt %s -p convert-vector-to-llvm --no-verify-protocol | filecheck %s

// Wide thread accesses of SMEM tiles: the alignment given to LLVM is what the indices prove.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @aligned_by_the_loop
  func.func @aligned_by_the_loop(%t: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c4 = arith.constant 4 : index
    %c512 = arith.constant 512 : index
    %c8192 = arith.constant 8192 : index
    %c128 = arith.constant 128 : index
    %buf = copy.alloc_smem : memref<64x128xf32, #copy.smem>
    %first = arith.muli %t, %c4 : index
    scf.for %i = %first to %c8192 step %c512 {
      %r = arith.divui %i, %c128 : index
      %c = arith.remui %i, %c128 : index
      // i = 4t + 512k, so c = i mod 128 is a multiple of 4: 16-byte aligned.
      // CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
      %v = vector.load %buf[%r, %c] : memref<64x128xf32, #copy.smem>, vector<4xf32>
      // CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
      vector.store %v, %buf[%r, %c] : memref<64x128xf32, #copy.smem>, vector<4xf32>
    }
    func.return
  }

  // CHECK-LABEL: func.func @unknown_column
  func.func @unknown_column(%c: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<64x128xf32, #copy.smem>
    // Nothing is known of %c: element alignment, and LLVM splits the access.
    // CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> vector<4xf32>
    %v = vector.load %buf[%c0, %c] : memref<64x128xf32, #copy.smem>, vector<4xf32>
    func.return
  }

  // CHECK-LABEL: func.func @splat
  func.func @splat(%a: f32) -> vector<4xf32> {
    // CHECK: llvm.insertelement %{{.*}}, %{{.*}}[%{{.*}} : i32] : vector<4xf32>
    // CHECK: llvm.shufflevector %{{.*}}, %{{.*}} [0, 0, 0, 0] : vector<4xf32>
    %v = vector.broadcast %a : f32 to vector<4xf32>
    func.return %v : vector<4xf32>
  }
}
