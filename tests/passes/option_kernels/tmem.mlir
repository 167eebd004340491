// The tmem kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%col: index, %v: vector<4xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %w = copy.tmem_load %acc[%col] shape shape_32x32b num 4 : memref<128x128xf32, #copy.tmem> -> vector<4xf32>
    copy.tmem_wait load
    copy.tmem_store %v, %acc[%col] shape shape_32x32b num 4 : vector<4xf32>, memref<128x128xf32, #copy.tmem>
    copy.tmem_wait store
    %tile = copy.alloc_smem : memref<128x8xf32, #copy.smem<swizzle = 32>>
    copy.smem_to_tmem %tile to %acc[%col] shape shape_128x256b : memref<128x8xf32, #copy.smem<swizzle = 32>>, memref<128x128xf32, #copy.tmem>
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
