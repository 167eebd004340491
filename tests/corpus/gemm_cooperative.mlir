// The data movement of CUTLASS's sm90 cooperative warp-specialized GEMM
// (KernelTmaWarpSpecializedCooperative with MainloopSm90TmaGmmaWarpSpecialized and a TMA
// epilogue), one 128x128 output tile per CTA: C = A * B^T with A M x K and B N x K (both
// K-major, "TN"), f16 in, f32 out.
//
// Protocol: 3 warpgroups (384 threads). Warpgroup 0 is the producer (setmaxnreg 40); its
// first warp runs the mainloop: for each of the K / 64 k-blocks it acquires slot k mod 4 of
// the 4-stage ring (PipelineTmaAsync's producer_acquire: wait on empty[s] with the
// producer's start phase 1, so the first lap passes at once), expects the 32768 bytes of the
// A and B boxes on full[s], and issues both TMA loads with no arrival of their own.
// Warpgroups 1 and 2 are the consumers (setmaxnreg 232), splitting the tile's M: each waits
// on full[s] (consumer_wait, parity (k / 4) mod 2), reads its 64 rows of the A slot and the
// whole B slot (the wgmma's SMEM operands; modelled as memref loads, the accumulator kept in
// registers), and releases the slot (consumer_release: one arrival per consumer warp, so
// empty counts 8). The epilogue: each consumer warpgroup writes its 64x128 half of the
// accumulator tile into SMEM, fences it for the async proxy and stores it with TMA, then
// waits for the store to have read SMEM before the CTA exits.
//
// The math stand-in (no wgmma in the dialect yet): thread t of consumer warpgroup w reads,
// of each k-block, one element of each 16-byte unit of A row 64w + t / 2, columns 32 (t mod
// 2) .. + 32, and of B row t (columns 8q + t mod 8, memref.load of the swizzled slots), sums them in f32 and writes the sum to
// columns 64 (t mod 2) .. + 64 of its row. tests/corpus/__init__.py holds the numpy model.
//
// Launch: grid (N / 128, M / 128), 384 threads.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @gemm_cooperative(%A: memref<1024x512xf16>, %B: memref<1024x512xf16>, %C: memref<1024x1024xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 384, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %zero = arith.constant 0.0 : f32
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    // k_tiles = K / 64
    %k_tiles = arith.constant 8 : index
    %smem_a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_c = copy.alloc_smem : memref<2x64x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 8 : !copy.barrier<4>
    copy.warp_specialize warps [4, 4, 4] maxnreg [40, 232, 232] {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      // Producer warpgroup: warp 0 issues the loads, the other three idle.
      %warp = arith.divui %t, %c32 : index
      %is_dma = arith.cmpi eq, %warp, %c0 : index
      scf.if %is_dma {
        scf.for %k = %c0 to %k_tiles step %c1 {
          %s = arith.remui %k, %c4 : index
          %lap = arith.divui %k, %c4 : index
          %lp = arith.remui %lap, %c2 : index
          %phase = arith.cmpi ne, %lp, %c0 : index
          // producer_acquire: the producer's phase starts at 1.
          %acquire = arith.xori %phase, %true : i1
          copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
          copy.barrier_arrive_expect_tx %full[%s], 32768 : !copy.barrier<4>
          %k0 = arith.muli %k, %c64 : index
          copy.async_copy %A[%m0, %k0] to %smem_a[%s] barrier %full[%s] {arrive = false} : memref<1024x512xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          copy.async_copy %B[%n0, %k0] to %smem_b[%s] barrier %full[%s] {arrive = false} : memref<1024x512xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
        }
      }
    }, {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      // Consumer warpgroup 0: rows 0-63 of the tile.
      %half = arith.remui %t, %c2 : index
      %ra = arith.divui %t, %c2 : index
      %ca = arith.muli %half, %c32 : index
      %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%sum = %zero) -> (f32) {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        copy.barrier_wait %full[%s], %phase : !copy.barrier<4>
        %sa = scf.for %j = %c0 to %c4 step %c1 iter_args(%x = %sum) -> (f32) {
          %j8 = arith.muli %j, %c8 : index
          %col = arith.addi %ca, %j8 : index
          %colx = arith.addi %col, %lane8 : index
          %v = memref.load %smem_a[%s, %ra, %colx] : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
          %w = arith.extf %v : f16 to f32
          %y = arith.addf %x, %w : f32
          scf.yield %y : f32
        }
        %sb = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %sa) -> (f32) {
          %col = arith.muli %j, %c8 : index
          %colx = arith.addi %col, %lane8 : index
          %v = memref.load %smem_b[%s, %t, %colx] : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
          %w = arith.extf %v : f16 to f32
          %y = arith.addf %x, %w : f32
          scf.yield %y : f32
        }
        // consumer_release
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<4>
        scf.yield %sb : f32
      }
      // Epilogue: the accumulator through SMEM, then one TMA store of the half tile.
      %cc = arith.muli %half, %c64 : index
      scf.for %c = %c0 to %c8 step %c1 {
        %c8c = arith.muli %c, %c8 : index
        %col = arith.addi %cc, %c8c : index
        %accv = vector.broadcast %acc : f32 to vector<8xf32>
        vector.store %accv, %smem_c[%c0, %ra, %col] : memref<2x64x128xf32, #copy.smem>, vector<8xf32>
      }
      copy.fence_async_shared
      copy.async_copy %smem_c[%c0] to %C[%m0, %n0] : memref<2x64x128xf32, #copy.smem> to memref<1024x1024xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
    }, {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      // Consumer warpgroup 1: rows 64-127 of the tile.
      %half = arith.remui %t, %c2 : index
      %r = arith.divui %t, %c2 : index
      %ra = arith.addi %r, %c64 : index
      %ca = arith.muli %half, %c32 : index
      %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%sum = %zero) -> (f32) {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        copy.barrier_wait %full[%s], %phase : !copy.barrier<4>
        %sa = scf.for %j = %c0 to %c4 step %c1 iter_args(%x = %sum) -> (f32) {
          %j8 = arith.muli %j, %c8 : index
          %col = arith.addi %ca, %j8 : index
          %colx = arith.addi %col, %lane8 : index
          %v = memref.load %smem_a[%s, %ra, %colx] : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
          %w = arith.extf %v : f16 to f32
          %y = arith.addf %x, %w : f32
          scf.yield %y : f32
        }
        %sb = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %sa) -> (f32) {
          %col = arith.muli %j, %c8 : index
          %colx = arith.addi %col, %lane8 : index
          %v = memref.load %smem_b[%s, %t, %colx] : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
          %w = arith.extf %v : f16 to f32
          %y = arith.addf %x, %w : f32
          scf.yield %y : f32
        }
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<4>
        scf.yield %sb : f32
      }
      %cc = arith.muli %half, %c64 : index
      scf.for %c = %c0 to %c8 step %c1 {
        %c8c = arith.muli %c, %c8 : index
        %col = arith.addi %cc, %c8c : index
        %accv = vector.broadcast %acc : f32 to vector<8xf32>
        vector.store %accv, %smem_c[%c1, %r, %col] : memref<2x64x128xf32, #copy.smem>, vector<8xf32>
      }
      copy.fence_async_shared
      %m1 = arith.addi %m0, %c64 : index
      copy.async_copy %smem_c[%c1] to %C[%m1, %n0] : memref<2x64x128xf32, #copy.smem> to memref<1024x1024xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
    }
    func.return
  }
}
