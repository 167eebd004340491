// The gather4_pair kernel of tests/passes/test_option_effects.py (its options' default forms):
// each CTA of a cluster of 2 gathers four rows into its tile and waits for them on its own
// barrier.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%x: memref<1024x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %false = arith.constant false
    %tile = copy.alloc_smem : memref<4x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    copy.gather4 %x rows [%rank, %c1, %c2, %c0] column [%c0] to %tile barrier %bar[%c0] : memref<1024x256xf32> to memref<4x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    func.return
  }
}
