// The tmem_metadata kernel of tests/passes/test_option_effects.py (its options' default forms):
// a copy of 128 rows of 64 i2 values (a sparse MMA's metadata) into TMEM.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%col: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %meta = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
    %tile = copy.alloc_smem : memref<128x64xi2, #copy.smem>
    copy.smem_to_tmem %tile to %meta[%col] shape shape_128x128b : memref<128x64xi2, #copy.smem>, memref<128x512xi2, #copy.tmem>
    copy.tmem_dealloc %meta : memref<128x512xi2, #copy.tmem>
    func.return
  }
}
