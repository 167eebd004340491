// RUN: copy-opt %s -p convert-copy-to-nvvm | filecheck %s --check-prefix=NVVM
// RUN: copy-opt %s -t ptx | filecheck %s
// RUN: copy-opt %s -t ptx --target sm_100f | filecheck %s
// RUN: copy-opt %s -t ptx --target sm_103a | filecheck %s
// RUN: copy-opt %s -t ptx --target sm_110a | filecheck %s
// RUN: copy-opt %s -t ptx --target sm_110f | filecheck %s
// RUN: copy-opt %s -t ptx --target sm_120a | filecheck %s

// Cluster launch control lowered (passes/convert_copy_to_nvvm/cluster_launch_control.py):
// copy.try_cancel becomes upstream's nvvm.clusterlaunchcontrol.try.cancel (multicast), LLVM's
// llvm.nvvm.clusterlaunchcontrol.try_cancel.async{.multicast}.shared and PTX's
// clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes
// {.multicast::cluster::all}.b128 at the slot's address, issued by the elected thread (thread 0
// outside roles);
// copy.query_cancel a 16-byte load of the slot (i128) and the four query_cancel decodes. CTA 0
// of the pair requests for both (multicast), once their barriers are initialized.
// tests/passes/test_cluster_launch_control.py assembles it with nvJitLink and ptxas for each
// target that has the instructions.

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  // NVVM-LABEL: func.func @steal(
  // NVVM: scf.if
  // NVVM: nvvm.clusterlaunchcontrol.try.cancel multicast, %{{.*}}, %{{.*}}
  // NVVM: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> i128
  // NVVM-NEXT: nvvm.clusterlaunchcontrol.query.cancel query = is_canceled, %{{.*}} : i1
  // NVVM-NEXT: nvvm.clusterlaunchcontrol.query.cancel query = get_first_cta_id_x, %{{.*}} : i32
  // NVVM-NEXT: nvvm.clusterlaunchcontrol.query.cancel query = get_first_cta_id_y, %{{.*}} : i32
  // NVVM-NEXT: nvvm.clusterlaunchcontrol.query.cancel query = get_first_cta_id_z, %{{.*}} : i32
  // CHECK-LABEL: .entry steal(
  // CHECK: clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128 [%{{.*}}], [%{{.*}}];
  // CHECK: ld.shared.v2.b64
  // CHECK-DAG: clusterlaunchcontrol.query_cancel.is_canceled.pred.b128
  // CHECK-DAG: clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128
  // CHECK-DAG: clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128
  // CHECK-DAG: clusterlaunchcontrol.query_cancel.get_first_ctaid::z.b32.b128
  func.func @steal(%out: memref<4x256xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c128 = arith.constant 128 : index
    %false = arith.constant false
    %resp = copy.alloc_smem : memref<2x16xi8, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    copy.cluster_sync
    %bx = gpu.block_id x
    %rank = arith.remui %bx, %c2 : index
    %lead = arith.cmpi eq, %rank, %c0 : index
    copy.barrier_arrive_expect_tx %bars[%c1], 16 : !copy.barrier<2>
    scf.if %lead {
      copy.try_cancel %resp[%c1] barrier %bars[%c1] multicast : memref<2x16xi8, #copy.smem>, !copy.barrier<2>
    }
    copy.barrier_wait %bars[%c1], %false : !copy.barrier<2>
    %ok, %x, %y, %z = copy.query_cancel %resp[%c1] : memref<2x16xi8, #copy.smem>
    %t = gpu.thread_id x
    %r128 = arith.muli %rank, %c128 : index
    %tid = arith.addi %r128, %t : index
    %okw = arith.extui %ok : i1 to i32
    memref.store %okw, %out[%c0, %tid] : memref<4x256xi32>
    memref.store %x, %out[%c1, %tid] : memref<4x256xi32>
    memref.store %y, %out[%c2, %tid] : memref<4x256xi32>
    memref.store %z, %out[%c3, %tid] : memref<4x256xi32>
    func.return
  }
}
