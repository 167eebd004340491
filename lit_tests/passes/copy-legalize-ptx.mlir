// The thread atomics a TMA reduction becomes before sm_90: memref.atomic_rmw (upstream's
// AtomicRMWKind numbers) -> red.global.<op>.<type>, and for inc/dec a
// memref.generic_atomic_rmw with the wrapping body -> red.global.{inc,dec}.u32 (ptxas
// accepts this PTX for sm_80 and sm_90a).
// RUN: copy-opt %s -p 'copy-legalize{target=sm_80},lower-copy-to-llvm' -t ptx | filecheck %s

// CHECK: .target sm_80
// CHECK: red.global.add.f32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
// CHECK: red.global.add.noftz.f16 [%rd{{[0-9]+}}], %rs{{[0-9]+}};
// CHECK: red.global.min.u32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
// CHECK: red.global.max.s64 [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK: red.global.xor.b32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
// CHECK: red.global.inc.u32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
// CHECK: red.global.dec.u32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @reductions(%a: memref<256xf32>, %b: memref<256xf16>, %c: memref<256xi32>, %d: memref<256xi64>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %sa = copy.alloc_smem : memref<64xf32, #copy.smem>
    %sb = copy.alloc_smem : memref<64xf16, #copy.smem>
    %sc = copy.alloc_smem : memref<64xi32, #copy.smem>
    %sd = copy.alloc_smem : memref<64xi64, #copy.smem>
    copy.async_copy %sa to %a[%c0] impl tma reduce add : memref<64xf32, #copy.smem> to memref<256xf32>
    copy.async_copy %sb to %b[%c0] impl tma reduce add : memref<64xf16, #copy.smem> to memref<256xf16>
    copy.async_copy %sc to %c[%c0] impl tma reduce umin : memref<64xi32, #copy.smem> to memref<256xi32>
    copy.async_copy %sd to %d[%c0] impl tma reduce smax : memref<64xi64, #copy.smem> to memref<256xi64>
    copy.async_copy %sc to %c[%c0] impl tma reduce xor : memref<64xi32, #copy.smem> to memref<256xi32>
    copy.async_copy %sc to %c[%c0] impl tma reduce inc : memref<64xi32, #copy.smem> to memref<256xi32>
    copy.async_copy %sc to %c[%c0] impl tma reduce dec : memref<64xi32, #copy.smem> to memref<256xi32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
