// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// copy.ldmatrix and copy.stmatrix: each form in its custom syntax, printed back after a trip
// through the generic form (CHECK), and the generic form itself (CHECK-GENERIC). Every
// kernel here is compiled and assembled for each target it verifies for by
// tests/passes/test_thread_ops_assemble.py.

// The b16 forms on Hopper: x1/x2/x4, trans, registers as i32 or as f16/bf16 pairs, in
// swizzled and unswizzled SMEM; each thread's row is at a column that is a multiple of 8.
// CHECK-LABEL: func.func @b16
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "b16"
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @b16(%out: memref<32x64xbf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>} {
    %lane = gpu.lane_id
    %c3 = arith.constant 3 : index
    %c8 = arith.constant 8 : index
    %q = arith.remui %lane, %c8 : index
    %col = arith.muli %q, %c8 : index
    %a = copy.alloc_smem : memref<32x64xf16, #copy.smem<swizzle = 128>>
    %b = copy.alloc_smem : memref<32x64xbf16, #copy.smem>
    // CHECK: %{{.*}} = copy.ldmatrix %{{.*}}[%{{.*}}, %{{.*}}] num 4 : memref<32x64xf16, #copy.smem<swizzle = 128>> -> vector<8xf16>
    // CHECK-GENERIC: "copy.ldmatrix"(%{{.*}}, %{{.*}}, %{{.*}}) <{num = 4 : i32}> : (memref<32x64xf16, #copy.smem<swizzle = 128>>, index, index) -> vector<8xf16>
    %r4 = copy.ldmatrix %a[%lane, %col] num 4 : memref<32x64xf16, #copy.smem<swizzle = 128>> -> vector<8xf16>
    // CHECK-NEXT: %{{.*}} = copy.ldmatrix %{{.*}}[%{{.*}}, %{{.*}}] num 2 trans : memref<32x64xf16, #copy.smem<swizzle = 128>> -> vector<2xi32>
    // CHECK-GENERIC-NEXT: <{num = 2 : i32, trans}>
    %r2 = copy.ldmatrix %a[%lane, %col] num 2 trans : memref<32x64xf16, #copy.smem<swizzle = 128>> -> vector<2xi32>
    // CHECK-NEXT: %{{.*}} = copy.ldmatrix %{{.*}}[%{{.*}}, %{{.*}}] num 1 : memref<32x64xbf16, #copy.smem> -> vector<2xbf16>
    %r1 = copy.ldmatrix %b[%lane, %col] num 1 : memref<32x64xbf16, #copy.smem> -> vector<2xbf16>
    // CHECK-NEXT: copy.stmatrix %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] num 4 trans : vector<8xf16>, memref<32x64xf16, #copy.smem<swizzle = 128>>
    // CHECK-GENERIC: "copy.stmatrix"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{num = 4 : i32, trans}> : (vector<8xf16>, memref<32x64xf16, #copy.smem<swizzle = 128>>, index, index) -> ()
    copy.stmatrix %r4, %a[%lane, %col] num 4 trans : vector<8xf16>, memref<32x64xf16, #copy.smem<swizzle = 128>>
    // CHECK-NEXT: copy.stmatrix %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] num 2 : vector<2xi32>, memref<32x64xbf16, #copy.smem>
    copy.stmatrix %r2, %b[%lane, %col] num 2 : vector<2xi32>, memref<32x64xbf16, #copy.smem>
    // CHECK-NEXT: copy.stmatrix %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] num 1 : vector<2xbf16>, memref<32x64xbf16, #copy.smem>
    copy.stmatrix %r1, %b[%lane, %col] num 1 : vector<2xbf16>, memref<32x64xbf16, #copy.smem>
    %c0 = arith.constant 0 : index
    %v = copy.ldmatrix %b[%lane, %col] num 4 : memref<32x64xbf16, #copy.smem> -> vector<8xbf16>
    vector.store %v, %out[%lane, %c0] : memref<32x64xbf16>, vector<8xbf16>
    func.return
  }
}

// -----

// ldmatrix alone runs on Ampere (sm_75 and later).
// CHECK-LABEL: func.func @ampere
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @ampere(%out: memref<32x4xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>} {
    %lane = gpu.lane_id
    %c0 = arith.constant 0 : index
    %a = copy.alloc_smem : memref<32x8xf16, #copy.smem>
    // CHECK: copy.ldmatrix %{{.*}}[%{{.*}}, %{{.*}}] num 4 trans : memref<32x8xf16, #copy.smem> -> vector<4xi32>
    %r = copy.ldmatrix %a[%lane, %c0] num 4 trans : memref<32x8xf16, #copy.smem> -> vector<4xi32>
    vector.store %r, %out[%lane, %c0] : memref<32x4xi32>, vector<4xi32>
    func.return
  }
}

// -----

// The 8-bit forms (sm_100a): ldmatrix m16n16 .trans x1/x2 (with the 6- and 4-bit sources
// it widens), stmatrix m16n8 .trans x1/x2/x4.
// CHECK-LABEL: func.func @b8
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "b8"
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @b8() attributes {gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>} {
    %lane = gpu.lane_id
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %q = arith.remui %lane, %c2 : index
    %col = arith.muli %q, %c16 : index
    %s = copy.alloc_smem : memref<32x64xi8, #copy.smem<swizzle = 64>>
    // CHECK: %{{.*}} = copy.ldmatrix %{{.*}}[%{{.*}}, %{{.*}}] shape m16n16 num 1 trans : memref<32x64xi8, #copy.smem<swizzle = 64>> -> vector<8xi8>
    // CHECK-GENERIC: <{shape = #copy<matrix_shape m16n16>, num = 1 : i32, trans}>
    %a = copy.ldmatrix %s[%lane, %col] shape m16n16 num 1 trans : memref<32x64xi8, #copy.smem<swizzle = 64>> -> vector<8xi8>
    // CHECK-NEXT: %{{.*}} = copy.ldmatrix %{{.*}}[%{{.*}}, %{{.*}}] shape m16n16 num 2 trans format b6x16_p32 : memref<32x64xi8, #copy.smem<swizzle = 64>> -> vector<4xi32>
    // CHECK-GENERIC-NEXT: format = #copy<matrix_format b6x16_p32>
    %b = copy.ldmatrix %s[%lane, %col] shape m16n16 num 2 trans format b6x16_p32 : memref<32x64xi8, #copy.smem<swizzle = 64>> -> vector<4xi32>
    // CHECK-NEXT: %{{.*}} = copy.ldmatrix %{{.*}}[%{{.*}}, %{{.*}}] shape m16n16 num 1 trans format b4x16_p64 : memref<32x64xi8, #copy.smem<swizzle = 64>> -> vector<2xi32>
    %c = copy.ldmatrix %s[%lane, %col] shape m16n16 num 1 trans format b4x16_p64 : memref<32x64xi8, #copy.smem<swizzle = 64>> -> vector<2xi32>
    // CHECK-NEXT: copy.stmatrix %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] shape m16n8 num 4 trans : vector<4xi32>, memref<32x64xi8, #copy.smem<swizzle = 64>>
    copy.stmatrix %b, %s[%lane, %col] shape m16n8 num 4 trans : vector<4xi32>, memref<32x64xi8, #copy.smem<swizzle = 64>>
    // CHECK-NEXT: copy.stmatrix %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] shape m16n8 num 2 trans : vector<8xi8>, memref<32x64xi8, #copy.smem<swizzle = 64>>
    copy.stmatrix %a, %s[%lane, %col] shape m16n8 num 2 trans : vector<8xi8>, memref<32x64xi8, #copy.smem<swizzle = 64>>
    // CHECK: copy.stmatrix %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] shape m16n8 num 1 trans : vector<1xi32>, memref<32x64xi8, #copy.smem<swizzle = 64>>
    %one = vector.extract %c[0] : i32 from vector<2xi32>
    %v1 = vector.broadcast %one : i32 to vector<1xi32>
    copy.stmatrix %v1, %s[%lane, %col] shape m16n8 num 1 trans : vector<1xi32>, memref<32x64xi8, #copy.smem<swizzle = 64>>
    func.return
  }
}
