// A TMA copy of an array that is not a multiple of the tile: the 1000x1000 f32 array is
// covered by 16x16 tiles of 64x64; loads past the end are zero-filled (oob zeros), stores
// past the end are clipped by the hardware.
// Launch: grid (16, 16), 128 threads per block.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @oob_copy(%x: memref<1000x1000xf32>, %y: memref<1000x1000xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %col = arith.muli %bx, %c64 : index
    %row = arith.muli %by, %c64 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] oob zeros : memref<1000x1000xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%row, %col] : memref<64x64xf32, #copy.smem> to memref<1000x1000xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
