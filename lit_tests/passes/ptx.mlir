// The examples through the whole pipeline (convert-copy-to-nvvm ... translation, LLVM's
// NVPTX backend), checked on the PTX instructions they must contain.

// RUN: copy-opt %S/../../examples/tma_tile_copy.mlir -t ptx | filecheck %s --check-prefix=TMA
// TMA: .target sm_90a
// TMA: .extern .shared .align 1024 .b8 __copy_smem[];
// TMA: .entry tile_copy(
// TMA: .param .align 64 .b8 tile_copy_param_2[128]
// TMA: .reqntid 128, 1, 1
// TMA: mbarrier.init.shared.b64
// TMA: fence.proxy.async.shared::cta
// TMA: mbarrier.arrive.expect_tx.shared.b64
// TMA: cp.async.bulk.tensor.2d.shared::cta.global{{(.tile)?}}.mbarrier::complete_tx::bytes
// TMA: mbarrier.try_wait.parity.shared::cta.b64
// TMA: cp.async.bulk.tensor.2d.global.shared::cta{{(.tile)?}}.bulk_group
// TMA: cp.async.bulk.commit_group
// TMA: cp.async.bulk.wait_group 0
// TMA-NOT: .extern .func

// RUN: copy-opt %S/../../examples/multicast_copy.mlir -t ptx | filecheck %s --check-prefix=MULTICAST
// MULTICAST: .reqnctapercluster 2, 1, 1
// MULTICAST: fence.mbarrier_init.release.cluster
// MULTICAST: barrier.cluster.arrive
// MULTICAST: barrier.cluster.wait
// MULTICAST: mov.u32 %r{{[0-9]+}}, %cluster_ctarank;
// MULTICAST: cp.async.bulk.tensor.3d.shared::cluster.global{{(.tile)?}}.mbarrier::complete_tx::bytes.multicast::cluster

// RUN: copy-opt %S/../../examples/reduce_add.mlir -t ptx | filecheck %s --check-prefix=REDUCE
// REDUCE: cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group

// RUN: copy-opt %S/../../examples/cp_async_copy.mlir -t ptx | filecheck %s --check-prefix=CPASYNC
// CPASYNC: .target sm_80
// CPASYNC: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// CPASYNC: cp.async.commit_group;
// CPASYNC: cp.async.wait_group 0;

// RUN: copy-opt %s -t ptx | filecheck %s --check-prefix=TMEM
// TMEM: .target sm_100a
// TMEM: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// TMEM: tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned
// TMEM: tcgen05.ld.sync.aligned.32x32b.x4.b32
// TMEM: tcgen05.wait::ld.sync.aligned
// TMEM: tcgen05.st.sync.aligned.32x32b.x4.b32
// TMEM: tcgen05.wait::st.sync.aligned
// TMEM: tcgen05.dealloc.cta_group::1.sync.aligned.b32

// TMEM round trip, assembled for sm_100a (never run: the project's GPU is an H200).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tmem_round_trip(%col: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %v = copy.tmem_load %acc[%col] shape shape_32x32b num 4 : memref<128x128xf32, #copy.tmem> -> vector<4xf32>
    copy.tmem_wait load
    copy.tmem_store %v, %acc[%col] shape shape_32x32b num 4 : vector<4xf32>, memref<128x128xf32, #copy.tmem>
    copy.tmem_wait store
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
