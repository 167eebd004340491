// A cp.async tile copy (sm_80 code; with --target sm_90a the same IR compiles for Hopper,
// since it asks for cp.async explicitly): the block's 256 threads copy
// a 32x128 f32 tile of x into SMEM with cp.async (16-byte chunks, zero-filled past the array's
// end), wait for their group, then write the tile to y with ordinary stores.
// Launch: grid (1024 / 128, 1024 / 32), 256 threads per block.
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @cp_async_copy(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %c4096 = arith.constant 4096 : index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %col = arith.muli %bx, %c128 : index
    %row = arith.muli %by, %c32 : index
    %tile = copy.alloc_smem : memref<32x128xf32, #copy.smem>
    copy.async_copy %x[%row, %col] to %tile impl cp_async oob zeros : memref<1024x1024xf32> to memref<32x128xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    scf.for %i = %tid to %c4096 step %c256 {
      %r = arith.divui %i, %c128 : index
      %c = arith.remui %i, %c128 : index
      %v = memref.load %tile[%r, %c] : memref<32x128xf32, #copy.smem>
      %gr = arith.addi %row, %r : index
      %gc = arith.addi %col, %c : index
      memref.store %v, %y[%gr, %gc] : memref<1024x1024xf32>
    }
    func.return
  }
}
