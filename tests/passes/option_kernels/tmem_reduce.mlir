// The tmem_reduce kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_103a">} {
  func.func @k(%col: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %w, %m = copy.tmem_load %acc[%col] shape shape_32x32b num 8 reduce max : memref<128x128xf32, #copy.tmem> -> vector<8xf32>, f32
    copy.tmem_wait load
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
