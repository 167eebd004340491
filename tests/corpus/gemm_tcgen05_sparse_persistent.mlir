// The data movement of a Blackwell (sm_100a) persistent warp-specialized structured-sparse
// GEMM, as CUTLASS's sm100 sparse kernels (KernelSparseTmaWarpSpecialized1SmSm100) move it:
// C = A * B^T with A 2:4 sparse (kind::f16: two of every four elements of a row's K kept, and
// 2-bit metadata saying where), f16 in, f32 accumulated in TMEM, 128x64 tiles of 128 elements
// of K a k-block, K = 256 (2 k-blocks), M and N known only at run time. A arrives as its kept
// elements (M x 128: one 128-byte swizzle atom a row per k-block), B as two atoms of 64
// elements of K a row per k-block, the metadata as one 2 KiB block per 128 rows and k-block
// (E's rows (tm * 2 + kb) * 128 on: 128 rows of 64 i2 values, laid out for the tensor memory
// as Mosaic GPU's format_tcgen05_sparse_metadata lays out 16-bit operands').
//
// Protocol: 6 warps (192 threads), persistent: CTA b takes tiles b, b + G, b + 2G, ...
// (G = gridDim.x). Three roles:
// - the producer warp: for every tile and k-block, acquires the next slot of a 4-stage ring
//   (a running counter over tiles and k-blocks: slot it mod 4, its phase starting at 1) and
//   issues the A and two B TMA loads and the metadata's bulk copy (TMA has no 2-bit type),
//   each arriving on full[s] with its bytes;
// - the MMA warp: for every tile, acquires the next of two TMEM accumulators (acc_empty[b],
//   phase starting at 1; tcgen05.fence after the wait), then per k-block waits on full[s],
//   copies the slot's metadata into metadata buffer it mod 2 in TMEM (tcgen05.cp 128x128b:
//   4 columns, issued by the warp's elected lane, lane 0), and its lane 0 issues the 4
//   tcgen05.mma.sp of the k-block (32 elements of K each: A's descriptor 32 bytes further
//   each time, B's 64 within its atom, the metadata column the buffer's plus the selector
//   0 or 1, then 2 columns on for the second atom) into accumulator b, the first
//   overwriting it, and commits to empty[s]: the slot is free once the copy and the MMAs
//   read it. A tcgen05.cp after a tcgen05.mma is no tcgen05 pipeline (PTX ISA 9.7.16.6.2:
//   the two may execute in either order), so the copy into a buffer first waits for the
//   commit of the k-block that last read it, two back (its phase of empty[(it - 2) mod 4]),
//   and fences (tcgen05.fence::after_thread_sync): the two buffers let the copy of one
//   k-block overlap the MMAs of the one before. After the tile's last k-block it commits to
//   acc_full[b];
// - the epilogue warpgroup (warps 2-5): per tile waits on acc_full[b], fences, loads its rows
//   of accumulator b (warp w reads lanes 32 (w mod 4) on), waits for the loads, fences and
//   releases the accumulator (4 warp arrivals on acc_empty[b]), then stores its rows to C.
//
// Launch: grid (G), 192 threads.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @gemm_tcgen05_sparse_persistent(%A: memref<?x128xf16>, %B: memref<?x256xf16>, %E: memref<?x64xi2>, %C: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 192, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %k_tiles = arith.constant 2 : index
    %M = memref.dim %A, %c0 : memref<?x128xf16>
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
    %meta = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
    // metadata buffer 0 in columns 0-3, buffer 1 in columns 4-7; each MMA pair's pointer at
    // the buffer's column 0 or 2 (64 i2 values, 4 columns, a buffer)
    %meta_a = copy.tmem_slice %meta[0] : memref<128x512xi2, #copy.tmem> -> memref<128x64xi2, #copy.tmem>
    %meta_a2 = copy.tmem_slice %meta[32] : memref<128x512xi2, #copy.tmem> -> memref<128x32xi2, #copy.tmem>
    %meta_b = copy.tmem_slice %meta[64] : memref<128x512xi2, #copy.tmem> -> memref<128x64xi2, #copy.tmem>
    %meta_b2 = copy.tmem_slice %meta[96] : memref<128x512xi2, #copy.tmem> -> memref<128x32xi2, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b0 = copy.alloc_smem : memref<4x64x64xf16, #copy.smem<swizzle = 128>>
    %smem_b1 = copy.alloc_smem : memref<4x64x64xf16, #copy.smem<swizzle = 128>>
    %smem_e = copy.alloc_smem : memref<4x128x64xi2, #copy.smem>
    %full = copy.barrier_init arrivals 4 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %acc_full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %acc_empty = copy.barrier_init arrivals 4 : !copy.barrier<2>
    %d0 = builtin.unrealized_conversion_cast %acc0 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %d1 = builtin.unrealized_conversion_cast %acc1 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %ma0 = builtin.unrealized_conversion_cast %meta_a : memref<128x64xi2, #copy.tmem> to !llvm.ptr<6>
    %ma2 = builtin.unrealized_conversion_cast %meta_a2 : memref<128x32xi2, #copy.tmem> to !llvm.ptr<6>
    %mb0 = builtin.unrealized_conversion_cast %meta_b : memref<128x64xi2, #copy.tmem> to !llvm.ptr<6>
    %mb2 = builtin.unrealized_conversion_cast %meta_b2 : memref<128x32xi2, #copy.tmem> to !llvm.ptr<6>
    %empty_ptr = builtin.unrealized_conversion_cast %empty : !copy.barrier<4> to !llvm.ptr<3>
    %acc_full_ptr = builtin.unrealized_conversion_cast %acc_full : !copy.barrier<2> to !llvm.ptr<3>
    %idesc0 = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 sparse selector 0 : i32
    %idesc1 = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 sparse selector 1 : i32
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
        %eblock = arith.muli %tm, %k_tiles : index
        scf.for %k = %c0 to %k_tiles step %c1 {
          %it = arith.addi %base, %k : index
          %s = arith.remui %it, %c4 : index
          %lap = arith.divui %it, %c4 : index
          %lp = arith.remui %lap, %c2 : index
          %phase = arith.cmpi ne, %lp, %c0 : index
          %acquire = arith.xori %phase, %true : i1
          copy.barrier_wait %empty[%s], %acquire : !copy.barrier<4>
          %ka = arith.muli %k, %c64 : index
          %kb = arith.muli %k, %c128 : index
          %kb1 = arith.addi %kb, %c64 : index
          %eb = arith.addi %eblock, %k : index
          %e0 = arith.muli %eb, %c128 : index
          copy.async_copy %A[%m0, %ka] to %smem_a[%s] barrier %full[%s] : memref<?x128xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          copy.async_copy %B[%n0, %kb] to %smem_b0[%s] barrier %full[%s] : memref<?x256xf16> to memref<4x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          copy.async_copy %B[%n0, %kb1] to %smem_b1[%s] barrier %full[%s] : memref<?x256xf16> to memref<4x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          copy.async_copy %E[%e0, %c0] to %smem_e[%s] barrier %full[%s] impl bulk oob promise_in_bounds : memref<?x64xi2> to memref<4x128x64xi2, #copy.smem>, !copy.barrier<4>
        }
      }
    }, {
    ^bb0(%t: index):
      // The MMA warp: the metadata copies are the warp's (its elected lane, lane 0), the
      // MMAs and commits its lane 0's.
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
          // metadata buffer it mod 2 (k, with 2 k-blocks a tile), last read by the MMAs of
          // k-block it - 2, the previous tile's (none for the first tile): wait for their
          // commit's phase of empty[(it - 2) mod 4], then fence
          %mbuf = arith.remui %it, %c2 : index
          %even = arith.cmpi eq, %mbuf, %c0 : index
          %reuse = arith.cmpi ne, %j, %c0 : index
          scf.if %reuse {
            %old = arith.subi %it, %c2 : index
            %os = arith.remui %old, %c4 : index
            %olap = arith.divui %old, %c4 : index
            %olp = arith.remui %olap, %c2 : index
            %ophase = arith.cmpi ne, %olp, %c0 : index
            copy.barrier_wait %empty[%os], %ophase : !copy.barrier<4>
          }
          nvvm.tcgen05.fence <after>
          scf.if %even {
            copy.smem_to_tmem %smem_e[%s] to %meta_a[%c0] shape shape_128x128b metadata : memref<4x128x64xi2, #copy.smem>, memref<128x64xi2, #copy.tmem>
          } else {
            copy.smem_to_tmem %smem_e[%s] to %meta_b[%c0] shape shape_128x128b metadata : memref<4x128x64xi2, #copy.smem>, memref<128x64xi2, #copy.tmem>
          }
          %da = copy.matrix_descriptor %smem_a[%s] major k tcgen05 : memref<4x128x64xf16, #copy.smem<swizzle = 128>> -> i64
          %db0 = copy.matrix_descriptor %smem_b0[%s] major k tcgen05 : memref<4x64x64xf16, #copy.smem<swizzle = 128>> -> i64
          %db1 = copy.matrix_descriptor %smem_b1[%s] major k tcgen05 : memref<4x64x64xf16, #copy.smem<swizzle = 128>> -> i64
          %accum = arith.cmpi ne, %k, %c0 : index
          scf.if %lead {
            %da2 = arith.addi %da, %q2 : i64
            %da4 = arith.addi %da, %q4 : i64
            %da6 = arith.addi %da, %q6 : i64
            %db04 = arith.addi %db0, %q4 : i64
            %db14 = arith.addi %db1, %q4 : i64
            scf.if %first {
              scf.if %even {
                nvvm.tcgen05.mma.sp %d0, %da, %db0, %idesc0, %accum, %ma0 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
                nvvm.tcgen05.mma.sp %d0, %da2, %db04, %idesc1, %true, %ma0 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
                nvvm.tcgen05.mma.sp %d0, %da4, %db1, %idesc0, %true, %ma2 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
                nvvm.tcgen05.mma.sp %d0, %da6, %db14, %idesc1, %true, %ma2 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
              } else {
                nvvm.tcgen05.mma.sp %d0, %da, %db0, %idesc0, %accum, %mb0 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
                nvvm.tcgen05.mma.sp %d0, %da2, %db04, %idesc1, %true, %mb0 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
                nvvm.tcgen05.mma.sp %d0, %da4, %db1, %idesc0, %true, %mb2 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
                nvvm.tcgen05.mma.sp %d0, %da6, %db14, %idesc1, %true, %mb2 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
              }
            } else {
              scf.if %even {
                nvvm.tcgen05.mma.sp %d1, %da, %db0, %idesc0, %accum, %ma0 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
                nvvm.tcgen05.mma.sp %d1, %da2, %db04, %idesc1, %true, %ma0 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
                nvvm.tcgen05.mma.sp %d1, %da4, %db1, %idesc0, %true, %ma2 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
                nvvm.tcgen05.mma.sp %d1, %da6, %db14, %idesc1, %true, %ma2 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
              } else {
                nvvm.tcgen05.mma.sp %d1, %da, %db0, %idesc0, %accum, %mb0 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
                nvvm.tcgen05.mma.sp %d1, %da2, %db04, %idesc1, %true, %mb0 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
                nvvm.tcgen05.mma.sp %d1, %da4, %db1, %idesc0, %true, %mb2 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
                nvvm.tcgen05.mma.sp %d1, %da6, %db14, %idesc1, %true, %mb2 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
              }
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
        %r = arith.addi %m0, %row : index
        %b = arith.remui %j, %c2 : index
        %uses = arith.divui %j, %c2 : index
        %up = arith.remui %uses, %c2 : index
        %ready = arith.cmpi ne, %up, %c0 : index
        copy.barrier_wait %acc_full[%b], %ready : !copy.barrier<2>
        nvvm.tcgen05.fence <after>
        %cols = arith.muli %b, %c64 : index
        %v = copy.tmem_load %acc[%cols] shape shape_32x32b num 64 : memref<128x128xf32, #copy.tmem> -> vector<64xf32>
        copy.tmem_wait load
        nvvm.tcgen05.fence <before>
        copy.barrier_arrive %acc_empty[%b] issuer warps : !copy.barrier<2>
        vector.store %v, %C[%r, %n0] : memref<?x?xf32>, vector<64xf32>
      }
    }
    copy.tmem_dealloc %meta : memref<128x512xi2, #copy.tmem>
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
