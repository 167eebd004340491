// On a TMA target without tcgen05 (sm_90a) a leader-tracked load becomes a per-CTA TMA load
// on the CTA's own barrier; on one without multicast (sm_90) a collective load does. The
// barrier protocol stays (each load arrives expecting its own box).
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_90a}' | filecheck %s --check-prefix=SM90A
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_90}' | filecheck %s --check-prefix=SM90

// Written for sm_100a as CUTLASS writes a 2-SM load: both CTAs' boxes land on the leader's
// barrier, so only the leader (the even CTA) waits on it and the cluster barrier then tells
// the peer. (This test's kernel used to wait on %bar in both CTAs: on sm_100a the peer's own
// barrier gets no byte and its wait hangs, as the interpreter shows.) As per-CTA loads the
// peer's box lands on its own barrier: the pass copies the leader's wait into the peer's
// branch.
// SM90A-LABEL: func.func @leader_tracked
// SM90A-SAME: copy.target = #copy.target<"sm_90a">
// SM90A: copy.barrier_init arrivals 1 : !copy.barrier<1>
// SM90A-NEXT: copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
// SM90A-NEXT: scf.if %leader {
// SM90A-NEXT: copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
// SM90A-NEXT: } else {
// SM90A-NEXT: copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
// SM90A-NEXT: }
// SM90A-NEXT: copy.cluster_sync
// SM90-LABEL: func.func @leader_tracked
// SM90: copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32>
func.func @leader_tracked(%x: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %phase = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %leader = arith.cmpi eq, %rank, %c0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  scf.if %leader {
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  }
  copy.cluster_sync
  func.return
}

// -----

// sm_90a keeps the multicast; sm_90 has none: each CTA loads the whole tile itself.
// SM90A-LABEL: func.func @multicast
// SM90A: {collective = array<i64: 0>}
// SM90-LABEL: func.func @multicast
// SM90-NOT: collective
// SM90: copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32>
func.func @multicast(%x: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %phase = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
  func.return
}
