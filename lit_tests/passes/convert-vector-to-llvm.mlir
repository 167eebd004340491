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

  // CHECK-LABEL: func.func @gmem_through_an_alignment_promise
  func.func @gmem_through_an_alignment_promise(%y: memref<1000x1000xf32>, %bx: index, %r: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c64 = arith.constant 64 : index
    %v0 = arith.constant 0.0 : f32
    %v = vector.broadcast %v0 : f32 to vector<4xf32>
    %ya = memref.assume_alignment %y, 16 : memref<1000x1000xf32>
    %col = arith.muli %bx, %c64 : index
    // A 16-byte-aligned array (what copy-legalize's thread stores promise), rows of 1000
    // floats (4000 bytes) and a column of a multiple of 64: 16-byte aligned.
    // CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
    vector.store %v, %ya[%r, %col] : memref<1000x1000xf32>, vector<4xf32>
    // The same store into the array itself: only the element's alignment is known.
    // CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr
    vector.store %v, %y[%r, %col] : memref<1000x1000xf32>, vector<4xf32>
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
