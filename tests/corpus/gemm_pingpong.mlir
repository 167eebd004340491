// The data movement of CUTLASS's sm90 pingpong warp-specialized GEMM
// (KernelTmaWarpSpecializedPingpong, MainloopSm90TmaGmmaWarpSpecialized, a persistent tile
// scheduler and a TMA epilogue): C = A * B^T, A M x K and B N x K (K-major), f16 in, f32
// out, 128x128x64 tiles, M and N known only at run time.
//
// Protocol: 3 warpgroups (384 threads), persistent: CTA b takes tiles b, b + G, b + 2G, ...
// (G = gridDim.x). Warpgroup 0 is the producer (setmaxnreg 40, warp 0 runs the loop): for
// every tile of the CTA and every k-block it acquires the next slot of a 4-stage ring (a
// running counter over tiles and k-blocks: slot it mod 4, the producer's phase starting at
// 1), expects the 32768 bytes of the A and B boxes on full[s] and issues both loads. The
// two consumer warpgroups take the CTA's tiles in turn (warpgroup w the tiles 2i + w), each
// a whole 128x128 tile: it skips the other's k-blocks in the ring (the pipeline state
// advanced by k_tiles per foreign tile), waits on full[s], reads its A and B slots (the
// wgmma operands; memref loads here) and releases the slot (4 warp arrivals on empty[s]).
// Their math and their epilogues alternate through two ordered sequences (CUTLASS's
// OrderedSequenceBarrier): math_order[w] lets warpgroup w start its mainloop once the other
// finished its previous one, epi_order[w] likewise for the epilogues; warpgroup 0 goes
// first (it waits with the start phase 1). The epilogue writes the 128x128 f32 tile in two
// 64-row subtiles through the warpgroup's own 64x128 SMEM buffer: before rewriting the
// buffer it waits until the previous TMA store has read it (wait_group read_only).
//
// The math stand-in (no wgmma in the dialect yet): thread t reads, of each k-block, one
// element of each 16-byte unit of A row t and of B row t (columns 8q + t mod 8, memref.load
// of the swizzled slots), sums them
// in f32 and writes the sum to the whole row t of the tile. tests/corpus/__init__.py holds
// the numpy model.
//
// Launch: grid (G), 384 threads.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @gemm_pingpong(%A: memref<?x512xf16>, %B: memref<?x512xf16>, %C: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 384, 1, 1>} {
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
    // The CTA's tiles: bid + j * nb for j < count.
    %left = arith.subi %tiles, %bid : index
    %nbm1 = arith.subi %nb, %c1 : index
    %num = arith.addi %left, %nbm1 : index
    %count = arith.divui %num, %nb : index
    %smem_a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_c = copy.alloc_smem : memref<2x64x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<4>
    %math_order = copy.barrier_init arrivals 4 : !copy.barrier<2>
    %epi_order = copy.barrier_init arrivals 4 : !copy.barrier<2>
    copy.warp_specialize warps [4, 4, 4] maxnreg [40, 232, 232] {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      %warp = arith.divui %t, %c32 : index
      %is_dma = arith.cmpi eq, %warp, %c0 : index
      scf.if %is_dma {
        scf.for %j = %c0 to %count step %c1 {
          %jn = arith.muli %j, %nb : index
          %tile = arith.addi %bid, %jn : index
          %tm = arith.divui %tile, %tiles_n : index
          %tn = arith.remui %tile, %tiles_n : index
          %m0 = arith.muli %tm, %c128 : index
          %n0 = arith.muli %tn, %c128 : index
          %base = arith.muli %j, %k_tiles : index
          scf.for %k = %c0 to %k_tiles step %c1 {
            %it = arith.addi %base, %k : index
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
        }
      }
    }, {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      // Consumer warpgroup 0: the CTA's tiles 0, 2, 4, ...
      %mine1 = arith.addi %count, %c1 : index
      %mine = arith.divui %mine1, %c2 : index
      scf.for %i = %c0 to %mine step %c1 {
        %j = arith.muli %i, %c2 : index
        %jn = arith.muli %j, %nb : index
        %tile = arith.addi %bid, %jn : index
        %tm = arith.divui %tile, %tiles_n : index
        %tn = arith.remui %tile, %tiles_n : index
        %m0 = arith.muli %tm, %c128 : index
        %n0 = arith.muli %tn, %c128 : index
        %ip = arith.remui %i, %c2 : index
        %order = arith.cmpi eq, %ip, %c0 : index
        // math_order.wait(): warpgroup 0 goes first (the phase before phase 0 has parity 1).
        copy.barrier_wait %math_order[%c0], %order : !copy.barrier<2>
        %base = arith.muli %j, %k_tiles : index
        %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%sum = %zero) -> (f32) {
          %it = arith.addi %base, %k : index
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
        // math_order.arrive(): the other warpgroup's mainloop may start.
        copy.barrier_arrive %math_order[%c1] issuer warps : !copy.barrier<2>
        copy.barrier_wait %epi_order[%c0], %order : !copy.barrier<2>
        %h = arith.divui %t, %c64 : index
        %r = arith.remui %t, %c64 : index
        scf.for %sub = %c0 to %c2 step %c1 {
          // The previous store has read the buffer.
          copy.wait_group bulk 0 read_only
          %writes = arith.cmpi eq, %h, %sub : index
          scf.if %writes {
            scf.for %c = %c0 to %c16 step %c1 {
              %col = arith.muli %c, %c8 : index
              %accv = vector.broadcast %acc : f32 to vector<8xf32>
              vector.store %accv, %smem_c[%c0, %r, %col] : memref<2x64x128xf32, #copy.smem>, vector<8xf32>
            }
          }
          copy.fence_async_shared
          %sub_m = arith.muli %sub, %c64 : index
          %row = arith.addi %m0, %sub_m : index
          copy.async_copy %smem_c[%c0] to %C[%row, %n0] : memref<2x64x128xf32, #copy.smem> to memref<?x?xf32>
          copy.commit_group bulk
        }
        copy.barrier_arrive %epi_order[%c1] issuer warps : !copy.barrier<2>
      }
      copy.wait_group bulk 0 read_only
    }, {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      // Consumer warpgroup 1: the CTA's tiles 1, 3, 5, ...
      %mine = arith.divui %count, %c2 : index
      scf.for %i = %c0 to %mine step %c1 {
        %j2 = arith.muli %i, %c2 : index
        %j = arith.addi %j2, %c1 : index
        %jn = arith.muli %j, %nb : index
        %tile = arith.addi %bid, %jn : index
        %tm = arith.divui %tile, %tiles_n : index
        %tn = arith.remui %tile, %tiles_n : index
        %m0 = arith.muli %tm, %c128 : index
        %n0 = arith.muli %tn, %c128 : index
        %ip = arith.remui %i, %c2 : index
        %order = arith.cmpi ne, %ip, %c0 : index
        copy.barrier_wait %math_order[%c1], %order : !copy.barrier<2>
        %base = arith.muli %j, %k_tiles : index
        %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%sum = %zero) -> (f32) {
          %it = arith.addi %base, %k : index
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
        copy.barrier_arrive %math_order[%c0] issuer warps : !copy.barrier<2>
        copy.barrier_wait %epi_order[%c1], %order : !copy.barrier<2>
        %h = arith.divui %t, %c64 : index
        %r = arith.remui %t, %c64 : index
        scf.for %sub = %c0 to %c2 step %c1 {
          copy.wait_group bulk 0 read_only
          %writes = arith.cmpi eq, %h, %sub : index
          scf.if %writes {
            scf.for %c = %c0 to %c16 step %c1 {
              %col = arith.muli %c, %c8 : index
              %accv = vector.broadcast %acc : f32 to vector<8xf32>
              vector.store %accv, %smem_c[%c1, %r, %col] : memref<2x64x128xf32, #copy.smem>, vector<8xf32>
            }
          }
          copy.fence_async_shared
          %sub_m = arith.muli %sub, %c64 : index
          %row = arith.addi %m0, %sub_m : index
          copy.async_copy %smem_c[%c1] to %C[%row, %n0] : memref<2x64x128xf32, #copy.smem> to memref<?x?xf32>
          copy.commit_group bulk
        }
        copy.barrier_arrive %epi_order[%c0] issuer warps : !copy.barrier<2>
      }
      copy.wait_group bulk 0 read_only
    }
    func.return
  }
}
