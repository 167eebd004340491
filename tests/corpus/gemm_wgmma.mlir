// The data movement and the math of a warp-specialized Hopper GEMM mainloop as CUTLASS
// writes it (`KernelTmaWarpSpecialized` with `MainloopSm90TmaGmmaWarpSpecialized`, one
// consumer warpgroup): C = A * B^T, A M x K and B N x K (K-major), f16 in, f32 out, 64x64x64
// tiles, one tile per CTA, K known only at run time (memref.dim; the last box reaches past K
// and TMA fills it with zeros).
//
// Protocol: role 0 (the producer warpgroup; its first warp runs the loop, its elected
// thread issues the copies) is the TMA producer: for k-block k it waits on empty[k mod 4]
// (from the second lap on) and loads A and B into slot k mod 4, both loads arriving on
// full[k mod 4] (arrivals 2, each expecting its own bytes). Role 1 (warps 4-7, a warpgroup
// of the block, as a wgmma needs) is the consumer: it waits on full[k mod 4], takes the
// slot's SMEM descriptors (copy.matrix_descriptor, K-major, 128B swizzle), issues four
// m64n64k16 wgmmas along K (the descriptors plus 2, 32 bytes >> 4, per step) into its
// accumulator, commits them as one group and waits until at most one group is in flight
// (wgmma.wait_group 1), then releases the slot of the k-block before, which that wait
// retired (one arrival per warp on empty[(k - 1) mod 4], which counts 4). After the loop,
// wait_group 0 retires the last group and the last slot is released. The protocol analysis
// checks that no slot is refilled while a wgmma reads it (P2 at the release).
//
// The epilogue: each thread stores its 32 accumulator registers to C, register
// i = 4b + 2h + v of lane l of warp w holding row 16w + 8h + l / 4, column 8b + 2 (l mod 4)
// + v of the tile (PTX ISA, the wgmma m64nNk16 accumulator fragment).
// tests/corpus/__init__.py holds the numpy model (A B^T of small integers: exact in f32).
//
// Launch: grid (N / 64, M / 64), 256 threads.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @gemm_wgmma(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c63 = arith.constant 63 : index
    %c64 = arith.constant 64 : index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %m0 = arith.muli %by, %c64 : index
    %n0 = arith.muli %bx, %c64 : index
    %K = memref.dim %A, %c1 : memref<?x?xf16>
    %kr = arith.addi %K, %c63 : index
    %k_tiles = arith.divui %kr, %c64 : index
    %smem_a = copy.alloc_smem : memref<4x64x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x64x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<4>
    copy.warp_specialize warps [4, 4] {
    ^bb0(%t: index):
      // The producer: the warpgroup's first warp runs the loop (the others have nothing
      // to do; waiting on empty[s] they could lag two phases behind).
      %pwarp = arith.divui %t, %c32 : index
      %first = arith.cmpi eq, %pwarp, %c0 : index
      scf.if %first {
        scf.for %k = %c0 to %k_tiles step %c1 {
          %s = arith.remui %k, %c4 : index
          %lap = arith.divui %k, %c4 : index
          %again = arith.cmpi uge, %k, %c4 : index
          scf.if %again {
            %prev = arith.subi %lap, %c1 : index
            %pm = arith.remui %prev, %c2 : index
            %pp = arith.cmpi ne, %pm, %c0 : index
            copy.barrier_wait %empty[%s], %pp : !copy.barrier<4>
          }
          %k0 = arith.muli %k, %c64 : index
          copy.async_copy %A[%m0, %k0] to %smem_a[%s] barrier %full[%s] : memref<?x?xf16> to memref<4x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          copy.async_copy %B[%n0, %k0] to %smem_b[%s] barrier %full[%s] : memref<?x?xf16> to memref<4x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
        }
      }
    }, {
    ^bb0(%t: index):
      // The consumer warpgroup.
      %zero = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %step = arith.constant 2 : i64
      %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%d = %zero) -> (!llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>) {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<4>
        %da0 = copy.matrix_descriptor %smem_a[%s] major k : memref<4x64x64xf16, #copy.smem<swizzle = 128>> -> i64
        %db0 = copy.matrix_descriptor %smem_b[%s] major k : memref<4x64x64xf16, #copy.smem<swizzle = 128>> -> i64
        nvvm.wgmma.fence.aligned
        %d0 = nvvm.wgmma.mma_async %da0, %db0, %d, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
        %da1 = arith.addi %da0, %step : i64
        %db1 = arith.addi %db0, %step : i64
        %d1 = nvvm.wgmma.mma_async %da1, %db1, %d0, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
        %da2 = arith.addi %da1, %step : i64
        %db2 = arith.addi %db1, %step : i64
        %d2 = nvvm.wgmma.mma_async %da2, %db2, %d1, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
        %da3 = arith.addi %da2, %step : i64
        %db3 = arith.addi %db2, %step : i64
        %d3 = nvvm.wgmma.mma_async %da3, %db3, %d2, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
        nvvm.wgmma.commit.group.sync.aligned
        // One group in flight: the wait retires k-block k - 1, whose slot is released.
        nvvm.wgmma.wait.group.sync.aligned 1
        %old = arith.cmpi uge, %k, %c1 : index
        scf.if %old {
          %pk = arith.subi %k, %c1 : index
          %ps = arith.remui %pk, %c4 : index
          copy.barrier_arrive %empty[%ps] issuer warps : !copy.barrier<4>
        }
        scf.yield %d3 : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      }
      nvvm.wgmma.wait.group.sync.aligned 0
      %any = arith.cmpi uge, %k_tiles, %c1 : index
      scf.if %any {
        %lk = arith.subi %k_tiles, %c1 : index
        %ls = arith.remui %lk, %c4 : index
        copy.barrier_arrive %empty[%ls] issuer warps : !copy.barrier<4>
      }
      // The epilogue: register i = 4b + 2h + v of lane l of warp w is D[16w + 8h + l / 4, 8b + 2 (l mod 4) + v].
      %warp = arith.divui %t, %c32 : index
      %lane = arith.remui %t, %c32 : index
      %wrow = arith.muli %warp, %c16 : index
      %lrow = arith.divui %lane, %c4 : index
      %r = arith.addi %wrow, %lrow : index
      %row0 = arith.addi %m0, %r : index
      %row1 = arith.addi %row0, %c8 : index
      %lq = arith.remui %lane, %c4 : index
      %lcol = arith.muli %lq, %c2 : index
      %col0 = arith.addi %n0, %lcol : index
      %e0 = llvm.extractvalue %acc[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e0, %C[%row0, %col0] : memref<?x?xf32>
      %e1 = llvm.extractvalue %acc[1] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o1 = arith.constant 1 : index
      %col1 = arith.addi %col0, %o1 : index
      memref.store %e1, %C[%row0, %col1] : memref<?x?xf32>
      %e2 = llvm.extractvalue %acc[2] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e2, %C[%row1, %col0] : memref<?x?xf32>
      %e3 = llvm.extractvalue %acc[3] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e3, %C[%row1, %col1] : memref<?x?xf32>
      %e4 = llvm.extractvalue %acc[4] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o8 = arith.constant 8 : index
      %col8 = arith.addi %col0, %o8 : index
      memref.store %e4, %C[%row0, %col8] : memref<?x?xf32>
      %e5 = llvm.extractvalue %acc[5] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o9 = arith.constant 9 : index
      %col9 = arith.addi %col0, %o9 : index
      memref.store %e5, %C[%row0, %col9] : memref<?x?xf32>
      %e6 = llvm.extractvalue %acc[6] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e6, %C[%row1, %col8] : memref<?x?xf32>
      %e7 = llvm.extractvalue %acc[7] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e7, %C[%row1, %col9] : memref<?x?xf32>
      %e8 = llvm.extractvalue %acc[8] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o16 = arith.constant 16 : index
      %col16 = arith.addi %col0, %o16 : index
      memref.store %e8, %C[%row0, %col16] : memref<?x?xf32>
      %e9 = llvm.extractvalue %acc[9] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o17 = arith.constant 17 : index
      %col17 = arith.addi %col0, %o17 : index
      memref.store %e9, %C[%row0, %col17] : memref<?x?xf32>
      %e10 = llvm.extractvalue %acc[10] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e10, %C[%row1, %col16] : memref<?x?xf32>
      %e11 = llvm.extractvalue %acc[11] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e11, %C[%row1, %col17] : memref<?x?xf32>
      %e12 = llvm.extractvalue %acc[12] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o24 = arith.constant 24 : index
      %col24 = arith.addi %col0, %o24 : index
      memref.store %e12, %C[%row0, %col24] : memref<?x?xf32>
      %e13 = llvm.extractvalue %acc[13] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o25 = arith.constant 25 : index
      %col25 = arith.addi %col0, %o25 : index
      memref.store %e13, %C[%row0, %col25] : memref<?x?xf32>
      %e14 = llvm.extractvalue %acc[14] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e14, %C[%row1, %col24] : memref<?x?xf32>
      %e15 = llvm.extractvalue %acc[15] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e15, %C[%row1, %col25] : memref<?x?xf32>
      %e16 = llvm.extractvalue %acc[16] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o32 = arith.constant 32 : index
      %col32 = arith.addi %col0, %o32 : index
      memref.store %e16, %C[%row0, %col32] : memref<?x?xf32>
      %e17 = llvm.extractvalue %acc[17] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o33 = arith.constant 33 : index
      %col33 = arith.addi %col0, %o33 : index
      memref.store %e17, %C[%row0, %col33] : memref<?x?xf32>
      %e18 = llvm.extractvalue %acc[18] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e18, %C[%row1, %col32] : memref<?x?xf32>
      %e19 = llvm.extractvalue %acc[19] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e19, %C[%row1, %col33] : memref<?x?xf32>
      %e20 = llvm.extractvalue %acc[20] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o40 = arith.constant 40 : index
      %col40 = arith.addi %col0, %o40 : index
      memref.store %e20, %C[%row0, %col40] : memref<?x?xf32>
      %e21 = llvm.extractvalue %acc[21] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o41 = arith.constant 41 : index
      %col41 = arith.addi %col0, %o41 : index
      memref.store %e21, %C[%row0, %col41] : memref<?x?xf32>
      %e22 = llvm.extractvalue %acc[22] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e22, %C[%row1, %col40] : memref<?x?xf32>
      %e23 = llvm.extractvalue %acc[23] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e23, %C[%row1, %col41] : memref<?x?xf32>
      %e24 = llvm.extractvalue %acc[24] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o48 = arith.constant 48 : index
      %col48 = arith.addi %col0, %o48 : index
      memref.store %e24, %C[%row0, %col48] : memref<?x?xf32>
      %e25 = llvm.extractvalue %acc[25] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o49 = arith.constant 49 : index
      %col49 = arith.addi %col0, %o49 : index
      memref.store %e25, %C[%row0, %col49] : memref<?x?xf32>
      %e26 = llvm.extractvalue %acc[26] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e26, %C[%row1, %col48] : memref<?x?xf32>
      %e27 = llvm.extractvalue %acc[27] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e27, %C[%row1, %col49] : memref<?x?xf32>
      %e28 = llvm.extractvalue %acc[28] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o56 = arith.constant 56 : index
      %col56 = arith.addi %col0, %o56 : index
      memref.store %e28, %C[%row0, %col56] : memref<?x?xf32>
      %e29 = llvm.extractvalue %acc[29] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %o57 = arith.constant 57 : index
      %col57 = arith.addi %col0, %o57 : index
      memref.store %e29, %C[%row0, %col57] : memref<?x?xf32>
      %e30 = llvm.extractvalue %acc[30] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e30, %C[%row1, %col56] : memref<?x?xf32>
      %e31 = llvm.extractvalue %acc[31] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e31, %C[%row1, %col57] : memref<?x?xf32>
    }
    func.return
  }
}
