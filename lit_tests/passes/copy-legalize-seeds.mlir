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

// Seed 3 (leader_tracked needs TMA): written for sm_100a as CUTLASS writes a 2-SM load, the
// leader (the even CTA) alone waits on the barrier both boxes land on, then tells its peer
// (a remote arrive on the peer's %ready). (This test's kernel used to wait on %bar in both
// CTAs: on sm_100a no byte reaches the peer's barrier and its wait hangs, as the interpreter
// shows.) The remote arrive folds the cluster into one block, a role per CTA; the
// leader-tracked load becomes each role's cp.async load on its own barrier, and the pass
// copies the leader's wait into the peer's branch, where its box now lands.
// CHECK-LABEL: func.func @leader_tracked
// CHECK-SAME: copy.target = #copy.target<"sm_80">
// CHECK-NOT: leader_tracked
// CHECK: copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] impl cp_async oob zeros : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
// CHECK-NEXT: scf.if %leader {
// CHECK-NEXT: copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
// CHECK: } else {
// CHECK-NEXT: copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
// CHECK-NEXT: copy.barrier_wait %ready[%c0], %phase : !copy.barrier<1>
func.func @leader_tracked(%x: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %phase = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %leader = arith.cmpi eq, %rank, %c0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %ready = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  scf.if %leader {
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.peer_arrive %ready[%c0] peer %peer : !copy.barrier<1>
  } else {
    copy.barrier_wait %ready[%c0], %phase : !copy.barrier<1>
  }
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
