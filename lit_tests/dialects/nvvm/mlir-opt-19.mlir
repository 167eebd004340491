// REQUIRES: mlir-opt-19
// RUN: copy-opt %s | mlir-opt-19 | filecheck %s

// The nvvm ops that LLVM 19 has, as copy-opt prints them, parse in Debian's mlir-opt-19
// (what it prints back is checked: MLIR 19 spells a pointer type it expects as `<3>`).
// Not here, being newer than LLVM 19: nvvm.mapa, the TMA reduce and prefetch, tcgen05,
// %warpid/%nwarpid, the `group` of a TMA load, the l2_cache_hint of a TMA store, and our
// own nvvm.mbarrier.test_wait.parity.shared.

// CHECK-LABEL: llvm.func @sregs(
llvm.func @sregs() {
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.tid.x : i32
  %0 = nvvm.read.ptx.sreg.tid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.tid.y : i32
  %1 = nvvm.read.ptx.sreg.tid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.tid.z : i32
  %2 = nvvm.read.ptx.sreg.tid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.ntid.x : i32
  %3 = nvvm.read.ptx.sreg.ntid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.ntid.y : i32
  %4 = nvvm.read.ptx.sreg.ntid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.ntid.z : i32
  %5 = nvvm.read.ptx.sreg.ntid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.ctaid.x : i32
  %6 = nvvm.read.ptx.sreg.ctaid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.ctaid.y : i32
  %7 = nvvm.read.ptx.sreg.ctaid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.ctaid.z : i32
  %8 = nvvm.read.ptx.sreg.ctaid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.nctaid.x : i32
  %9 = nvvm.read.ptx.sreg.nctaid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.nctaid.y : i32
  %10 = nvvm.read.ptx.sreg.nctaid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.nctaid.z : i32
  %11 = nvvm.read.ptx.sreg.nctaid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.clusterid.x : i32
  %12 = nvvm.read.ptx.sreg.clusterid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.clusterid.y : i32
  %13 = nvvm.read.ptx.sreg.clusterid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.clusterid.z : i32
  %14 = nvvm.read.ptx.sreg.clusterid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.nclusterid.x : i32
  %15 = nvvm.read.ptx.sreg.nclusterid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.nclusterid.y : i32
  %16 = nvvm.read.ptx.sreg.nclusterid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.nclusterid.z : i32
  %17 = nvvm.read.ptx.sreg.nclusterid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.ctaid.x : i32
  %18 = nvvm.read.ptx.sreg.cluster.ctaid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.ctaid.y : i32
  %19 = nvvm.read.ptx.sreg.cluster.ctaid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.ctaid.z : i32
  %20 = nvvm.read.ptx.sreg.cluster.ctaid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.nctaid.x : i32
  %21 = nvvm.read.ptx.sreg.cluster.nctaid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.nctaid.y : i32
  %22 = nvvm.read.ptx.sreg.cluster.nctaid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.nctaid.z : i32
  %23 = nvvm.read.ptx.sreg.cluster.nctaid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.ctarank : i32
  %24 = nvvm.read.ptx.sreg.cluster.ctarank : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.nctarank : i32
  %25 = nvvm.read.ptx.sreg.cluster.nctarank : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.laneid : i32
  %26 = nvvm.read.ptx.sreg.laneid : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.warpsize : i32
  %27 = nvvm.read.ptx.sreg.warpsize : i32
  llvm.return
}

// CHECK-LABEL: llvm.func @sync_and_mbarrier(
llvm.func @sync_and_mbarrier(%bar: !llvm.ptr<3>, %n: i32, %p: i1) {
  // CHECK-NEXT: nvvm.barrier0
  nvvm.barrier0
  // CHECK-NEXT: nvvm.cluster.arrive
  nvvm.cluster.arrive
  // CHECK-NEXT: nvvm.cluster.arrive {aligned}
  nvvm.cluster.arrive {aligned}
  // CHECK-NEXT: nvvm.cluster.wait {aligned}
  nvvm.cluster.wait {aligned}
  // CHECK-NEXT: nvvm.fence.mbarrier.init
  nvvm.fence.mbarrier.init
  // CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
  // CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.global>}
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.global>}
  // CHECK-NEXT: nvvm.mbarrier.init.shared %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
  nvvm.mbarrier.init.shared %bar, %n : !llvm.ptr<3>, i32
  // CHECK-NEXT: nvvm.mbarrier.init.shared %{{.*}}, %{{.*}}, predicate = %{{.*}} : !llvm.ptr<3>, i32, i1
  nvvm.mbarrier.init.shared %bar, %n, predicate = %p : !llvm.ptr<3>, i32, i1
  // CHECK-NEXT: %{{.*}} = nvvm.mbarrier.arrive.shared %{{.*}} : !llvm.ptr<3> -> i64
  %0 = nvvm.mbarrier.arrive.shared %bar : !llvm.ptr<3> -> i64
  // CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx.shared %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
  nvvm.mbarrier.arrive.expect_tx.shared %bar, %n : !llvm.ptr<3>, i32
  // CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx.shared %{{.*}}, %{{.*}}, predicate = %{{.*}} : !llvm.ptr<3>, i32, i1
  nvvm.mbarrier.arrive.expect_tx.shared %bar, %n, predicate = %p : !llvm.ptr<3>, i32, i1
  // CHECK-NEXT: nvvm.mbarrier.try_wait.parity.shared %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32, i32
  nvvm.mbarrier.try_wait.parity.shared %bar, %n, %n : !llvm.ptr<3>, i32, i32
  llvm.return
}

// CHECK-LABEL: llvm.func @cp_async(
llvm.func @cp_async(%dst: !llvm.ptr<3>, %src: !llvm.ptr<1>, %n: i32) {
  // CHECK-NEXT: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg : !llvm.ptr<3>, !llvm.ptr<1>
  nvvm.cp.async.shared.global %dst, %src, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
  // CHECK-NEXT: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache =  ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
  nvvm.cp.async.shared.global %dst, %src, 4, cache = ca, %n : !llvm.ptr<3>, !llvm.ptr<1>, i32
  // CHECK-NEXT: nvvm.cp.async.commit.group
  nvvm.cp.async.commit.group
  // CHECK-NEXT: nvvm.cp.async.wait.group 2
  nvvm.cp.async.wait.group 2
  llvm.return
}

// CHECK-LABEL: llvm.func @tma(
llvm.func @tma(%smem: !llvm.ptr<3>, %tmap: !llvm.ptr, %bar: !llvm.ptr<3>, %c: i32, %off: i16, %mask: i16, %hint: i64, %p: i1) {
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] : <3>, !llvm.ptr
  nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmap, %bar, box[%c, %c] : !llvm.ptr<3>, !llvm.ptr
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] multicast_mask = %{{.*}} l2_cache_hint = %{{.*}} predicate = %{{.*}} : <3>, !llvm.ptr
  nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmap, %bar, box[%c, %c] multicast_mask = %mask l2_cache_hint = %hint predicate = %p : !llvm.ptr<3>, !llvm.ptr
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] im2col[%{{.*}}] : <3>, !llvm.ptr
  nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmap, %bar, box[%c, %c, %c] im2col[%off] : !llvm.ptr<3>, !llvm.ptr
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr, !llvm.ptr<3>, i32, i32
  nvvm.cp.async.bulk.tensor.global.shared.cta %tmap, %smem, box[%c, %c] : !llvm.ptr, !llvm.ptr<3>, i32, i32
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%{{.*}}], predicate = %{{.*}} : !llvm.ptr, !llvm.ptr<3>, i32, i1
  nvvm.cp.async.bulk.tensor.global.shared.cta %tmap, %smem, box[%c], predicate = %p : !llvm.ptr, !llvm.ptr<3>, i32, i1
  // CHECK-NEXT: nvvm.cp.async.bulk.commit.group
  nvvm.cp.async.bulk.commit.group
  // CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
  nvvm.cp.async.bulk.wait_group 0 {read}
  // CHECK-NEXT: nvvm.cp.async.bulk.wait_group 1
  nvvm.cp.async.bulk.wait_group 1
  llvm.return
}

// CHECK-LABEL: llvm.func @shfl(
llvm.func @shfl(%mask: i32, %v: f32, %offset: i32, %clamp: i32) {
  // CHECK-NEXT: %{{.*}} = nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32 -> f32
  %0 = nvvm.shfl.sync bfly %mask, %v, %offset, %clamp : f32 -> f32
  // CHECK-NEXT: %{{.*}} = nvvm.shfl.sync up %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {return_value_and_is_valid} : f32 -> !llvm.struct<(f32, i1)>
  %1 = nvvm.shfl.sync up %mask, %v, %offset, %clamp {return_value_and_is_valid} : f32 -> !llvm.struct<(f32, i1)>
  llvm.return
}
