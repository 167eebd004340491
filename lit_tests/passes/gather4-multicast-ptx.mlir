// RUN: copy-opt %s -t ptx --target sm_100a | filecheck %s
// RUN: copy-opt %s -p convert-copy-to-nvvm | filecheck %s --check-prefix=NVVM

// A multicast gather4 through the whole pipeline: CTA 0 of a cluster of 2 arrives on its
// barrier expecting the 4-row tile's 512 bytes and issues the gather4 into the
// `.shared::cluster` window with `.multicast::cluster` and the 16-bit mask (3: both CTAs);
// CTA 1 arms its own barrier with the same bytes.

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @gather4_multicast(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %both = arith.constant 3 : i16
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    scf.if %leader {
      copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] multicast %both : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    } else {
      copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    }
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// CHECK-LABEL: .entry gather4_multicast(
// CHECK: .reqnctapercluster 2, 1, 1
// CHECK: mov.b32 [[BYTES:%r[0-9]+]], 512;
// CHECK: mbarrier.arrive.expect_tx.shared.b64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}], [[BYTES]];
// CHECK: mov.b16 [[MASK:%rs[0-9]+]], 3;
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes.multicast::cluster [%rd{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], [%rd{{[0-9]+}}], [[MASK]];
// CHECK: mov.b32 [[PEER:%r[0-9]+]], 512;
// CHECK: mbarrier.arrive.expect_tx.shared.b64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}], [[PEER]];

// NVVM: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] multicast_mask = %{{.*}} {mode = #nvvm.tma_load_mode<tile_gather4>} : !llvm.ptr<3>, !llvm.ptr
