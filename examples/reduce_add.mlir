// A TMA reduce-add, o += x: each block loads a 64x64 f32 tile of x and adds it into o with
// `cp.reduce.async.bulk.tensor ... .add` (the tensor map of o is FLOAT32).
// Launch: grid (4096 / 64, 4096 / 64), 128 threads per block.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @reduce_add(%x: memref<4096x4096xf32>, %o: memref<4096x4096xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %col = arith.muli %bx, %c64 : index
    %row = arith.muli %by, %c64 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] : memref<4096x4096xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %o[%row, %col] reduce add : memref<64x64xf32, #copy.smem> to memref<4096x4096xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
