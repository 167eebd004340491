// The tmem_pack kernel of tests/passes/test_option_effects.py: a TMEM ref of i32 cells, its load and store in their default (unpacked 32-bit) forms.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%col: index, %v: vector<4xi32>, %h: vector<8xi16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %acc = copy.tmem_alloc : memref<128x128xi32, #copy.tmem>
    %w = copy.tmem_load %acc[%col] shape shape_32x32b num 4 : memref<128x128xi32, #copy.tmem> -> vector<4xi32>
    copy.tmem_wait load
    copy.tmem_store %v, %acc[%col] shape shape_32x32b num 4 : vector<4xi32>, memref<128x128xi32, #copy.tmem>
    copy.tmem_wait store
    copy.tmem_dealloc %acc : memref<128x128xi32, #copy.tmem>
    func.return
  }
}
