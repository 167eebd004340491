// The Blackwell persistent GEMM of gemm_tcgen05_persistent.mlir with its ring positions
// carried as CUTLASS's PipelineState and CuTe DSL's pipeline states are: each role carries
// its (stage, phase) pairs from tile to tile and k-block to k-block (the stage wraps to 0
// after the last and the phase flips then) instead of computing them from the tile and
// k-block indices: the producer's K-ring state (its phase starting at 1), the MMA warp's
// K-ring state and its accumulator state (stage b, the acc_empty phase starting at 1), the
// epilogue's accumulator state.
//
// Protocol: gemm_tcgen05_persistent's (a producer warp, an MMA warp, an epilogue warpgroup;
// a 4-stage K ring and two TMEM accumulators), with the positions carried.
//
// Launch: grid (G), 192 threads.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @gemm_tcgen05_pipeline_state(%A: memref<?x256xf16>, %B: memref<?x256xf16>, %C: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 192, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %false = arith.constant false
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
    %d0 = builtin.unrealized_conversion_cast %acc0 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %d1 = builtin.unrealized_conversion_cast %acc1 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %empty_ptr = builtin.unrealized_conversion_cast %empty : !copy.barrier<4> to !llvm.ptr<3>
    %acc_full_ptr = builtin.unrealized_conversion_cast %acc_full : !copy.barrier<2> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 : i32
    copy.warp_specialize warps [1, 1, 4] {
    ^bb0(%t: index):
      // The producer warp.
      %pend:2 = scf.for %j = %c0 to %count step %c1 iter_args(%ps0 = %c0, %pph0 = %true) -> (index, i1) {
        %jn = arith.muli %j, %nb : index
        %tile = arith.addi %bid, %jn : index
        %tm = arith.divui %tile, %tiles_n : index
        %tn = arith.remui %tile, %tiles_n : index
        %m0 = arith.muli %tm, %c128 : index
        %n0 = arith.muli %tn, %c64 : index
        %kend:2 = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%s = %ps0, %acquire = %pph0) -> (index, i1) {
          copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
          %k0 = arith.muli %k, %c64 : index
          copy.async_copy %A[%m0, %k0] to %smem_a[%s] barrier %full[%s] : memref<?x256xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          copy.async_copy %B[%n0, %k0] to %smem_b[%s] barrier %full[%s] : memref<?x256xf16> to memref<4x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          %next = arith.addi %s, %c1 : index
          %wrap = arith.cmpi eq, %next, %c4 : index
          %s2 = arith.select %wrap, %c0, %next : index
          %flip = arith.xori %acquire, %true : i1
          %ph2 = arith.select %wrap, %flip, %acquire : i1
          scf.yield %s2, %ph2 : index, i1
        }
        scf.yield %kend#0, %kend#1 : index, i1
      }
    }, {
    ^bb0(%t: index):
      // The MMA warp: its lane 0 issues the MMAs and the commits.
      %lead = arith.cmpi eq, %t, %c0 : index
      %q2 = arith.constant 2 : i64
      %q4 = arith.constant 4 : i64
      %q6 = arith.constant 6 : i64
      %mend:4 = scf.for %j = %c0 to %count step %c1 iter_args(%ms0 = %c0, %mph0 = %false, %b = %c0, %free = %true) -> (index, i1, index, i1) {
        %first = arith.cmpi eq, %b, %c0 : index
        copy.barrier_wait %acc_empty[%b], %free : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        %kend:2 = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%s = %ms0, %phase = %mph0) -> (index, i1) {
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
          %next = arith.addi %s, %c1 : index
          %wrap = arith.cmpi eq, %next, %c4 : index
          %s2 = arith.select %wrap, %c0, %next : index
          %flip = arith.xori %phase, %true : i1
          %ph2 = arith.select %wrap, %flip, %phase : i1
          scf.yield %s2, %ph2 : index, i1
        }
        scf.if %lead {
          %b64 = arith.index_cast %b : index to i64
          %ready = llvm.getelementptr %acc_full_ptr[%b64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
          nvvm.tcgen05.commit %ready : !llvm.ptr<3>
        }
        %bnext = arith.addi %b, %c1 : index
        %bwrap = arith.cmpi eq, %bnext, %c2 : index
        %b2 = arith.select %bwrap, %c0, %bnext : index
        %fflip = arith.xori %free, %true : i1
        %free2 = arith.select %bwrap, %fflip, %free : i1
        scf.yield %kend#0, %kend#1, %b2, %free2 : index, i1, index, i1
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
      %eend:2 = scf.for %j = %c0 to %count step %c1 iter_args(%b = %c0, %ready = %false) -> (index, i1) {
        %jn = arith.muli %j, %nb : index
        %tile = arith.addi %bid, %jn : index
        %tm = arith.divui %tile, %tiles_n : index
        %tn = arith.remui %tile, %tiles_n : index
        %m0 = arith.muli %tm, %c128 : index
        %n0 = arith.muli %tn, %c64 : index
        %r = arith.addi %m0, %row : index
        copy.barrier_wait %acc_full[%b], %ready : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        %cols = arith.muli %b, %c64 : index
        %v = copy.tmem_load %acc[%cols] shape shape_32x32b num 64 : memref<128x128xf32, #copy.tmem> -> vector<64xf32>
        copy.tmem_wait load
        nvvm.tcgen05.fence <before>
        copy.barrier_arrive %acc_empty[%b] issuer warps : !copy.barrier<2>
        vector.store %v, %C[%r, %n0] : memref<?x?xf32>, vector<64xf32>
        %bnext = arith.addi %b, %c1 : index
        %bwrap = arith.cmpi eq, %bnext, %c2 : index
        %b2 = arith.select %bwrap, %c0, %bnext : index
        %rflip = arith.xori %ready, %true : i1
        %ready2 = arith.select %bwrap, %rflip, %ready : i1
        scf.yield %b2, %ready2 : index, i1
      }
    }
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
