// The matrix kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%outh: memref<32x8xf16>, %outb: memref<32x16xi8>, %v: vector<4xf16>, %w: vector<4xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>} {
    %lane = gpu.lane_id
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %q = arith.remui %lane, %c4 : index
    %col = arith.muli %q, %c16 : index
    %h = copy.alloc_smem : memref<32x64xf16, #copy.smem>
    %s = copy.alloc_smem : memref<32x64xi8, #copy.smem<swizzle = 64>>
    %r = copy.ldmatrix %h[%lane, %col] num 2 : memref<32x64xf16, #copy.smem> -> vector<4xf16>
    vector.store %r, %outh[%lane, %c0] : memref<32x8xf16>, vector<4xf16>
    %b = copy.ldmatrix %s[%lane, %col] shape m16n16 num 1 trans : memref<32x64xi8, #copy.smem<swizzle = 64>> -> vector<8xi8>
    vector.store %b, %outb[%lane, %c0] : memref<32x16xi8>, vector<8xi8>
    copy.stmatrix %v, %h[%lane, %col] num 2 : vector<4xf16>, memref<32x64xf16, #copy.smem>
    copy.stmatrix %w, %s[%lane, %col] shape m16n8 num 4 trans : vector<4xi32>, memref<32x64xi8, #copy.smem<swizzle = 64>>
    func.return
  }
}
