// `copy-opt --target sm_80 -p copy-legalize` on each example (examples/*.mlir): the result
// verifies for sm_80 (copy-opt verifies after the pass, the protocol analysis included), or
// the pass says what it cannot keep (lit_tests/passes/copy-legalize-errors.mlir).
// RUN: copy-opt --target sm_80 -p copy-legalize %S/../../examples/tma_tile_copy.mlir | filecheck %s --check-prefix=TILE
// RUN: copy-opt --target sm_80 -p copy-legalize %S/../../examples/oob_copy.mlir | filecheck %s --check-prefix=OOB
// RUN: copy-opt --target sm_80 -p copy-legalize %S/../../examples/multicast_copy.mlir | filecheck %s --check-prefix=MULTICAST
// RUN: copy-opt --target sm_80 -p copy-legalize %S/../../examples/swizzled_copy.mlir | filecheck %s --check-prefix=SWIZZLED
// RUN: copy-opt --target sm_80 -p copy-legalize %S/../../examples/cp_async_copy.mlir | filecheck %s --check-prefix=CPASYNC
// RUN: copy-opt --target sm_80 -p copy-legalize %S/../../examples/reduce_add.mlir | filecheck %s --check-prefix=REDUCE
// RUN: copy-opt --target sm_86 -p copy-legalize,lower-copy-to-llvm -t ptx %S/../../examples/reduce_add.mlir | filecheck %s --check-prefix=RED
// And each compiles for sm_86.
// RUN: copy-opt --target sm_86 -p copy-legalize,lower-copy-to-llvm -t ptx %S/../../examples/tma_tile_copy.mlir | filecheck %s --check-prefix=PTX
// RUN: copy-opt --target sm_86 -p copy-legalize,lower-copy-to-llvm -t ptx %S/../../examples/multicast_copy.mlir | filecheck %s --check-prefix=PTX
// RUN: copy-opt --target sm_86 -p copy-legalize,lower-copy-to-llvm -t ptx %S/../../examples/swizzled_copy.mlir | filecheck %s --check-prefix=PTX

// TILE: builtin.module attributes {copy.target = #copy.target<"sm_80">}
// TILE: %y_aligned = memref.assume_alignment %y, 16 : memref<4096x4096xf32>
// TILE: copy.barrier_init arrivals 128
// TILE: copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] impl cp_async oob zeros
// TILE-NEXT: copy.barrier_wait %bar[%c0],
// TILE: vector.store %{{.*}}, %y_aligned[%{{.*}}, %{{.*}}] : memref<4096x4096xf32>, vector<4xf32>
// OOB: copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] impl cp_async oob zeros : memref<1000x1000xf32>
// OOB: arith.constant 1000 : index
// MULTICAST-NOT: copy.cluster
// MULTICAST: copy.async_copy %x[%half, %c0, %col] to %tile barrier %bar[%c0] impl cp_async oob zeros : memref<128x32x4096xf32> to memref<2x32x64xf32, #copy.smem>, !copy.barrier<1>
// SWIZZLED: %tile = copy.alloc_smem : memref<64x32xf32, #copy.smem>
// CPASYNC: copy.async_copy %x[%row, %col] to %tile impl cp_async oob zeros
// REDUCE: "memref.atomic_rmw"(%{{.*}}, %o, %{{.*}}, %{{.*}}) <{kind = 0 : i64}> : (f32, memref<4096x4096xf32>, index, index) -> f32
// RED: .target sm_86
// RED: red.global.add.f32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
// PTX: .target sm_86
// PTX-NOT: cp.async.bulk
// PTX: mbarrier.init.shared.b64
// PTX: cp.async.cg.shared.global
// PTX: cp.async.mbarrier.arrive.noinc.shared.b64
// PTX: mbarrier.test_wait.parity.shared.b64
// PTX: ld.shared.v4.b32
// PTX: st.global.v4.b32
