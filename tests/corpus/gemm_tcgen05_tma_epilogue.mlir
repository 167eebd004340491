// The data movement of a Blackwell (sm_100a) persistent warp-specialized GEMM with
// CUTLASS's sm100 TMA-store epilogue (KernelTmaWarpSpecialized1SmSm100 with
// TmaWarpSpecialized1Sm epilogue, StagesD = 2): C = A * B^T, A M x K and B N x K
// (K-major), f16 in, f32 accumulated in TMEM, 128x64x64 tiles, the epilogue in sub-tiles
// of 128x32, M and N known only at run time, K = 256 (4 k-blocks).
//
// Protocol: as gemm_tcgen05_persistent (a producer warp, an MMA warp, an epilogue
// warpgroup; a 4-stage ring, two TMEM accumulators), but the epilogue stores C with TMA
// through two SMEM staging buffers: per tile it waits on acc_full[b], fences, loads both
// 32-column halves of accumulator b (tcgen05.ld 32x32b), waits for the loads, fences and
// releases the accumulator (acc_empty[b], one arrival a warp); then for each half e it
// waits until at most one bulk store is in flight (wait_group 1 read_only: the store that
// last read buffer e, two stores back, has read it), writes its rows to buffer e, fences
// the async proxy (with the role's barrier), and its elected thread stores the buffer with
// TMA and commits the group. It drains the stores (wait_group 0) before the kernel ends.
//
// Launch: grid (G), 192 threads.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @gemm_tcgen05_tma_epilogue(%A: memref<?x256xf16>, %B: memref<?x256xf16>, %C: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 192, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %k_tiles = arith.constant 4 : index
    %M = memref.dim %A, %c0 : memref<?x256xf16>
    %N = memref.dim %B, %c0 : memref<?x256xf16>
    %tiles_m = arith.divui %M, %c128 : index
    %tiles_n = arith.divui %N, %c64 : index
    %tiles = arith.muli %tiles_m, %tiles_n : index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %nb = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    // The CTA's tiles: bid + j * nb for j < count.
    %left = arith.subi %tiles, %bid : index
    %nbm1 = arith.subi %nb, %c1 : index
    %num = arith.addi %left, %nbm1 : index
    %count = arith.divui %num, %nb : index
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %acc0 = copy.tmem_slice %acc[0] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %acc1 = copy.tmem_slice %acc[64] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x64x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %acc_full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %acc_empty = copy.barrier_init arrivals 4 : !copy.barrier<2>
    %smem_c = copy.alloc_smem : memref<2x128x32xf32, #copy.smem>
    %d0 = builtin.unrealized_conversion_cast %acc0 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %d1 = builtin.unrealized_conversion_cast %acc1 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %empty_ptr = builtin.unrealized_conversion_cast %empty : !copy.barrier<4> to !llvm.ptr<3>
    %acc_full_ptr = builtin.unrealized_conversion_cast %acc_full : !copy.barrier<2> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 : i32
    copy.warp_specialize warps [1, 1, 4] {
    ^bb0(%t: index):
      // The producer warp.
      scf.for %j = %c0 to %count step %c1 {
        %jn = arith.muli %j, %nb : index
        %tile = arith.addi %bid, %jn : index
        %tm = arith.divui %tile, %tiles_n : index
        %tn = arith.remui %tile, %tiles_n : index
        %m0 = arith.muli %tm, %c128 : index
        %n0 = arith.muli %tn, %c64 : index
        %base = arith.muli %j, %k_tiles : index
        scf.for %k = %c0 to %k_tiles step %c1 {
          %it = arith.addi %base, %k : index
          %s = arith.remui %it, %c4 : index
          %lap = arith.divui %it, %c4 : index
          %lp = arith.remui %lap, %c2 : index
          %phase = arith.cmpi ne, %lp, %c0 : index
          %acquire = arith.xori %phase, %true : i1
          copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
          %k0 = arith.muli %k, %c64 : index
          copy.async_copy %A[%m0, %k0] to %smem_a[%s] barrier %full[%s] : memref<?x256xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          copy.async_copy %B[%n0, %k0] to %smem_b[%s] barrier %full[%s] : memref<?x256xf16> to memref<4x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
        }
      }
    }, {
    ^bb0(%t: index):
      // The MMA warp: its lane 0 issues the MMAs and the commits.
      %lead = arith.cmpi eq, %t, %c0 : index
      %q2 = arith.constant 2 : i64
      %q4 = arith.constant 4 : i64
      %q6 = arith.constant 6 : i64
      scf.for %j = %c0 to %count step %c1 {
        %b = arith.remui %j, %c2 : index
        %first = arith.cmpi eq, %b, %c0 : index
        %uses = arith.divui %j, %c2 : index
        %up = arith.remui %uses, %c2 : index
        %used = arith.cmpi ne, %up, %c0 : index
        %free = arith.xori %used, %true : i1
        copy.barrier_wait %acc_empty[%b], %free : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        %base = arith.muli %j, %k_tiles : index
        scf.for %k = %c0 to %k_tiles step %c1 {
          %it = arith.addi %base, %k : index
          %s = arith.remui %it, %c4 : index
          %lap = arith.divui %it, %c4 : index
          %lp = arith.remui %lap, %c2 : index
          %phase = arith.cmpi ne, %lp, %c0 : index
          copy.barrier_wait %full[%s], %phase : !copy.barrier<4>
          %da = copy.matrix_descriptor %smem_a[%s] major k tcgen05 : memref<4x128x64xf16, #copy.smem<swizzle = 128>> -> i64
          %db = copy.matrix_descriptor %smem_b[%s] major k tcgen05 : memref<4x64x64xf16, #copy.smem<swizzle = 128>> -> i64
          %accum = arith.cmpi ne, %k, %c0 : index
          scf.if %lead {
            scf.if %first {
              nvvm.tcgen05.mma %d0, %da, %db, %idesc, %accum {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              %da2 = arith.addi %da, %q2 : i64
              %db2 = arith.addi %db, %q2 : i64
              nvvm.tcgen05.mma %d0, %da2, %db2, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              %da4 = arith.addi %da, %q4 : i64
              %db4 = arith.addi %db, %q4 : i64
              nvvm.tcgen05.mma %d0, %da4, %db4, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              %da6 = arith.addi %da, %q6 : i64
              %db6 = arith.addi %db, %q6 : i64
              nvvm.tcgen05.mma %d0, %da6, %db6, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
            } else {
              nvvm.tcgen05.mma %d1, %da, %db, %idesc, %accum {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              %da2 = arith.addi %da, %q2 : i64
              %db2 = arith.addi %db, %q2 : i64
              nvvm.tcgen05.mma %d1, %da2, %db2, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              %da4 = arith.addi %da, %q4 : i64
              %db4 = arith.addi %db, %q4 : i64
              nvvm.tcgen05.mma %d1, %da4, %db4, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              %da6 = arith.addi %da, %q6 : i64
              %db6 = arith.addi %db, %q6 : i64
              nvvm.tcgen05.mma %d1, %da6, %db6, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
            }
            %s64 = arith.index_cast %s : index to i64
            %release = llvm.getelementptr %empty_ptr[%s64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
            nvvm.tcgen05.commit %release : !llvm.ptr<3>
          }
        }
        scf.if %lead {
          %b64 = arith.index_cast %b : index to i64
          %ready = llvm.getelementptr %acc_full_ptr[%b64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
          nvvm.tcgen05.commit %ready : !llvm.ptr<3>
        }
      }
    }, {
    ^bb0(%t: index):
      // The epilogue warpgroup (warps 2-5).
      %w = arith.divui %t, %c32 : index
      %w2 = arith.addi %w, %c2 : index
      %quarter = arith.remui %w2, %c4 : index
      %lanes = arith.muli %quarter, %c32 : index
      %lane = arith.remui %t, %c32 : index
      %row = arith.addi %lanes, %lane : index
      scf.for %j = %c0 to %count step %c1 {
        %jn = arith.muli %j, %nb : index
        %tile = arith.addi %bid, %jn : index
        %tm = arith.divui %tile, %tiles_n : index
        %tn = arith.remui %tile, %tiles_n : index
        %m0 = arith.muli %tm, %c128 : index
        %n0 = arith.muli %tn, %c64 : index
        %b = arith.remui %j, %c2 : index
        %uses = arith.divui %j, %c2 : index
        %up = arith.remui %uses, %c2 : index
        %ready = arith.cmpi ne, %up, %c0 : index
        copy.barrier_wait %acc_full[%b], %ready : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        %cols = arith.muli %b, %c64 : index
        %cols1 = arith.addi %cols, %c32 : index
        %v0 = copy.tmem_load %acc[%cols] shape shape_32x32b num 32 : memref<128x128xf32, #copy.tmem> -> vector<32xf32>
        %v1 = copy.tmem_load %acc[%cols1] shape shape_32x32b num 32 : memref<128x128xf32, #copy.tmem> -> vector<32xf32>
        copy.tmem_wait load
        nvvm.tcgen05.fence <before>
        copy.barrier_arrive %acc_empty[%b] issuer warps : !copy.barrier<2>
        // Two epilogue sub-tiles of 32 columns, each through its own staging buffer: the
        // store that last read a buffer was committed two stores ago (wait_group 1).
        copy.wait_group bulk 1 read_only
        vector.store %v0, %smem_c[%c0, %row, %c0] : memref<2x128x32xf32, #copy.smem>, vector<32xf32>
        copy.fence_async_shared
        copy.async_copy %smem_c[%c0] to %C[%m0, %n0] : memref<2x128x32xf32, #copy.smem> to memref<?x?xf32>
        copy.commit_group bulk
        %n1 = arith.addi %n0, %c32 : index
        copy.wait_group bulk 1 read_only
        vector.store %v1, %smem_c[%c1, %row, %c0] : memref<2x128x32xf32, #copy.smem>, vector<32xf32>
        copy.fence_async_shared
        copy.async_copy %smem_c[%c1] to %C[%m0, %n1] : memref<2x128x32xf32, #copy.smem> to memref<?x?xf32>
        copy.commit_group bulk
      }
      copy.wait_group bulk 0 read_only
    }
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
