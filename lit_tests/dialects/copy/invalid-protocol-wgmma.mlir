// RUN: copy-opt %s --split-input-file --verify-diagnostics

// Tensor-core reads released too early, one mistake per chunk: a wgmma
// (nvvm.wgmma.mma_async, or an op that declares #copy.effect<async_read N until
// wgmma_wait_group>) reads the slots its descriptors (copy.matrix_descriptor) point into
// until the nvvm.wgmma.wait.group.sync.aligned that retires its group; handing a slot back
// before that (P2, at the release), writing it (P2, at the write) or ending with the read in
// flight (P7) is an error. A tcgen05.mma (sm_100a) reads them until the phase of the mbarrier
// a later nvvm.tcgen05.commit arrives on. The kernels are tests/analysis/wgmma_kernels.py's;
// the checks analysis/protocol/mma.py and ops_mma.py. `// fix: s|OLD|NEW|` lines give the
// edit the note describes (tests/tools/test_fix_notes.py).

// The consumer releases slot s (arrives on empty[s]) before the wait that retires its wgmmas:
// the producer, which waits on empty[s], may load the next k-block into the slot while the
// tensor core still reads it.
// rule: P2
// fix: s|        copy.barrier_arrive %empty[%s] issuer warps|        nvvm.wgmma.wait.group.sync.aligned 0 copy.barrier_arrive %empty[%s] issuer warps|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_wgmma_s2_d0_release_before_wait(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<128x64xf32>, %K: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
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
          // expected-note@+1 {{the TMA load, ordered after the arrival, may overwrite %smem_a[0] while it is read}}
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
        // expected-note@+1 {{the tensor-core read of %smem_a[0], not yet retired at the arrival}}
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
        // expected-error@+3 {{this arrival on barrier 0 of %empty hands %smem_a[0] back while the wgmma (nvvm.wgmma.mma_async) may still be reading it: the tensor core reads its descriptor's SMEM until the nvvm.wgmma.wait.group.sync.aligned that retires its group}}
        // expected-note@+2 {{retire the read before the release: nvvm.wgmma.wait.group.sync.aligned 0 before this copy.barrier_arrive (a wait of N retires all but the newest N committed groups: N must leave out the group that reads %smem_a[0])}}
        // expected-note@+1 {{found for %k_tiles = 3}}
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<2>
        nvvm.wgmma.wait.group.sync.aligned 0
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

// CUTLASS keeps one wgmma group in flight (wait.group 1) and then releases the slot of the
// k-block before; this consumer releases slot s, whose group is the newest, still in flight.
// rule: P2
// fix: s|nvvm.wgmma.wait.group.sync.aligned 1|nvvm.wgmma.wait.group.sync.aligned 0|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_wgmma_s2_d1_release_newest(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<128x64xf32>, %K: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
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
          // expected-note@+1 {{the TMA load, ordered after the arrival, may overwrite %smem_a[0] while it is read}}
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
        // expected-note@+1 {{the tensor-core read of %smem_a[0], not yet retired at the arrival}}
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
        // expected-error@+3 {{this arrival on barrier 0 of %empty hands %smem_a[0] back while the wgmma (nvvm.wgmma.mma_async) may still be reading it: the tensor core reads its descriptor's SMEM until the nvvm.wgmma.wait.group.sync.aligned that retires its group}}
        // expected-note@+2 {{retire the read before the release: nvvm.wgmma.wait.group.sync.aligned 0 before this copy.barrier_arrive (a wait of N retires all but the newest N committed groups: N must leave out the group that reads %smem_a[0])}}
        // expected-note@+1 {{found for %k_tiles = 3}}
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<2>
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

// The wgmmas are never committed: wait.group retires only committed groups, so the release
// hands back a slot still read, and the role ends with the reads in flight.
// rule: P2, P7
// fix: s|        nvvm.wgmma.wait.group.sync.aligned 0|        nvvm.wgmma.commit.group.sync.aligned nvvm.wgmma.wait.group.sync.aligned 0|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_wgmma_s2_d0_no_commit(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<128x64xf32>, %K: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
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
    // expected-error@+3 {{role 1 ends while the wgmma (nvvm.wgmma.mma_async) may still read %smem_a[0] (it was never committed, so no wait retires it)}}
    // expected-note@+2 {{nvvm.wgmma.commit.group.sync.aligned, then nvvm.wgmma.wait.group.sync.aligned 0 before the end}}
    // expected-note@+1 {{found for %k_tiles = 1}}
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
          // expected-note@+1 {{the TMA load, ordered after the arrival, may overwrite %smem_a[0] while it is read}}
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
        // expected-note@+2 {{the tensor-core read of %smem_a[0], not yet retired at the arrival}}
        // expected-note@+1 {{the tensor-core read}}
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
        nvvm.wgmma.wait.group.sync.aligned 0
        // expected-error@+3 {{this arrival on barrier 0 of %empty hands %smem_a[0] back while the wgmma (nvvm.wgmma.mma_async) may still be reading it: the tensor core reads its descriptor's SMEM until the nvvm.wgmma.wait.group.sync.aligned that retires its group}}
        // expected-note@+2 {{commit the read (nvvm.wgmma.commit.group.sync.aligned: a wgmma never committed is never retired) and retire it (nvvm.wgmma.wait.group.sync.aligned 0) before this copy.barrier_arrive}}
        // expected-note@+1 {{found for %k_tiles = 3}}
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<2>
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

// The kernel returns (its SMEM freed) while the committed wgmma may still read its slots.
// rule: P7
// fix: s|    func.return|    nvvm.wgmma.wait.group.sync.aligned 0 func.return|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @exit_with_reads_in_flight(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<128x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
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
    // expected-note@+1 {{the tensor-core read}}
    %d0 = nvvm.wgmma.mma_async %da, %db, %zero, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
    nvvm.wgmma.commit.group.sync.aligned
    // expected-error@+2 {{the kernel returns while the wgmma (nvvm.wgmma.mma_async) may still read %smem_a[0]}}
    // expected-note@+1 {{nvvm.wgmma.wait.group.sync.aligned 0 before the end}}
    func.return
  }
}

// -----

// Without roles: the next k-block is loaded into the slot before the wait that retires the
// wgmma reading it.
// rule: P2
// fix: s|    copy.async_copy %A[%c0, %c64]|    nvvm.wgmma.wait.group.sync.aligned 0 copy.async_copy %A[%c0, %c64]|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @reload_before_the_wait(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<128x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
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
    // expected-note@+1 {{the tensor-core read of it}}
    %d0 = nvvm.wgmma.mma_async %da, %db, %zero, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
    nvvm.wgmma.commit.group.sync.aligned
    // The next k-block into the same slot.
    // expected-error@+2 {{the TMA load writes %smem_a[0] while the wgmma (nvvm.wgmma.mma_async) may still be reading it}}
    // expected-note@+1 {{retire its group (nvvm.wgmma.wait.group.sync.aligned 0, or a count below the groups committed after it) before the write}}
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

// A wgmma in inline asm declares that it reads both descriptors' slots until the wgmma wait
// (#copy.effect<async_read N until wgmma_wait_group>); the slot is released before that wait.
// rule: P2
// fix: s|        copy.barrier_arrive %empty[%s] issuer warps|        nvvm.wgmma.wait.group.sync.aligned 0 copy.barrier_arrive %empty[%s] issuer warps|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_wgmma_s2_d0_declared(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<128x64xf32>, %K: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
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
          // expected-note@+1 {{the TMA load, ordered after the arrival, may overwrite %smem_a[0] while it is read}}
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
        // expected-note@+1 {{the tensor-core read of %smem_a[0], not yet retired at the arrival}}
        llvm.inline_asm has_side_effects "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {...}, $0, $1, p, 1, 1, 0, 0;", "l,l" %da0, %db0 {copy.effects = [#copy.effect<async_read 0 until wgmma_wait_group>, #copy.effect<async_read 1 until wgmma_wait_group>]} : (i64, i64) -> ()
        nvvm.wgmma.commit.group.sync.aligned
        // expected-error@+3 {{this arrival on barrier 0 of %empty hands %smem_a[0] back while 'llvm.inline_asm' (a tensor-core read until nvvm.wgmma.wait.group.sync.aligned) may still be reading it: the tensor core reads its descriptor's SMEM until the nvvm.wgmma.wait.group.sync.aligned that retires its group}}
        // expected-note@+2 {{retire the read before the release: nvvm.wgmma.wait.group.sync.aligned 0 before this copy.barrier_arrive (a wait of N retires all but the newest N committed groups: N must leave out the group that reads %smem_a[0])}}
        // expected-note@+1 {{found for %k_tiles = 3}}
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<2>
        nvvm.wgmma.wait.group.sync.aligned 0
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

// A wgmma is a warpgroup's: warps 4g..4g+3 of the block execute it together. With a producer
// role of one warp, the consumer's warps 1-4 straddle two warpgroups.
// rule: P10
// fix: s|warps [1, 4]|warps [4, 4]|
// fix: s|i32: 160, 1, 1|i32: 256, 1, 1|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_wgmma_s2_d1(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<128x64xf32>, %K: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
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
    copy.warp_specialize warps [1, 4] {
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
        // expected-error@+3 {{nvvm.wgmma.fence.aligned is a warpgroup's op (the block's warps 4g..4g+3 execute it together), but of warpgroup 0 (threads 0-127) only some threads reach it: role 1 (threads 32-159 of the block)}}
        // expected-note@+2 {{give the roles before this one whole warpgroups (a producer role of 4 warps, as CUTLASS's producer warpgroup), so that this role's warps start at a multiple of 4 (the block then 256 threads: gpu.known_block_size = 256), and issue the wgmma from all 128 threads of each of its warpgroups}}
        // expected-note@+1 {{found for %k_tiles = 1}}
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
          %ps = arith.remui %pk, %c2 : index
          copy.barrier_arrive %empty[%ps] issuer warps : !copy.barrier<2>
        }
        scf.yield %d3 : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      }
      // expected-error@+3 {{nvvm.wgmma.wait.group.sync.aligned is a warpgroup's op (the block's warps 4g..4g+3 execute it together), but of warpgroup 0 (threads 0-127) only some threads reach it: role 1 (threads 32-159 of the block)}}
      // expected-note@+2 {{give the roles before this one whole warpgroups (a producer role of 4 warps, as CUTLASS's producer warpgroup), so that this role's warps start at a multiple of 4 (the block then 256 threads: gpu.known_block_size = 256), and issue the wgmma from all 128 threads of each of its warpgroups}}
      // expected-note@+1 {{found for %k_tiles = 0}}
      nvvm.wgmma.wait.group.sync.aligned 0
      %held1 = arith.cmpi uge, %k_tiles, %c1 : index
      scf.if %held1 {
        %lk1 = arith.subi %k_tiles, %c1 : index
        %ls1 = arith.remui %lk1, %c2 : index
        copy.barrier_arrive %empty[%ls1] issuer warps : !copy.barrier<2>
      }
      %e = llvm.extractvalue %acc[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      memref.store %e, %C[%t, %c0] : memref<128x64xf32>
    }
    func.return
  }
}

// -----

// The threads write a slot the committed wgmma may still read (an epilogue reusing it).
// rule: P2
// fix: s|    memref.store %h|    nvvm.wgmma.wait.group.sync.aligned 0 memref.store %h|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @threads_store_before_the_wait(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<128x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
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
    // expected-note@+1 {{the tensor-core read of it}}
    %d0 = nvvm.wgmma.mma_async %da, %db, %zero, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
    nvvm.wgmma.commit.group.sync.aligned
    %h = arith.constant 0.0 : f16
    // expected-error@+2 {{threads' store writes %smem_a[0, 0, 0] while the wgmma (nvvm.wgmma.mma_async) may still be reading it}}
    // expected-note@+1 {{retire its group (nvvm.wgmma.wait.group.sync.aligned 0, or a count below the groups committed after it) before the write}}
    memref.store %h, %smem_a[%c0, %c0, %c0] : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    nvvm.wgmma.wait.group.sync.aligned 0
    func.return
  }
}

// -----

// sm_100a: the MMA warp releases slot s with copy.barrier_arrive right after issuing its
// tcgen05.mma, whose reads end only when a tcgen05.commit's mbarrier arrival says so; the
// producer may refill the slot while the MMA reads it. CUTLASS commits on empty[s] instead.
// rule: P2
// fix: s|        copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>||
// fix: s|i64, i64, i32, i1)|i64, i64, i32, i1) %si = arith.index_cast %s : index to i64 %slot_empty = llvm.getelementptr %empty_ptr[%si] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64 nvvm.tcgen05.commit %slot_empty : !llvm.ptr<3>|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tcgen05_s2_release_before_commit(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %K: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %k_tiles = arith.divui %K, %c64 : index
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<2>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %d = builtin.unrealized_conversion_cast %acc : memref<128x128xf32, #copy.tmem> to !llvm.ptr<6>
    %empty_ptr = builtin.unrealized_conversion_cast %empty : !copy.barrier<2> to !llvm.ptr<3>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 128 a f16 b f16 d f32 : i32
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
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
        // expected-note@+1 {{the TMA load, ordered after the arrival, may overwrite %smem_a[0] while it is read}}
        copy.async_copy %A[%c0, %k0] to %smem_a[%s] barrier %full[%s] : memref<1024x1024xf16> to memref<2x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
        copy.async_copy %B[%c0, %k0] to %smem_b[%s] barrier %full[%s] : memref<1024x1024xf16> to memref<2x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
      }
    }, {
    ^bb0(%t: index):
      %lead = arith.cmpi eq, %t, %c0 : index
      scf.for %k = %c0 to %k_tiles step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
        %da = copy.matrix_descriptor %smem_a[%s] major k tcgen05 : memref<2x128x64xf16, #copy.smem<swizzle = 128>> -> i64
        %db = copy.matrix_descriptor %smem_b[%s] major k tcgen05 : memref<2x128x64xf16, #copy.smem<swizzle = 128>> -> i64
        %accumulate = arith.cmpi ne, %k, %c0 : index
        scf.if %lead {
          // expected-note@+1 {{the tensor-core read of %smem_a[0], not yet retired at the arrival}}
          nvvm.tcgen05.mma %d, %da, %db, %idesc, %accumulate {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        }
        // expected-error@+3 {{this arrival on barrier 0 of %empty hands %smem_a[0] back while the tcgen05.mma (nvvm.tcgen05.mma) may still be reading it: the tensor core reads its descriptor's SMEM until the barrier phase its nvvm.tcgen05.commit arrives on completes}}
        // expected-note@+2 {{release the slot with the MMA's end: nvvm.tcgen05.commit on barrier 0 of %empty in place of this copy.barrier_arrive (its arrival comes once the MMA has read the slot; count it in the barrier's arrivals)}}
        // expected-note@+1 {{found for %k_tiles = 3}}
        copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
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
