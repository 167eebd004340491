// copy.ldmatrix and copy.stmatrix through the whole pipeline to PTX: the instruction of each
// form, at the thread's row address (in a swizzled tile, the layout's XOR of the 16-byte unit
// number with the row within the 8-row period, as a thread's memref.load is addressed).

// RUN: copy-opt %s --split-input-file -t ptx | filecheck %s

// An epilogue-like warp: registers to a 128B-swizzled bf16 tile with stmatrix.x4, and back.
// CHECK: .target sm_90a
// CHECK: .entry swizzled_b16(
// The unit of column 8 * (k % 8) XOR-ed with the row's place in the 8-row period (lane % 8).
// CHECK: xor.b{{32|64}}
// CHECK: stmatrix.sync.aligned.m8n8.x4.shared.b16 [%rd{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK: stmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}];
// CHECK: ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%r{{[0-9]+}}}, [%rd{{[0-9]+}}];
// CHECK-NOT: .extern .func
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @swizzled_b16(%in: memref<32x8xbf16>, %out: memref<32x10xbf16>, %k: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>} {
    %lane = gpu.lane_id
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %q = arith.remui %k, %c8 : index
    %col = arith.muli %q, %c8 : index
    %tile = copy.alloc_smem : memref<32x64xbf16, #copy.smem<swizzle = 128>>
    %v = vector.load %in[%lane, %c0] : memref<32x8xbf16>, vector<8xbf16>
    copy.stmatrix %v, %tile[%lane, %col] num 4 : vector<8xbf16>, memref<32x64xbf16, #copy.smem<swizzle = 128>>
    %h = vector.load %in[%lane, %c0] : memref<32x8xbf16>, vector<4xbf16>
    copy.stmatrix %h, %tile[%lane, %c0] num 2 trans : vector<4xbf16>, memref<32x64xbf16, #copy.smem<swizzle = 128>>
    %r = copy.ldmatrix %tile[%lane, %col] num 4 : memref<32x64xbf16, #copy.smem<swizzle = 128>> -> vector<8xbf16>
    vector.store %r, %out[%lane, %c0] : memref<32x10xbf16>, vector<8xbf16>
    %t = copy.ldmatrix %tile[%lane, %col] num 1 trans : memref<32x64xbf16, #copy.smem<swizzle = 128>> -> vector<2xbf16>
    %c8b = arith.constant 8 : index
    vector.store %t, %out[%lane, %c8b] : memref<32x10xbf16>, vector<2xbf16>
    func.return
  }
}

// -----

// The 8-bit forms on sm_100a.
// CHECK: .target sm_100a
// CHECK: ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}
// CHECK: ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8x16.b4x16_p64 {%r{{[0-9]+}}, %r{{[0-9]+}}}
// CHECK: stmatrix.sync.aligned.m16n8.x4.trans.shared.b8
// CHECK: stmatrix.sync.aligned.m16n8.x2.trans.shared.b8
// CHECK-NOT: .extern .func
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @b8(%out: memref<32x8xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>} {
    %lane = gpu.lane_id
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %q = arith.remui %lane, %c4 : index
    %col = arith.muli %q, %c16 : index
    %s = copy.alloc_smem : memref<32x64xi8, #copy.smem<swizzle = 64>>
    %a = copy.ldmatrix %s[%lane, %col] shape m16n16 num 2 trans : memref<32x64xi8, #copy.smem<swizzle = 64>> -> vector<4xi32>
    %b = copy.ldmatrix %s[%lane, %col] shape m16n16 num 1 trans format b4x16_p64 : memref<32x64xi8, #copy.smem<swizzle = 64>> -> vector<8xi8>
    copy.stmatrix %a, %s[%lane, %col] shape m16n8 num 4 trans : vector<4xi32>, memref<32x64xi8, #copy.smem<swizzle = 64>>
    copy.stmatrix %b, %s[%lane, %col] shape m16n8 num 2 trans : vector<8xi8>, memref<32x64xi8, #copy.smem<swizzle = 64>>
    vector.store %a, %out[%lane, %c0] : memref<32x8xi32>, vector<4xi32>
    func.return
  }
}
