// Wide thread accesses of swizzled SMEM that stay inside one 16-byte unit (rule SV1) lower
// to one ld/st.shared.v* at the swizzled place of their first element (the layout's XOR of
// the unit with the row in the period). tests/passes/test_thread_ops_assemble.py assembles
// these kernels for every target; tests/interpreter/test_swizzled_vectors.py runs them.

// RUN: copy-opt %s --split-input-file -p convert-vector-to-llvm --no-verify-protocol | filecheck %s --check-prefix=LLVM
// RUN: copy-opt %s --split-input-file -t ptx | filecheck %s

// LLVM-LABEL: func.func @swizzled_vectors
// LLVM: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// LLVM: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<4xf16>, !llvm.ptr<3>
// LLVM: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> vector<2xbf16>
// LLVM: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<16xi8>, !llvm.ptr<3>

// CHECK: .entry swizzled_vectors(
// CHECK: xor.b{{32|64}}
// CHECK: ld.shared.v4.b32
// CHECK: st.shared.v2.b32
// CHECK: ld.shared.v2.b16
// CHECK: st.shared.v4.b32
// CHECK-NOT: .extern .func
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @swizzled_vectors(%out: memref<128x32xf32>, %k: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %a = copy.alloc_smem : memref<128x32xf32, #copy.smem<swizzle = 128>>
    %h = copy.alloc_smem : memref<128x64xf16, #copy.smem<swizzle = 64>>
    %b = copy.alloc_smem : memref<128x64xbf16, #copy.smem<swizzle = 32>>
    %q = copy.alloc_smem : memref<128x64xi8, #copy.smem<swizzle = 64>>
    // 16 bytes of f32 at a column that is a multiple of 4.
    %u = arith.remui %k, %c8 : index
    %col4 = arith.muli %u, %c4 : index
    %v = vector.load %a[%tid, %col4] : memref<128x32xf32, #copy.smem<swizzle = 128>>, vector<4xf32>
    // 8 bytes of f16 at a multiple of 4 elements.
    %col8 = arith.muli %k, %c4 : index
    %w = arith.truncf %v : vector<4xf32> to vector<4xf16>
    vector.store %w, %h[%tid, %col8] : memref<128x64xf16, #copy.smem<swizzle = 64>>, vector<4xf16>
    // 4 bytes of bf16 at an even column.
    %col2 = arith.muli %k, %c2 : index
    %x = vector.load %b[%tid, %col2] : memref<128x64xbf16, #copy.smem<swizzle = 32>>, vector<2xbf16>
    // 16 bytes of i8 at a multiple of 16.
    %u4 = arith.remui %k, %c4 : index
    %col16 = arith.muli %u4, %c16 : index
    %y = arith.constant dense<7> : vector<16xi8>
    vector.store %y, %q[%tid, %col16] : memref<128x64xi8, #copy.smem<swizzle = 64>>, vector<16xi8>
    vector.store %v, %out[%tid, %c0] : memref<128x32xf32>, vector<4xf32>
    %xf = arith.extf %x : vector<2xbf16> to vector<2xf32>
    vector.store %xf, %out[%tid, %c4] : memref<128x32xf32>, vector<2xf32>
    func.return
  }
}
