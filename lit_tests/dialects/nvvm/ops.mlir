// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// Every op of the nvvm dialect in its custom form, printed back after a trip through the
// generic form (CHECK), and in the generic form itself (CHECK-GENERIC).

// CHECK-LABEL: llvm.func @sregs(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "sregs"
llvm.func @sregs() {
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.tid.x : i32
  // CHECK-GENERIC: %{{.*}} = "nvvm.read.ptx.sreg.tid.x"() : () -> i32
  %0 = nvvm.read.ptx.sreg.tid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.tid.y : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.tid.y"() : () -> i32
  %1 = nvvm.read.ptx.sreg.tid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.tid.z : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.tid.z"() : () -> i32
  %2 = nvvm.read.ptx.sreg.tid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.ntid.x : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.ntid.x"() : () -> i32
  %3 = nvvm.read.ptx.sreg.ntid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.ntid.y : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.ntid.y"() : () -> i32
  %4 = nvvm.read.ptx.sreg.ntid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.ntid.z : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.ntid.z"() : () -> i32
  %5 = nvvm.read.ptx.sreg.ntid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.ctaid.x : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.ctaid.x"() : () -> i32
  %6 = nvvm.read.ptx.sreg.ctaid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.ctaid.y : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.ctaid.y"() : () -> i32
  %7 = nvvm.read.ptx.sreg.ctaid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.ctaid.z : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.ctaid.z"() : () -> i32
  %8 = nvvm.read.ptx.sreg.ctaid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.nctaid.x : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.nctaid.x"() : () -> i32
  %9 = nvvm.read.ptx.sreg.nctaid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.nctaid.y : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.nctaid.y"() : () -> i32
  %10 = nvvm.read.ptx.sreg.nctaid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.nctaid.z : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.nctaid.z"() : () -> i32
  %11 = nvvm.read.ptx.sreg.nctaid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.clusterid.x : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.clusterid.x"() : () -> i32
  %12 = nvvm.read.ptx.sreg.clusterid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.clusterid.y : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.clusterid.y"() : () -> i32
  %13 = nvvm.read.ptx.sreg.clusterid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.clusterid.z : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.clusterid.z"() : () -> i32
  %14 = nvvm.read.ptx.sreg.clusterid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.nclusterid.x : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.nclusterid.x"() : () -> i32
  %15 = nvvm.read.ptx.sreg.nclusterid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.nclusterid.y : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.nclusterid.y"() : () -> i32
  %16 = nvvm.read.ptx.sreg.nclusterid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.nclusterid.z : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.nclusterid.z"() : () -> i32
  %17 = nvvm.read.ptx.sreg.nclusterid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.ctaid.x : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.cluster.ctaid.x"() : () -> i32
  %18 = nvvm.read.ptx.sreg.cluster.ctaid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.ctaid.y : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.cluster.ctaid.y"() : () -> i32
  %19 = nvvm.read.ptx.sreg.cluster.ctaid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.ctaid.z : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.cluster.ctaid.z"() : () -> i32
  %20 = nvvm.read.ptx.sreg.cluster.ctaid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.nctaid.x : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.cluster.nctaid.x"() : () -> i32
  %21 = nvvm.read.ptx.sreg.cluster.nctaid.x : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.nctaid.y : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.cluster.nctaid.y"() : () -> i32
  %22 = nvvm.read.ptx.sreg.cluster.nctaid.y : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.nctaid.z : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.cluster.nctaid.z"() : () -> i32
  %23 = nvvm.read.ptx.sreg.cluster.nctaid.z : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.ctarank : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.cluster.ctarank"() : () -> i32
  %24 = nvvm.read.ptx.sreg.cluster.ctarank : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.cluster.nctarank : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.cluster.nctarank"() : () -> i32
  %25 = nvvm.read.ptx.sreg.cluster.nctarank : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.laneid : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.laneid"() : () -> i32
  %26 = nvvm.read.ptx.sreg.laneid : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.warpid : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.warpid"() : () -> i32
  %27 = nvvm.read.ptx.sreg.warpid : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.nwarpid : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.nwarpid"() : () -> i32
  %28 = nvvm.read.ptx.sreg.nwarpid : i32
  // CHECK-NEXT: %{{.*}} = nvvm.read.ptx.sreg.warpsize : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.read.ptx.sreg.warpsize"() : () -> i32
  %29 = nvvm.read.ptx.sreg.warpsize : i32
  llvm.return
}

// -----

// CHECK-LABEL: llvm.func @sync_and_mbarrier(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "sync_and_mbarrier"
llvm.func @sync_and_mbarrier(%bar: !llvm.ptr<3>, %n: i32, %p: i1) {
  // CHECK-NEXT: nvvm.barrier0
  // CHECK-GENERIC: "nvvm.barrier0"() : () -> ()
  nvvm.barrier0
  // CHECK-NEXT: nvvm.cluster.arrive
  // CHECK-GENERIC-NEXT: "nvvm.cluster.arrive"() : () -> ()
  nvvm.cluster.arrive
  // CHECK-NEXT: nvvm.cluster.arrive {aligned}
  // CHECK-GENERIC-NEXT: "nvvm.cluster.arrive"() <{aligned}> : () -> ()
  nvvm.cluster.arrive {aligned}
  // CHECK-NEXT: nvvm.cluster.wait {aligned}
  // CHECK-GENERIC-NEXT: "nvvm.cluster.wait"() <{aligned}> : () -> ()
  nvvm.cluster.wait {aligned}
  // CHECK-NEXT: nvvm.fence.mbarrier.init
  // CHECK-GENERIC-NEXT: "nvvm.fence.mbarrier.init"() : () -> ()
  nvvm.fence.mbarrier.init
  // CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
  // CHECK-GENERIC-NEXT: "nvvm.fence.proxy"() <{kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}> : () -> ()
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
  // CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.global>}
  // CHECK-GENERIC-NEXT: "nvvm.fence.proxy"() <{kind = #nvvm.proxy_kind<async.global>}> : () -> ()
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.global>}
  // CHECK-NEXT: nvvm.mbarrier.init.shared %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
  // CHECK-GENERIC-NEXT: "nvvm.mbarrier.init.shared"(%{{.*}}, %{{.*}}) : (!llvm.ptr<3>, i32) -> ()
  nvvm.mbarrier.init.shared %bar, %n : !llvm.ptr<3>, i32
  // CHECK-NEXT: nvvm.mbarrier.init.shared %{{.*}}, %{{.*}}, predicate = %{{.*}} : !llvm.ptr<3>, i32, i1
  // CHECK-GENERIC-NEXT: "nvvm.mbarrier.init.shared"(%{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr<3>, i32, i1) -> ()
  nvvm.mbarrier.init.shared %bar, %n, predicate = %p : !llvm.ptr<3>, i32, i1
  // CHECK-NEXT: %{{.*}} = nvvm.mbarrier.arrive.shared %{{.*}} : !llvm.ptr<3> -> i64
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.mbarrier.arrive.shared"(%{{.*}}) : (!llvm.ptr<3>) -> i64
  %0 = nvvm.mbarrier.arrive.shared %bar : !llvm.ptr<3> -> i64
  // CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx.shared %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
  // CHECK-GENERIC-NEXT: "nvvm.mbarrier.arrive.expect_tx.shared"(%{{.*}}, %{{.*}}) : (!llvm.ptr<3>, i32) -> ()
  nvvm.mbarrier.arrive.expect_tx.shared %bar, %n : !llvm.ptr<3>, i32
  // CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx.shared %{{.*}}, %{{.*}}, predicate = %{{.*}} : !llvm.ptr<3>, i32, i1
  // CHECK-GENERIC-NEXT: "nvvm.mbarrier.arrive.expect_tx.shared"(%{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr<3>, i32, i1) -> ()
  nvvm.mbarrier.arrive.expect_tx.shared %bar, %n, predicate = %p : !llvm.ptr<3>, i32, i1
  // CHECK-NEXT: nvvm.mbarrier.try_wait.parity.shared %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32, i32
  // CHECK-GENERIC-NEXT: "nvvm.mbarrier.try_wait.parity.shared"(%{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr<3>, i32, i32) -> ()
  nvvm.mbarrier.try_wait.parity.shared %bar, %n, %n : !llvm.ptr<3>, i32, i32
  // CHECK-NEXT: nvvm.mbarrier.test_wait.parity.shared %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
  // CHECK-GENERIC-NEXT: "nvvm.mbarrier.test_wait.parity.shared"(%{{.*}}, %{{.*}}) : (!llvm.ptr<3>, i32) -> ()
  nvvm.mbarrier.test_wait.parity.shared %bar, %n : !llvm.ptr<3>, i32
  llvm.return
}

// -----

// CHECK-LABEL: llvm.func @cp_async(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "cp_async"
llvm.func @cp_async(%dst: !llvm.ptr<3>, %src: !llvm.ptr<1>, %n: i32) {
  // CHECK-NEXT: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
  // CHECK-GENERIC: "nvvm.cp.async.shared.global"(%{{.*}}, %{{.*}}) <{size = 16 : i32, modifier = #nvvm<load_cache_modifier cg>}> : (!llvm.ptr<3>, !llvm.ptr<1>) -> ()
  nvvm.cp.async.shared.global %dst, %src, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
  // CHECK-NEXT: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.shared.global"(%{{.*}}, %{{.*}}, %{{.*}}) <{size = 4 : i32, modifier = #nvvm<load_cache_modifier ca>}> : (!llvm.ptr<3>, !llvm.ptr<1>, i32) -> ()
  nvvm.cp.async.shared.global %dst, %src, 4, cache = ca, %n : !llvm.ptr<3>, !llvm.ptr<1>, i32
  // CHECK-NEXT: nvvm.cp.async.commit.group
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.commit.group"() : () -> ()
  nvvm.cp.async.commit.group
  // CHECK-NEXT: nvvm.cp.async.wait.group 2
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.wait.group"() <{n = 2 : i32}> : () -> ()
  nvvm.cp.async.wait.group 2
  llvm.return
}

// -----

// CHECK-LABEL: llvm.func @tma(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "tma"
llvm.func @tma(%smem: !llvm.ptr<3>, %peer: !llvm.ptr<7>, %tmap: !llvm.ptr, %bar: !llvm.ptr<3>, %c: i32, %off: i16, %mask: i16, %hint: i64, %p: i1) {
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr<3>, !llvm.ptr
  // CHECK-GENERIC: "nvvm.cp.async.bulk.tensor.shared.cluster.global"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 2, 1, 0, 0, 0, 0>}> : (!llvm.ptr<3>, !llvm.ptr, i32, i32, !llvm.ptr<3>) -> ()
  nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmap, %bar, box[%c, %c] : !llvm.ptr<3>, !llvm.ptr
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] multicast_mask = %{{.*}} l2_cache_hint = %{{.*}} predicate = %{{.*}} : !llvm.ptr<3>, !llvm.ptr
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.tensor.shared.cluster.global"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 2, 1, 0, 1, 1, 1>}> : (!llvm.ptr<3>, !llvm.ptr, i32, i32, !llvm.ptr<3>, i16, i64, i1) -> ()
  nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmap, %bar, box[%c, %c] multicast_mask = %mask l2_cache_hint = %hint predicate = %p : !llvm.ptr<3>, !llvm.ptr
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] im2col[%{{.*}}] {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<7>, !llvm.ptr
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.tensor.shared.cluster.global"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{group = #nvvm.cta_group<cta_2>, operandSegmentSizes = array<i32: 1, 1, 3, 1, 1, 0, 0, 0>}> : (!llvm.ptr<7>, !llvm.ptr, i32, i32, i32, !llvm.ptr<3>, i16) -> ()
  nvvm.cp.async.bulk.tensor.shared.cluster.global %peer, %tmap, %bar, box[%c, %c, %c] im2col[%off] {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<7>, !llvm.ptr
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr, !llvm.ptr<3>, i32, i32
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.tensor.global.shared.cta"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 2, 0, 0>}> : (!llvm.ptr, !llvm.ptr<3>, i32, i32) -> ()
  nvvm.cp.async.bulk.tensor.global.shared.cta %tmap, %smem, box[%c, %c] : !llvm.ptr, !llvm.ptr<3>, i32, i32
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%{{.*}}], predicate = %{{.*}} : !llvm.ptr, !llvm.ptr<3>, i32, i1
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.tensor.global.shared.cta"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>}> : (!llvm.ptr, !llvm.ptr<3>, i32, i1) -> ()
  nvvm.cp.async.bulk.tensor.global.shared.cta %tmap, %smem, box[%c], predicate = %p : !llvm.ptr, !llvm.ptr<3>, i32, i1
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%{{.*}}] l2_cache_hint = %{{.*}} : !llvm.ptr, !llvm.ptr<3>, i32, i64
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.tensor.global.shared.cta"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}> : (!llvm.ptr, !llvm.ptr<3>, i32, i64) -> ()
  nvvm.cp.async.bulk.tensor.global.shared.cta %tmap, %smem, box[%c] l2_cache_hint = %hint : !llvm.ptr, !llvm.ptr<3>, i32, i64
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.reduce %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.tensor.reduce"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{redKind = #nvvm.tma_redux_kind<add>, operandSegmentSizes = array<i32: 1, 1, 2, 0>}> : (!llvm.ptr, !llvm.ptr<3>, i32, i32) -> ()
  nvvm.cp.async.bulk.tensor.reduce %tmap, %smem, box[%c, %c] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.reduce %{{.*}}, %{{.*}}, box[%{{.*}}] l2_cache_hint = %{{.*}} {redKind = #nvvm.tma_redux_kind<xor>} : !llvm.ptr, !llvm.ptr<3>
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.tensor.reduce"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{redKind = #nvvm.tma_redux_kind<xor>, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (!llvm.ptr, !llvm.ptr<3>, i32, i64) -> ()
  nvvm.cp.async.bulk.tensor.reduce %tmap, %smem, box[%c] l2_cache_hint = %hint {redKind = #nvvm.tma_redux_kind<xor>} : !llvm.ptr, !llvm.ptr<3>
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.prefetch %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.tensor.prefetch"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 2, 0, 0>}> : (!llvm.ptr, i32, i32) -> ()
  nvvm.cp.async.bulk.tensor.prefetch %tmap, box[%c, %c] : !llvm.ptr
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.prefetch %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] im2col[%{{.*}}] l2_cache_hint = %{{.*}} : !llvm.ptr
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.tensor.prefetch"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 3, 1, 1>}> : (!llvm.ptr, i32, i32, i32, i16, i64) -> ()
  nvvm.cp.async.bulk.tensor.prefetch %tmap, box[%c, %c, %c] im2col[%off] l2_cache_hint = %hint : !llvm.ptr
  // CHECK-NEXT: nvvm.cp.async.bulk.commit.group
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.commit.group"() : () -> ()
  nvvm.cp.async.bulk.commit.group
  // CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.wait_group"() <{group = 0 : i32, read}> : () -> ()
  nvvm.cp.async.bulk.wait_group 0 {read}
  // CHECK-NEXT: nvvm.cp.async.bulk.wait_group 1
  // CHECK-GENERIC-NEXT: "nvvm.cp.async.bulk.wait_group"() <{group = 1 : i32}> : () -> ()
  nvvm.cp.async.bulk.wait_group 1
  // CHECK-NEXT: %{{.*}} = nvvm.mapa %{{.*}}, %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.mapa"(%{{.*}}, %{{.*}}) : (!llvm.ptr<3>, i32) -> !llvm.ptr<7>
  %0 = nvvm.mapa %smem, %c : !llvm.ptr<3> -> !llvm.ptr<7>
  // CHECK-NEXT: %{{.*}} = nvvm.mapa %{{.*}}, %{{.*}} : !llvm.ptr -> !llvm.ptr
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.mapa"(%{{.*}}, %{{.*}}) : (!llvm.ptr, i32) -> !llvm.ptr
  %1 = nvvm.mapa %tmap, %c : !llvm.ptr -> !llvm.ptr
  llvm.return
}

// -----

// CHECK-LABEL: llvm.func @tcgen05(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "tcgen05"
llvm.func @tcgen05(%slot: !llvm.ptr<3>, %tmem: !llvm.ptr<6>, %ncols: i32, %desc: i64, %off: i64, %v: vector<4xi32>, %r: i32) {
  // CHECK-NEXT: nvvm.tcgen05.alloc %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
  // CHECK-GENERIC: "nvvm.tcgen05.alloc"(%{{.*}}, %{{.*}}) : (!llvm.ptr<3>, i32) -> ()
  nvvm.tcgen05.alloc %slot, %ncols : !llvm.ptr<3>, i32
  // CHECK-NEXT: nvvm.tcgen05.alloc %{{.*}}, %{{.*}} {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i32
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.alloc"(%{{.*}}, %{{.*}}) <{group = #nvvm.cta_group<cta_2>}> : (!llvm.ptr<3>, i32) -> ()
  nvvm.tcgen05.alloc %slot, %ncols {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i32
  // CHECK-NEXT: nvvm.tcgen05.dealloc %{{.*}}, %{{.*}} : !llvm.ptr<6>, i32
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.dealloc"(%{{.*}}, %{{.*}}) : (!llvm.ptr<6>, i32) -> ()
  nvvm.tcgen05.dealloc %tmem, %ncols : !llvm.ptr<6>, i32
  // CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.relinquish_alloc_permit"() : () -> ()
  nvvm.tcgen05.relinquish_alloc_permit
  // CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit {group = #nvvm.cta_group<cta_2>}
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.relinquish_alloc_permit"() <{group = #nvvm.cta_group<cta_2>}> : () -> ()
  nvvm.tcgen05.relinquish_alloc_permit {group = #nvvm.cta_group<cta_2>}
  // CHECK-NEXT: nvvm.tcgen05.wait <load>
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.wait"() <{kind = #nvvm.tcgen05_wait<load>}> : () -> ()
  nvvm.tcgen05.wait <load>
  // CHECK-NEXT: nvvm.tcgen05.wait <store>
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.wait"() <{kind = #nvvm.tcgen05_wait<store>}> : () -> ()
  nvvm.tcgen05.wait <store>
  // CHECK-NEXT: nvvm.tcgen05.cp %{{.*}}, %{{.*}} {shape = #nvvm.tcgen05_cp_shape<shape_128x256b>}
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.cp"(%{{.*}}, %{{.*}}) <{shape = #nvvm.tcgen05_cp_shape<shape_128x256b>}> : (!llvm.ptr<6>, i64) -> ()
  nvvm.tcgen05.cp %tmem, %desc {shape = #nvvm.tcgen05_cp_shape<shape_128x256b>}
  // CHECK-NEXT: nvvm.tcgen05.cp %{{.*}}, %{{.*}} {shape = #nvvm.tcgen05_cp_shape<shape_32x128b>, group = #nvvm.cta_group<cta_2>, multicast = #nvvm.tcgen05_cp_multicast<warpx4>, srcFormat = #nvvm.tcgen05_cp_src_fmt<b6x16_p32>}
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.cp"(%{{.*}}, %{{.*}}) <{shape = #nvvm.tcgen05_cp_shape<shape_32x128b>, group = #nvvm.cta_group<cta_2>, multicast = #nvvm.tcgen05_cp_multicast<warpx4>, srcFormat = #nvvm.tcgen05_cp_src_fmt<b6x16_p32>}> : (!llvm.ptr<6>, i64) -> ()
  nvvm.tcgen05.cp %tmem, %desc {shape = #nvvm.tcgen05_cp_shape<shape_32x128b>, group = #nvvm.cta_group<cta_2>, multicast = #nvvm.tcgen05_cp_multicast<warpx4>, srcFormat = #nvvm.tcgen05_cp_src_fmt<b6x16_p32>}
  // CHECK-NEXT: nvvm.tcgen05.shift %{{.*}} : !llvm.ptr<6>
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.shift"(%{{.*}}) : (!llvm.ptr<6>) -> ()
  nvvm.tcgen05.shift %tmem : !llvm.ptr<6>
  // CHECK-NEXT: nvvm.tcgen05.shift %{{.*}} {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<6>
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.shift"(%{{.*}}) <{group = #nvvm.cta_group<cta_2>}> : (!llvm.ptr<6>) -> ()
  nvvm.tcgen05.shift %tmem {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<6>
  // CHECK-NEXT: %{{.*}} = nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.tcgen05.ld"(%{{.*}}) <{shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>}> : (!llvm.ptr<6>) -> vector<4xi32>
  %0 = nvvm.tcgen05.ld %tmem {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
  // CHECK-NEXT: %{{.*}} = nvvm.tcgen05.ld %{{.*}}, %{{.*}} pack {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : i32
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.tcgen05.ld"(%{{.*}}, %{{.*}}) <{pack, shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>}> : (!llvm.ptr<6>, i64) -> i32
  %1 = nvvm.tcgen05.ld %tmem, %off pack {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : i32
  // CHECK-NEXT: nvvm.tcgen05.st %{{.*}}, %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<4xi32>
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.st"(%{{.*}}, %{{.*}}) <{shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>}> : (!llvm.ptr<6>, vector<4xi32>) -> ()
  nvvm.tcgen05.st %tmem, %v {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<4xi32>
  // CHECK-NEXT: nvvm.tcgen05.st %{{.*}}, %{{.*}}, %{{.*}} unpack {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : i32
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.st"(%{{.*}}, %{{.*}}, %{{.*}}) <{unpack, shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>}> : (!llvm.ptr<6>, i32, i64) -> ()
  nvvm.tcgen05.st %tmem, %r, %off unpack {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : i32
  llvm.return
}

// -----

// CHECK-LABEL: llvm.func @shfl(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "shfl"
llvm.func @shfl(%mask: i32, %v: f32, %i: i32, %offset: i32, %clamp: i32) {
  // CHECK-NEXT: %{{.*}} = nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32 -> f32
  // CHECK-GENERIC: %{{.*}} = "nvvm.shfl.sync"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{kind = #nvvm<shfl_kind bfly>}> : (i32, f32, i32, i32) -> f32
  %0 = nvvm.shfl.sync bfly %mask, %v, %offset, %clamp : f32 -> f32
  // CHECK-NEXT: %{{.*}} = nvvm.shfl.sync idx %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {return_value_and_is_valid} : i32 -> !llvm.struct<(i32, i1)>
  // CHECK-GENERIC-NEXT: %{{.*}} = "nvvm.shfl.sync"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{kind = #nvvm<shfl_kind idx>, return_value_and_is_valid}> : (i32, i32, i32, i32) -> !llvm.struct<(i32, i1)>
  %1 = nvvm.shfl.sync idx %mask, %i, %offset, %clamp {return_value_and_is_valid} : i32 -> !llvm.struct<(i32, i1)>
  llvm.return
}

// -----

// CHECK-LABEL: llvm.func @matrix(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "matrix"
llvm.func @matrix(%p: !llvm.ptr<3>, %r: i32) {
  // CHECK-NEXT: %{{.*}} = nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
  // CHECK-GENERIC: "nvvm.ldmatrix"(%{{.*}}) <{eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}> : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
  %0 = nvvm.ldmatrix %p {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
  // CHECK-NEXT: %{{.*}} = nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 1 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> i32
  %1 = nvvm.ldmatrix %p {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 1 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> i32
  // CHECK-NEXT: %{{.*}} = nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b8x16.b6x16_p32>, layout = #nvvm.mma_layout<col>, num = 1 : i32, shape = #nvvm.ld_st_matrix_shape<m = 16, n = 16>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32)>
  %2 = nvvm.ldmatrix %p {eltType = #nvvm.ld_st_matrix_elt_type<b8x16.b6x16_p32>, layout = #nvvm.mma_layout<col>, num = 1 : i32, shape = #nvvm.ld_st_matrix_shape<m = 16, n = 16>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32)>
  // CHECK-NEXT: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32
  // CHECK-GENERIC: "nvvm.stmatrix"(%{{.*}}, %{{.*}}, %{{.*}}) <{eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}> : (!llvm.ptr<3>, i32, i32) -> ()
  nvvm.stmatrix %p, %r, %r {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32
  // CHECK-NEXT: nvvm.stmatrix %{{.*}}, %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b8>, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 16, n = 8>} : !llvm.ptr<3>, i32
  nvvm.stmatrix %p, %r {eltType = #nvvm.ld_st_matrix_elt_type<b8>, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 16, n = 8>} : !llvm.ptr<3>, i32
  llvm.return
}
