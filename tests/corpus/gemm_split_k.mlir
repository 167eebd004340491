// The data movement of a split-K GEMM that reduces in GMEM with TMA: CUTLASS's sm90
// warp-specialized GEMM with a split-K decomposition whose epilogue stores with
// SM90_TMA_REDUCE_ADD (and DeepGEMM's / Triton's split-K with a TMA reduce-add store): each
// of the S CTAs of an output tile (blockIdx.z the split) runs the mainloop over its K / S
// share of the k-blocks and adds its partial tile into C, which holds zeros or a bias.
// C += A * B^T, A M x K and B N x K (K-major), f16 in, f32 out, 128x128x64 tiles.
//
// Protocol: 2 warpgroups (256 threads). Warpgroup 0 is the producer (setmaxnreg 40; warp 0
// runs the loop): for each of the split's k-blocks it acquires slot k mod 4 of the 4-stage
// ring (empty[s], the producer's phase starting at 1), expects the A and B boxes' 32768
// bytes on full[s] and issues both loads. Warpgroup 1 is the consumer: it waits on full[s]
// (parity (k / 4) mod 2), reads both slots (the wgmma operands; memref loads here) and
// releases the slot (4 warp arrivals on empty[s]). The epilogue writes the partial tile to
// SMEM, fences, and reduces it into C with a TMA reduce-add store; the CTA waits for the
// store to have read SMEM before it exits. The split count is gridDim.z, known at run
// time; it divides the k-block count.
//
// The math stand-in (no wgmma in the dialect yet): thread t reads, of each k-block, one
// element of each 16-byte unit of A row t and of B row t (columns 8q + t mod 8, memref.load
// of the swizzled slots), sums them
// in f32 and writes the sum to the whole row t of the tile. The splits' partial tiles add
// up to the whole tile's. tests/corpus/__init__.py holds the numpy model.
//
// Launch: grid (N / 128, M / 128, S), 256 threads.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @gemm_split_k(%A: memref<512x1024xf16>, %B: memref<512x1024xf16>, %C: memref<512x512xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %zero = arith.constant 0.0 : f32
    // 1024 / 64 k-blocks, split S ways.
    %k_blocks = arith.constant 16 : index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %split = "gpu.block_id"() <{dimension = #gpu<dim z>}> : () -> index
    %splits = "gpu.grid_dim"() <{dimension = #gpu<dim z>}> : () -> index
    %k_tiles = arith.divui %k_blocks, %splits : index
    %k_first = arith.muli %split, %k_tiles : index
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    %smem_a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_c = copy.alloc_smem : memref<128x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<4>
    copy.warp_specialize warps [4, 4] maxnreg [40, 232] {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      %warp = arith.divui %t, %c32 : index
      %is_dma = arith.cmpi eq, %warp, %c0 : index
      scf.if %is_dma {
        scf.for %k = %c0 to %k_tiles step %c1 {
          %s = arith.remui %k, %c4 : index
          %lap = arith.divui %k, %c4 : index
          %lp = arith.remui %lap, %c2 : index
          %phase = arith.cmpi ne, %lp, %c0 : index
          %acquire = arith.xori %phase, %true : i1
          copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
          copy.barrier_arrive_expect_tx %full[%s], 32768 : !copy.barrier<4>
          %kb = arith.addi %k_first, %k : index
          %k0 = arith.muli %kb, %c64 : index
          copy.async_copy %A[%m0, %k0] to %smem_a[%s] barrier %full[%s] {arrive = false} : memref<512x1024xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          copy.async_copy %B[%n0, %k0] to %smem_b[%s] barrier %full[%s] {arrive = false} : memref<512x1024xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
        }
      }
    }, {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%sum = %zero) -> (f32) {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        copy.barrier_wait %full[%s], %phase : !copy.barrier<4>
        %sa = scf.for %q = %c0 to %c8 step %c1 iter_args(%x = %sum) -> (f32) {
          %col = arith.muli %q, %c8 : index
          %colx = arith.addi %col, %lane8 : index
          %v = memref.load %smem_a[%s, %t, %colx] : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
          %w = arith.extf %v : f16 to f32
          %y = arith.addf %x, %w : f32
          scf.yield %y : f32
        }
        %sb = scf.for %q = %c0 to %c8 step %c1 iter_args(%x = %sa) -> (f32) {
          %col = arith.muli %q, %c8 : index
          %colx = arith.addi %col, %lane8 : index
          %v = memref.load %smem_b[%s, %t, %colx] : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
          %w = arith.extf %v : f16 to f32
          %y = arith.addf %x, %w : f32
          scf.yield %y : f32
        }
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<4>
        scf.yield %sb : f32
      }
      scf.for %c = %c0 to %c16 step %c1 {
        %col = arith.muli %c, %c8 : index
        %accv = vector.broadcast %acc : f32 to vector<8xf32>
        vector.store %accv, %smem_c[%t, %col] : memref<128x128xf32, #copy.smem>, vector<8xf32>
      }
      copy.fence_async_shared
      copy.async_copy %smem_c to %C[%m0, %n0] reduce add : memref<128x128xf32, #copy.smem> to memref<512x512xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
    }
    func.return
  }
}
