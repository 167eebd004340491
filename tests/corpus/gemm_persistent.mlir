// The data movement of a persistent warp-specialized GEMM with a grid-stride tile loop, as
// Triton's persistent TMA matmul (tutorials/09-persistent-matmul.py, warp-specialized) and
// CUTLASS's sm90 KernelTmaWarpSpecialized with a persistent tile scheduler write it:
// `for (tile = blockIdx.x; tile < tiles; tile += gridDim.x)` around the K loop, the ring's
// pipeline state carried from one tile to the next. C = A * B^T, A M x K and B N x K
// (K-major), f16 in, f32 out, 128x128x64 tiles, M and N known at run time.
//
// Protocol: 2 warpgroups (256 threads). Warpgroup 0 is the producer (setmaxnreg 40; warp 0
// runs the loops): for each of its tiles and each k-block it acquires slot it mod 4 of the
// 4-stage ring (it counts k-blocks over all the CTA's tiles; wait on empty[s], the
// producer's phase starting at 1), expects the A and B boxes' 32768 bytes on full[s] and
// issues both loads. Warpgroup 1 is the consumer: it waits on full[s] (parity (it / 4) mod
// 2), reads both slots (the wgmma operands; memref loads here) and releases the slot (4 warp
// arrivals on empty[s]). Its epilogue overlaps the next tile's mainloop: before rewriting
// the 128x128 staging buffer it waits until the previous tile's TMA store has read it
// (wait_group read_only), then writes, fences and stores; it drains the stores at the end.
//
// The math stand-in (no wgmma in the dialect yet): thread t reads, of each k-block, one
// element of each 16-byte unit of A row t and of B row t (columns 8q + t mod 8, memref.load
// of the swizzled slots), sums them
// in f32 and writes the sum to the whole row t of the tile. tests/corpus/__init__.py holds
// the numpy model.
//
// Launch: grid (G) with G at most the tile count (one CTA per SM), 256 threads.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @gemm_persistent(%A: memref<?x512xf16>, %B: memref<?x512xf16>, %C: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
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
    %k_tiles = arith.constant 8 : index
    %M = memref.dim %A, %c0 : memref<?x512xf16>
    %N = memref.dim %B, %c0 : memref<?x512xf16>
    %tiles_m = arith.divui %M, %c128 : index
    %tiles_n = arith.divui %N, %c128 : index
    %tiles = arith.muli %tiles_m, %tiles_n : index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
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
        %done = scf.for %tile = %bid to %tiles step %nb iter_args(%it0 = %c0) -> (index) {
          %tm = arith.divui %tile, %tiles_n : index
          %tn = arith.remui %tile, %tiles_n : index
          %m0 = arith.muli %tm, %c128 : index
          %n0 = arith.muli %tn, %c128 : index
          scf.for %k = %c0 to %k_tiles step %c1 {
            %it = arith.addi %it0, %k : index
            %s = arith.remui %it, %c4 : index
            %lap = arith.divui %it, %c4 : index
            %lp = arith.remui %lap, %c2 : index
            %phase = arith.cmpi ne, %lp, %c0 : index
            %acquire = arith.xori %phase, %true : i1
            copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
            copy.barrier_arrive_expect_tx %full[%s], 32768 : !copy.barrier<4>
            %k0 = arith.muli %k, %c64 : index
            copy.async_copy %A[%m0, %k0] to %smem_a[%s] barrier %full[%s] {arrive = false} : memref<?x512xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
            copy.async_copy %B[%n0, %k0] to %smem_b[%s] barrier %full[%s] {arrive = false} : memref<?x512xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          }
          %next = arith.addi %it0, %k_tiles : index
          scf.yield %next : index
        }
      }
    }, {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      %done = scf.for %tile = %bid to %tiles step %nb iter_args(%it0 = %c0) -> (index) {
        %tm = arith.divui %tile, %tiles_n : index
        %tn = arith.remui %tile, %tiles_n : index
        %m0 = arith.muli %tm, %c128 : index
        %n0 = arith.muli %tn, %c128 : index
        %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%sum = %zero) -> (f32) {
          %it = arith.addi %it0, %k : index
          %s = arith.remui %it, %c4 : index
          %lap = arith.divui %it, %c4 : index
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
        // The previous tile's store has read the staging buffer.
        copy.wait_group bulk 0 read_only
        scf.for %c = %c0 to %c16 step %c1 {
          %col = arith.muli %c, %c8 : index
          %accv = vector.broadcast %acc : f32 to vector<8xf32>
          vector.store %accv, %smem_c[%t, %col] : memref<128x128xf32, #copy.smem>, vector<8xf32>
        }
        copy.fence_async_shared
        copy.async_copy %smem_c to %C[%m0, %n0] : memref<128x128xf32, #copy.smem> to memref<?x?xf32>
        copy.commit_group bulk
        %next = arith.addi %it0, %k_tiles : index
        scf.yield %next : index
      }
      copy.wait_group bulk 0 read_only
    }
    func.return
  }
}
