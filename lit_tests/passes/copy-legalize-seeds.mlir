// The five seed errors (lit_tests/dialects/copy/seed-diagnostics.mlir) are one situation: a
// kernel written for a TMA target meets sm_80. Written for the TMA target, each seed's
// kernel legalizes to sm_80 and verifies (seeds 1 for f32, 2, 3 and 4, here), or
// copy-legalize reports what it cannot keep (seed 1 for bf16: rule LG2; seed 5, TMEM: rule
// LG1; both in copy-legalize-errors.mlir).
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_80}' | filecheck %s

// Seed 2 (collective needs TMA): the collective TMA load becomes a per-CTA cp.async load.
// CHECK-LABEL: func.func @collective
// CHECK-NOT: copy.cluster
// CHECK: copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl cp_async oob zeros : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
// CHECK-NEXT: copy.barrier_wait %bar[%c0], %phase
func.func @collective(%x: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// Seed 3 (leader_tracked needs TMA): written for sm_100a, the leader-tracked load becomes a
// per-CTA cp.async load on the CTA's own barrier; the leader's accounting (its barrier
// credited with both CTAs' boxes) goes.
// CHECK-LABEL: func.func @leader_tracked
// CHECK-SAME: copy.target = #copy.target<"sm_80">
// CHECK-NOT: leader_tracked
// CHECK: copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl cp_async oob zeros : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
// CHECK-NEXT: copy.barrier_wait %bar[%c0], %phase
func.func @leader_tracked(%x: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// Seed 4 (a barrier needs Hopper): the TMA load on an mbarrier becomes an mbarrier-tracked
// cp.async on the same barrier (impl cp_async named: each of the 128 threads arrives once,
// so the barrier counts 128), and its barrier wait is kept.
// CHECK-LABEL: func.func @barrier
// CHECK: %bar = copy.barrier_init arrivals 128 : !copy.barrier<1>
// CHECK: copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl cp_async oob zeros : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
// CHECK-NEXT: copy.barrier_wait %bar[%c0], %phase
func.func @barrier(%x: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}

// -----

// Seed 1 (a reduction needs TMA): written for sm_90a, the TMA reduce-add of f32 becomes
// thread atomics (memref.atomic_rmw addf: red.global.add.f32), clipped to the array.
// CHECK-LABEL: func.func @reduction
// CHECK: scf.if
// CHECK-NEXT: "memref.atomic_rmw"(%{{.*}}, %o, %{{.*}}, %{{.*}}) <{kind = 0 : i64}> : (f32, memref<256x256xf32>, index, index) -> f32
// CHECK-NOT: copy.commit_group bulk
func.func @reduction(%x: memref<256x256xf32>, %o: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  copy.async_copy %buf to %o[%c0, %c0] reduce add : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}
