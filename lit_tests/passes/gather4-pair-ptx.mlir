// RUN: copy-opt %s -t ptx --target sm_100a | filecheck %s

// A CTA pair's gather4 through the whole pipeline: the leader (cluster rank bit 0 clear)
// arrives on its barrier expecting both CTAs' tiles (2 x 512 bytes); each CTA issues the
// gather4 into its own tile with `.cta_group::2`, its bytes on the leader's barrier (this
// CTA's barrier address with the peer bit, bit 24 of the shared::cluster window, cleared).

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @gather4_pair(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    // Each CTA gathers its own rows (the peer's shifted by one), both complete on the leader's barrier.
    %s0 = arith.addi %r0, %rank : index
    copy.gather4 %x rows [%s0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] leader_tracked : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    scf.if %leader {
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
      copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    } else {
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    }
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// CHECK-LABEL: .entry gather4_pair(
// CHECK: mov.u32 %r{{[0-9]+}}, %cluster_ctarank;
// CHECK: mov.b32 [[BOTH:%r[0-9]+]], 1024;
// CHECK: mbarrier.arrive.expect_tx.shared.b64 %rd{{[0-9]+}}, [[[BAR:%rd[0-9]+]]], [[BOTH]];
// CHECK: and.b64 [[LEADER:%rd[0-9]+]], [[BAR]], -16777217;
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes.cta_group::2 [%rd{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], [[[LEADER]]];
