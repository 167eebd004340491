// The pingpong GEMM of gemm_pingpong.mlir with its ring positions carried as CUTLASS's
// PipelineState: the producer carries its (stage, phase) from k-block to k-block and tile to
// tile (its phase starting at 1); each consumer warpgroup carries its own, starting past the
// other's first tile for warpgroup 1, and after each of its tiles advances it by the other's
// k-blocks (CUTLASS's `advance(k_tiles)`: the stage (s + 8) mod 4, the phase flipped once per
// lap of the ring passed). The ordered sequences and the epilogue are gemm_pingpong's.
//
// Protocol: gemm_pingpong's (a producer warpgroup, two consumer warpgroups taking the CTA's
// tiles in turn through a 4-stage ring, math_order and epi_order), with the positions
// carried.
//
// Launch: grid (G), 384 threads.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @gemm_pingpong_pipeline_state(%A: memref<?x512xf16>, %B: memref<?x512xf16>, %C: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 384, 1, 1>} {
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
    %false = arith.constant false
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
        %pend:2 = scf.for %j = %c0 to %count step %c1 iter_args(%ps = %c0, %pph = %true) -> (index, i1) {
          %jn = arith.muli %j, %nb : index
          %tile = arith.addi %bid, %jn : index
          %tm = arith.divui %tile, %tiles_n : index
          %tn = arith.remui %tile, %tiles_n : index
          %m0 = arith.muli %tm, %c128 : index
          %n0 = arith.muli %tn, %c128 : index
          %kend:2 = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%s = %ps, %acquire = %pph) -> (index, i1) {
            copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
            copy.barrier_arrive_expect_tx %full[%s], 32768 : !copy.barrier<4>
            %k0 = arith.muli %k, %c64 : index
            copy.async_copy %A[%m0, %k0] to %smem_a[%s] barrier %full[%s] {arrive = false} : memref<?x512xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
            copy.async_copy %B[%n0, %k0] to %smem_b[%s] barrier %full[%s] {arrive = false} : memref<?x512xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
            %next = arith.addi %s, %c1 : index
            %wrap = arith.cmpi eq, %next, %c4 : index
            %s2 = arith.select %wrap, %c0, %next : index
            %flip = arith.xori %acquire, %true : i1
            %ph2 = arith.select %wrap, %flip, %acquire : i1
            scf.yield %s2, %ph2 : index, i1
          }
          scf.yield %kend#0, %kend#1 : index, i1
        }
      }
    }, {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      // Consumer warpgroup 0: the CTA's tiles 0, 2, 4, ...
      %mine1 = arith.addi %count, %c1 : index
      %mine = arith.divui %mine1, %c2 : index
      %cend:2 = scf.for %i = %c0 to %mine step %c1 iter_args(%cs = %c0, %cph = %false) -> (index, i1) {
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
        %acc, %ks, %kph = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%sum = %zero, %s = %cs, %phase = %cph) -> (f32, index, i1) {
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
          %next = arith.addi %s, %c1 : index
          %wrap = arith.cmpi eq, %next, %c4 : index
          %s2 = arith.select %wrap, %c0, %next : index
          %flip = arith.xori %phase, %true : i1
          %ph2 = arith.select %wrap, %flip, %phase : i1
          scf.yield %sb, %s2, %ph2 : f32, index, i1
        }
        // Skip the other warpgroup's tile: the state advanced by its k-blocks.
        %adv = arith.addi %ks, %k_tiles : index
        %laps = arith.divui %adv, %c4 : index
        %lapbit = arith.remui %laps, %c2 : index
        %odd = arith.cmpi ne, %lapbit, %c0 : index
        %ns = arith.remui %adv, %c4 : index
        %nph = arith.xori %kph, %odd : i1
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
        scf.yield %ns, %nph : index, i1
      }
      copy.wait_group bulk 0 read_only
    }, {
    ^bb0(%t: index):
      %lane8 = arith.remui %t, %c8 : index
      // Consumer warpgroup 1: the CTA's tiles 1, 3, 5, ...
      %mine = arith.divui %count, %c2 : index
      // Start past warpgroup 0's first tile: the state advanced by its k-blocks.
      %laps0 = arith.divui %k_tiles, %c4 : index
      %lapbit0 = arith.remui %laps0, %c2 : index
      %ph0 = arith.cmpi ne, %lapbit0, %c0 : index
      %s0 = arith.remui %k_tiles, %c4 : index
      %cend:2 = scf.for %i = %c0 to %mine step %c1 iter_args(%cs = %s0, %cph = %ph0) -> (index, i1) {
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
        %acc, %ks, %kph = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%sum = %zero, %s = %cs, %phase = %cph) -> (f32, index, i1) {
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
          %next = arith.addi %s, %c1 : index
          %wrap = arith.cmpi eq, %next, %c4 : index
          %s2 = arith.select %wrap, %c0, %next : index
          %flip = arith.xori %phase, %true : i1
          %ph2 = arith.select %wrap, %flip, %phase : i1
          scf.yield %sb, %s2, %ph2 : f32, index, i1
        }
        // Skip the other warpgroup's tile: the state advanced by its k-blocks.
        %adv = arith.addi %ks, %k_tiles : index
        %laps = arith.divui %adv, %c4 : index
        %lapbit = arith.remui %laps, %c2 : index
        %odd = arith.cmpi ne, %lapbit, %c0 : index
        %ns = arith.remui %adv, %c4 : index
        %nph = arith.xori %kph, %odd : i1
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
        scf.yield %ns, %nph : index, i1
      }
      copy.wait_group bulk 0 read_only
    }
    func.return
  }
}
