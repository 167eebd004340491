// An im2col TMA load before sm_90: copy-legalize keeps it as an im2col load gathered by
// cp.async (impl cp_async): the same pixels, offsets, corners and strides on the same
// barrier, each of the block's 128 threads arriving once (arrivals 1 -> 128); the 128-byte
// swizzle and the L2 policy (the map's) go.
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_80}' | filecheck %s
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_86}' | filecheck %s
// Legalizing the result again changes nothing.
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_80}' > %t.once
// RUN: copy-opt %t.once --split-input-file -p 'copy-legalize{target=sm_80}' > %t.twice
// RUN: diff %t.once %t.twice
// The gather is cp.async chunks (16 bytes: 32 f32 channels, a 256-byte pixel stride) and one
// noinc arrival per thread; no im2col tensor map is left.
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_86},lower-copy-to-llvm' -t ptx | filecheck %s --check-prefix=PTX

// CHECK-LABEL: func.func @im2col(
// CHECK:       %[[BUF:.*]] = copy.alloc_smem : memref<64x32xf32, #copy.smem>
// CHECK:       %[[BAR:.*]] = copy.barrier_init arrivals 128 : !copy.barrier<1>
// CHECK:       copy.im2col_load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] offsets[%{{.*}}, %{{.*}}] to %[[BUF]] barrier %[[BAR]][%{{.*}}] impl cp_async {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>, strides = array<i64: 2, 1>} : memref<1x9x7x64xf32> to memref<64x32xf32, #copy.smem>, !copy.barrier<1>
// CHECK-NEXT:  copy.barrier_wait %[[BAR]]
// PTX:         .target sm_86
// PTX-NOT:     .im2col
// PTX:         cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// PTX:         cp.async.mbarrier.arrive.noinc.shared.b64
// PTX:         mbarrier.test_wait.parity.shared.b64
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @im2col(%x: memref<1x9x7x64xf32>, %y: memref<35x576xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %m1 = arith.constant -1 : index
    %c32 = arith.constant 32 : index
    %r = arith.constant 1 : i16
    %s = arith.constant 2 : i16
    %phase = arith.constant false
    %buf = copy.alloc_smem : memref<64x32xf32, #copy.smem<swizzle = 128>>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.im2col_load %x[%c0, %m1, %m1, %c32] offsets [%r, %s] to %buf barrier %bar[%c0] l2 evict_last {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>, strides = array<i64: 2, 1>} : memref<1x9x7x64xf32> to memref<64x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %buf to %y[%c0, %c0] : memref<64x32xf32, #copy.smem<swizzle = 128>> to memref<35x576xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// In a warp-specialized kernel: the producer role's one warp gathers (arrivals 1 -> 32), the
// consumer role waits on the barrier and stores the tile from its threads.
// CHECK-LABEL: func.func @im2col_ws(
// CHECK:       copy.barrier_init arrivals 32 : !copy.barrier<1>
// CHECK:       copy.warp_specialize warps [1, 1]
// CHECK:       copy.im2col_load {{.*}} impl cp_async
// CHECK:       copy.barrier_wait
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @im2col_ws(%x: memref<2x9x9x16xf16>, %y: memref<64x16xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %t = arith.constant 0 : i16
    %phase = arith.constant false
    %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%i: index):
      copy.im2col_load %x[%c0, %c0, %c0, %c0] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: 0, 0>, upper = array<i64: 0, 0>} : memref<2x9x9x16xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
    }, {
    ^bb0(%j: index):
      copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
      copy.async_copy %buf to %y[%c0, %c0] : memref<64x16xf16, #copy.smem> to memref<64x16xf16>
      copy.commit_group bulk
      copy.wait_group bulk 0
    }
    func.return
  }
}
