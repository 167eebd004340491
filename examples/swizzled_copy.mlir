// A TMA copy through a 128-byte swizzled SMEM buffer: each block loads a 64x32 f32 tile
// (rows of exactly one 128-byte swizzle span) and stores it back with the same swizzle.
// Launch: grid (4096 / 32, 4096 / 64), 128 threads per block.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @swizzled_copy(%x: memref<4096x4096xf32>, %y: memref<4096x4096xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %col = arith.muli %bx, %c32 : index
    %row = arith.muli %by, %c64 : index
    %tile = copy.alloc_smem : memref<64x32xf32, #copy.smem<swizzle = 128>>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] : memref<4096x4096xf32> to memref<64x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%row, %col] : memref<64x32xf32, #copy.smem<swizzle = 128>> to memref<4096x4096xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
