// RUN: copy-opt %s --split-input-file --verify-diagnostics

// Kernels whose consumers read their ring slots with wgmma through SMEM descriptors
// (copy.matrix_descriptor), proven by the protocol analysis with no finding: each slot is
// released (or refilled) only after the nvvm.wgmma.wait.group.sync.aligned that retires the
// wgmma reading it, or, for tcgen05.mma, through the nvvm.tcgen05.commit that tracks it.
// invalid-protocol-wgmma.mlir holds their mistakes; tests/analysis/test_protocol_wgmma.py runs
// the mainloops for rings of 2 to 6 stages.

// CUTLASS's sm90 consumer mainloop on a ring of 4 stages: wait on full[s], wgmma.fence, four
// m64n64k16 wgmmas along K on the slot's descriptors (plus 2 each step), commit, wait.group 1
// (one group in flight), release the slot of the k-block before; after the loop wait.group 0
// and release the last slot. The trip count is K / 64 for a kernel argument K.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_wgmma_s4_d1(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<128x64xf32>, %K: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %k_tiles = arith.divui %K, %c64 : index
    %smem_a = copy.alloc_smem : memref<4x64x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x64x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<4>
    copy.warp_specialize warps [4, 4] {
    ^bb0(%t: index):
      %producer_warp = arith.divui %t, %c32 : index
      %first_warp = arith.cmpi eq, %producer_warp, %c0 : index
      scf.if %first_warp {
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
          copy.async_copy %A[%c0, %k0] to %smem_a[%s] barrier %full[%s] : memref<1024x1024xf16> to memref<4x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          copy.async_copy %B[%c0, %k0] to %smem_b[%s] barrier %full[%s] : memref<1024x1024xf16> to memref<4x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
        }
      }
    }, {
    ^bb0(%t: index):
      %zero = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %two = arith.constant 2 : i64
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
        %da1 = arith.addi %da0, %two : i64
        %db1 = arith.addi %db0, %two : i64
        %d1 = nvvm.wgmma.mma_async %da1, %db1, %d0, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
        %da2 = arith.addi %da1, %two : i64
        %db2 = arith.addi %db1, %two : i64
        %d2 = nvvm.wgmma.mma_async %da2, %db2, %d1, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
        %da3 = arith.addi %da2, %two : i64
        %db3 = arith.addi %db2, %two : i64
        %d3 = nvvm.wgmma.mma_async %da3, %db3, %d2, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
        nvvm.wgmma.commit.group.sync.aligned
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
      %held1 = arith.cmpi uge, %k_tiles, %c1 : index
      scf.if %held1 {
        %lk1 = arith.subi %k_tiles, %c1 : index
        %ls1 = arith.remui %lk1, %c4 : index
        copy.barrier_arrive %empty[%ls1] issuer warps : !copy.barrier<4>
      }
      %e = llvm.extractvalue %acc[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e, %C[%t, %c0] : memref<128x64xf32>
    }
    func.return
  }
}

// -----

// The simpler consumer: wait.group 0, then release the slot just read.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_wgmma_s4_d0(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<128x64xf32>, %K: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %k_tiles = arith.divui %K, %c64 : index
    %smem_a = copy.alloc_smem : memref<4x64x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x64x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<4>
    copy.warp_specialize warps [4, 4] {
    ^bb0(%t: index):
      %producer_warp = arith.divui %t, %c32 : index
      %first_warp = arith.cmpi eq, %producer_warp, %c0 : index
      scf.if %first_warp {
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
          copy.async_copy %A[%c0, %k0] to %smem_a[%s] barrier %full[%s] : memref<1024x1024xf16> to memref<4x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
          copy.async_copy %B[%c0, %k0] to %smem_b[%s] barrier %full[%s] : memref<1024x1024xf16> to memref<4x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
        }
      }
    }, {
    ^bb0(%t: index):
      %zero = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %two = arith.constant 2 : i64
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
        %da1 = arith.addi %da0, %two : i64
        %db1 = arith.addi %db0, %two : i64
        %d1 = nvvm.wgmma.mma_async %da1, %db1, %d0, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
        %da2 = arith.addi %da1, %two : i64
        %db2 = arith.addi %db1, %two : i64
        %d2 = nvvm.wgmma.mma_async %da2, %db2, %d1, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
        %da3 = arith.addi %da2, %two : i64
        %db3 = arith.addi %db2, %two : i64
        %d3 = nvvm.wgmma.mma_async %da3, %db3, %d2, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
        nvvm.wgmma.commit.group.sync.aligned
        nvvm.wgmma.wait.group.sync.aligned 0
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<4>
        scf.yield %d3 : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      }
      nvvm.wgmma.wait.group.sync.aligned 0
      %e = llvm.extractvalue %acc[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e, %C[%t, %c0] : memref<128x64xf32>
    }
    func.return
  }
}

// -----

// Without roles: the wgmma's group is retired before the next k-block refills its slot.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @reload_after_the_wait(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<128x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %true = arith.constant true
    %t = gpu.thread_id x
    %smem_a = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<1>
    copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0] : memref<1024x1024xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.async_copy %B[%c0, %c0] to %smem_b[%c0] barrier %full[%c0] : memref<1024x1024xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
    %da = copy.matrix_descriptor %smem_a[%c0] major k : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
    %db = copy.matrix_descriptor %smem_b[%c0] major k : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
    %zero = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
    nvvm.wgmma.fence.aligned
    %d0 = nvvm.wgmma.mma_async %da, %db, %zero, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    // The next k-block into the same slot.
    copy.async_copy %A[%c0, %c64] to %smem_a[%c0] barrier %full[%c0] : memref<1024x1024xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.async_copy %B[%c0, %c64] to %smem_b[%c0] barrier %full[%c0] : memref<1024x1024xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %true : !copy.barrier<1>
    nvvm.wgmma.fence.aligned
    %d1 = nvvm.wgmma.mma_async %da, %db, %d0, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    %e = llvm.extractvalue %d1[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
    memref.store %e, %C[%t, %c0] : memref<128x64xf32>
    func.return
  }
}

// -----

// An inline-asm wgmma that declares its reads until the wgmma wait, released after that wait.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_wgmma_s2_d0_declared_after_the_wait(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<128x64xf32>, %K: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %k_tiles = arith.divui %K, %c64 : index
    %smem_a = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<2>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<2>
    copy.warp_specialize warps [4, 4] {
    ^bb0(%t: index):
      %producer_warp = arith.divui %t, %c32 : index
      %first_warp = arith.cmpi eq, %producer_warp, %c0 : index
      scf.if %first_warp {
        scf.for %k = %c0 to %k_tiles step %c1 {
          %s = arith.remui %k, %c2 : index
          %lap = arith.divui %k, %c2 : index
          %again = arith.cmpi uge, %k, %c2 : index
          scf.if %again {
            %prev = arith.subi %lap, %c1 : index
            %pm = arith.remui %prev, %c2 : index
            %pp = arith.cmpi ne, %pm, %c0 : index
            copy.barrier_wait %empty[%s], %pp : !copy.barrier<2>
          }
          %k0 = arith.muli %k, %c64 : index
          copy.async_copy %A[%c0, %k0] to %smem_a[%s] barrier %full[%s] : memref<1024x1024xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
          copy.async_copy %B[%c0, %k0] to %smem_b[%s] barrier %full[%s] : memref<1024x1024xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
        }
      }
    }, {
    ^bb0(%t: index):
      %zero = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %two = arith.constant 2 : i64
      %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%d = %zero) -> (!llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>) {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
        %da0 = copy.matrix_descriptor %smem_a[%s] major k : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
        %db0 = copy.matrix_descriptor %smem_b[%s] major k : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
        nvvm.wgmma.fence.aligned
        llvm.inline_asm has_side_effects "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {...}, $0, $1, p, 1, 1, 0, 0;", "l,l" %da0, %db0 {copy.effects = [#copy.effect<async_read 0 until wgmma_wait_group>, #copy.effect<async_read 1 until wgmma_wait_group>]} : (i64, i64) -> ()
        nvvm.wgmma.commit.group.sync.aligned
        nvvm.wgmma.wait.group.sync.aligned 0
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<2>
        scf.yield %d : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      }
      nvvm.wgmma.wait.group.sync.aligned 0
      %e = llvm.extractvalue %acc[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e, %C[%t, %c0] : memref<128x64xf32>
    }
    func.return
  }
}

// -----

// sm_100a, as CUTLASS's sm100 mainloop: the MMA warp's elected lane issues a tcgen05.mma on
// the slot's descriptors and releases the slot with nvvm.tcgen05.commit on empty[s] (the group
// cast to a pointer, plus s), whose arrival comes once the MMA has read it; after the loop it
// commits to %done and waits on it before the TMEM is freed.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tcgen05_s4(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %K: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %k_tiles = arith.divui %K, %c64 : index
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<4>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<4>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %d = builtin.unrealized_conversion_cast %acc : memref<128x128xf32, #copy.tmem> to !llvm.ptr<6>
    %empty_ptr = builtin.unrealized_conversion_cast %empty : !copy.barrier<4> to !llvm.ptr<3>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 128 a f16 b f16 d f32 : i32
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
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
        copy.async_copy %A[%c0, %k0] to %smem_a[%s] barrier %full[%s] : memref<1024x1024xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
        copy.async_copy %B[%c0, %k0] to %smem_b[%s] barrier %full[%s] : memref<1024x1024xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
      }
    }, {
    ^bb0(%t: index):
      %lead = arith.cmpi eq, %t, %c0 : index
      scf.for %k = %c0 to %k_tiles step %c1 {
        %s = arith.remui %k, %c4 : index
        %lap = arith.divui %k, %c4 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<4>
        %da = copy.matrix_descriptor %smem_a[%s] major k tcgen05 : memref<4x128x64xf16, #copy.smem<swizzle = 128>> -> i64
        %db = copy.matrix_descriptor %smem_b[%s] major k tcgen05 : memref<4x128x64xf16, #copy.smem<swizzle = 128>> -> i64
        %accumulate = arith.cmpi ne, %k, %c0 : index
        scf.if %lead {
          nvvm.tcgen05.mma %d, %da, %db, %idesc, %accumulate {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          %si = arith.index_cast %s : index to i64
          %slot_empty = llvm.getelementptr %empty_ptr[%si] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
          nvvm.tcgen05.commit %slot_empty : !llvm.ptr<3>
        }
      }
      scf.if %lead {
        nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
      }
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    }
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
