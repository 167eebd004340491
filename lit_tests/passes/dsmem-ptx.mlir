// RUN: copy-opt %s -t ptx --target sm_90a | filecheck %s

// Distributed shared memory through the whole pipeline (PTX ISA 8.1 or later: st.async
// needs it; sm_90a emits 8.3):
// every op maps its SMEM address and its barrier's to the peer (`mapa.shared::cluster`),
// then st.async stores a thread's value as .bN integers (a vector of 4 f32 as .v4.b32, an
// f64 as .b64), red.async takes the PTX type of its op and element (add on i32 is .u32,
// umax on ui32 .u32, add on i64 .u64), the bulk copy goes shared::cta -> shared::cluster,
// and the arrivals are release.cluster on shared::cluster (with expect_tx, or not), or
// relaxed.cluster with `relaxed` (PTX ISA 8.6).
// ptxas -arch=sm_90a accepts this PTX.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @dsmem(%peer: index, %v: vector<4xf32>, %d: f64, %n: i32, %u: ui32, %w: i64) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c2 = arith.constant 2 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
    %rows = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %dbl = copy.alloc_smem : memref<64xf64, #copy.smem>
    %cnt = copy.alloc_smem : memref<64xi32, #copy.smem>
    %ucnt = copy.alloc_smem : memref<64xui32, #copy.smem>
    %wide = copy.alloc_smem : memref<64xi64, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<3>
    // CHECK: .version 8.6
    // CHECK: mapa.shared::cluster.u64
    // CHECK: mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%r{{[0-9]+}}], %r{{[0-9]+}};
    copy.peer_arrive %bars[%c0] peer %peer expect_tx 21504 : !copy.barrier<3>
    // CHECK: st.async.weak.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%r{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}];
    copy.peer_store %v, %rows[%c1, %c4] peer %peer, %bars[%c0] : vector<4xf32>, memref<64x64xf32, #copy.smem>, !copy.barrier<3>
    // CHECK: st.async.weak.shared::cluster.mbarrier::complete_tx::bytes.b64 [%r{{[0-9]+}}], %rd{{[0-9]+}}, [%r{{[0-9]+}}];
    copy.peer_store %d, %dbl[%c4] peer %peer, %bars[%c0] : f64, memref<64xf64, #copy.smem>, !copy.barrier<3>
    // CHECK: red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r{{[0-9]+}}], %r{{[0-9]+}}, [%r{{[0-9]+}}];
    copy.peer_store reduce add %n, %cnt[%c4] peer %peer, %bars[%c0] : i32, memref<64xi32, #copy.smem>, !copy.barrier<3>
    // CHECK: red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.max.u32
    copy.peer_store reduce umax %u, %ucnt[%c4] peer %peer, %bars[%c0] : ui32, memref<64xui32, #copy.smem>, !copy.barrier<3>
    // CHECK: red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u64 [%r{{[0-9]+}}], %rd{{[0-9]+}}, [%r{{[0-9]+}}];
    copy.peer_store reduce add %w, %wide[%c4] peer %peer, %bars[%c0] : i64, memref<64xi64, #copy.smem>, !copy.barrier<3>
    // The slot is 64 x 64 x 4 bytes.
    // CHECK: mov.b32 %r[[SIZE:[0-9]+]], 16384;
    // CHECK: cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%r{{[0-9]+}}], %r[[SIZE]], [%r{{[0-9]+}}];
    copy.peer_copy %buf[%c0] to %buf[%c1] peer %peer, %bars[%c0] : memref<2x64x64xf32, #copy.smem> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<3>
    // CHECK: mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r{{[0-9]+}}];
    copy.peer_arrive %bars[%c1] peer %peer : !copy.barrier<3>
    // CHECK: mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%r{{[0-9]+}}];
    copy.peer_arrive %bars[%c2] peer %peer relaxed : !copy.barrier<3>
    copy.barrier_wait %bars[%c0], %false : !copy.barrier<3>
    copy.barrier_wait %bars[%c1], %false : !copy.barrier<3>
    copy.barrier_wait %bars[%c2], %false : !copy.barrier<3>
    // copy.cluster_sync: barrier.cluster.arrive (release by default, or .relaxed), then wait.
    // CHECK: barrier.cluster.arrive;
    // CHECK-NEXT: barrier.cluster.wait;
    copy.cluster_sync
    // CHECK-NEXT: barrier.cluster.arrive.relaxed.aligned;
    copy.cluster_sync arrive relaxed aligned
    // CHECK-NEXT: barrier.cluster.wait.aligned;
    copy.cluster_sync wait aligned
    func.return
  }
}
