// The Blackwell persistent GEMM of gemm_tcgen05_persistent.mlir scheduled by cluster launch
// control (sm_100a), as CUTLASS's sm100 kernels with their CLC tile scheduler: the grid has a
// CTA per tile, and a running CTA cancels CTAs that have not started (clusterlaunchcontrol.
// try_cancel) and computes their tiles, until a request fails.
//
// Protocol: 6 warps (192 threads). Every role walks the same tiles in an scf.while carrying
// (tile, n): the first tile is the CTA's own, the next the response to request n. The
// producer warp also schedules: after issuing its tile's loads it acquires response slot
// n mod 2 (clc_empty, phase starting at 1: every role has read the response two requests
// back), expects 16 bytes on clc_full and issues the request. Each role then waits for
// the response (clc_full, phase (n / 2) mod 2), queries it (copy.query_cancel: the canceled
// CTA's first ctaid, or failure, -1, which ends the loop) and releases the slot (6
// arrivals: the producer's and the MMA warp's elected threads, the epilogue's 4 warps). The
// K ring, the MMA warp's commits and the two TMEM accumulators are gemm_tcgen05_persistent's,
// counted by n.
//
// Launch: grid (tiles), 192 threads.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @gemm_tcgen05_clc(%A: memref<?x256xf16>, %B: memref<?x256xf16>, %C: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 192, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %zero = arith.constant 0 : i32
    %none = arith.constant -1 : i32
    %k_tiles = arith.constant 4 : index
    %N = memref.dim %B, %c0 : memref<?x256xf16>
    %tiles_n = arith.divui %N, %c64 : index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %first = arith.index_cast %bid : index to i32
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %acc0 = copy.tmem_slice %acc[0] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %acc1 = copy.tmem_slice %acc[64] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x64x64xf16, #copy.smem<swizzle = 128>>
    %resp = copy.alloc_smem : memref<2x16xi8, #copy.smem>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %acc_full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %acc_empty = copy.barrier_init arrivals 4 : !copy.barrier<2>
    %clc_full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %clc_empty = copy.barrier_init arrivals 6 : !copy.barrier<2>
    %d0 = builtin.unrealized_conversion_cast %acc0 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %d1 = builtin.unrealized_conversion_cast %acc1 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %empty_ptr = builtin.unrealized_conversion_cast %empty : !copy.barrier<4> to !llvm.ptr<3>
    %acc_full_ptr = builtin.unrealized_conversion_cast %acc_full : !copy.barrier<2> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 : i32
    copy.warp_specialize warps [1, 1, 4] {
    ^bb0(%t: index):
      // The producer warp, which also requests the next tile.
      %end:2 = scf.while (%tile = %first, %k = %c0) : (i32, index) -> (i32, index) {
        %go = arith.cmpi sge, %tile, %zero : i32
        scf.condition(%go) %tile, %k : i32, index
      } do {
      ^bb0(%ti: i32, %n: index):
        %tile_i = arith.index_cast %ti : i32 to index
        %tm = arith.divui %tile_i, %tiles_n : index
        %tn = arith.remui %tile_i, %tiles_n : index
        %m0 = arith.muli %tm, %c128 : index
        %n0 = arith.muli %tn, %c64 : index
        %b = arith.remui %n, %c2 : index
        %uses = arith.divui %n, %c2 : index
        %up = arith.remui %uses, %c2 : index
        %base = arith.muli %n, %k_tiles : index
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
        %rs = arith.remui %n, %c2 : index
        %rlap = arith.divui %n, %c2 : index
        %rbit = arith.remui %rlap, %c2 : index
        %rphase = arith.cmpi ne, %rbit, %c0 : index
        %rfree = arith.xori %rphase, %true : i1
        copy.barrier_wait %clc_empty[%rs], %rfree : !copy.barrier<2>
        copy.barrier_arrive_expect_tx %clc_full[%rs], 16 : !copy.barrier<2>
        copy.try_cancel %resp[%rs] barrier %clc_full[%rs] : memref<2x16xi8, #copy.smem>, !copy.barrier<2>
        // The next tile: the response to this tile's request.
        %cs = arith.remui %n, %c2 : index
        %clap = arith.divui %n, %c2 : index
        %cbit = arith.remui %clap, %c2 : index
        %cphase = arith.cmpi ne, %cbit, %c0 : index
        copy.barrier_wait %clc_full[%cs], %cphase : !copy.barrier<2>
        %ok, %x, %y, %z = copy.query_cancel %resp[%cs] : memref<2x16xi8, #copy.smem>
        copy.barrier_arrive %clc_empty[%cs] issuer elected : !copy.barrier<2>
        %next = arith.select %ok, %x, %none : i32
        %n1 = arith.addi %n, %c1 : index
        scf.yield %next, %n1 : i32, index
      }
    }, {
    ^bb0(%t: index):
      // The MMA warp: its lane 0 issues the MMAs and the commits.
      %lead = arith.cmpi eq, %t, %c0 : index
      %q2 = arith.constant 2 : i64
      %q4 = arith.constant 4 : i64
      %q6 = arith.constant 6 : i64
      %end:2 = scf.while (%tile = %first, %k = %c0) : (i32, index) -> (i32, index) {
        %go = arith.cmpi sge, %tile, %zero : i32
        scf.condition(%go) %tile, %k : i32, index
      } do {
      ^bb0(%ti: i32, %n: index):
        %tile_i = arith.index_cast %ti : i32 to index
        %tm = arith.divui %tile_i, %tiles_n : index
        %tn = arith.remui %tile_i, %tiles_n : index
        %m0 = arith.muli %tm, %c128 : index
        %n0 = arith.muli %tn, %c64 : index
        %b = arith.remui %n, %c2 : index
        %uses = arith.divui %n, %c2 : index
        %up = arith.remui %uses, %c2 : index
        %stage0 = arith.cmpi eq, %b, %c0 : index
        %used = arith.cmpi ne, %up, %c0 : index
        %free = arith.xori %used, %true : i1
        copy.barrier_wait %acc_empty[%b], %free : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        %base = arith.muli %n, %k_tiles : index
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
            scf.if %stage0 {
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
        // The next tile: the response to this tile's request.
        %cs = arith.remui %n, %c2 : index
        %clap = arith.divui %n, %c2 : index
        %cbit = arith.remui %clap, %c2 : index
        %cphase = arith.cmpi ne, %cbit, %c0 : index
        copy.barrier_wait %clc_full[%cs], %cphase : !copy.barrier<2>
        %ok, %x, %y, %z = copy.query_cancel %resp[%cs] : memref<2x16xi8, #copy.smem>
        copy.barrier_arrive %clc_empty[%cs] issuer elected : !copy.barrier<2>
        %next = arith.select %ok, %x, %none : i32
        %n1 = arith.addi %n, %c1 : index
        scf.yield %next, %n1 : i32, index
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
      %end:2 = scf.while (%tile = %first, %k = %c0) : (i32, index) -> (i32, index) {
        %go = arith.cmpi sge, %tile, %zero : i32
        scf.condition(%go) %tile, %k : i32, index
      } do {
      ^bb0(%ti: i32, %n: index):
        %tile_i = arith.index_cast %ti : i32 to index
        %tm = arith.divui %tile_i, %tiles_n : index
        %tn = arith.remui %tile_i, %tiles_n : index
        %m0 = arith.muli %tm, %c128 : index
        %n0 = arith.muli %tn, %c64 : index
        %b = arith.remui %n, %c2 : index
        %uses = arith.divui %n, %c2 : index
        %up = arith.remui %uses, %c2 : index
        %r = arith.addi %m0, %row : index
        %ready = arith.cmpi ne, %up, %c0 : index
        copy.barrier_wait %acc_full[%b], %ready : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        %cols = arith.muli %b, %c64 : index
        %v = copy.tmem_load %acc[%cols] shape shape_32x32b num 64 : memref<128x128xf32, #copy.tmem> -> vector<64xf32>
        copy.tmem_wait load
        nvvm.tcgen05.fence <before>
        copy.barrier_arrive %acc_empty[%b] issuer warps : !copy.barrier<2>
        vector.store %v, %C[%r, %n0] : memref<?x?xf32>, vector<64xf32>
        // The next tile: the response to this tile's request.
        %cs = arith.remui %n, %c2 : index
        %clap = arith.divui %n, %c2 : index
        %cbit = arith.remui %clap, %c2 : index
        %cphase = arith.cmpi ne, %cbit, %c0 : index
        copy.barrier_wait %clc_full[%cs], %cphase : !copy.barrier<2>
        %ok, %x, %y, %z = copy.query_cancel %resp[%cs] : memref<2x16xi8, #copy.smem>
        copy.barrier_arrive %clc_empty[%cs] issuer warps : !copy.barrier<2>
        %next = arith.select %ok, %x, %none : i32
        %n1 = arith.addi %n, %c1 : index
        scf.yield %next, %n1 : i32, index
      }
    }
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
