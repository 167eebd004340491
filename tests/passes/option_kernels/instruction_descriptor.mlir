// The instruction_descriptor kernel of tests/passes/test_option_effects.py (its options'
// default forms).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%out: memref<1xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %i = copy.mma_instruction_descriptor kind f8f6f4 m 128 n 128 a f8E4M3FN b f8E4M3FN d f32 : i32
    memref.store %i, %out[%c0] : memref<1xi32>
    func.return
  }
}
