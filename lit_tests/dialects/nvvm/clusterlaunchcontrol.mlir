// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// Upstream NVVM's cluster launch control ops (NVVMOps.td: nvvm.clusterlaunchcontrol.try.cancel
// and nvvm.clusterlaunchcontrol.query.cancel), printed back after a trip through the generic
// form (CHECK), and the generic form (CHECK-GENERIC).

// CHECK-LABEL: llvm.func @clc(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "clc"
llvm.func @clc(%addr: !llvm.ptr<3>, %mbar: !llvm.ptr<3>, %response: i128) {
  // CHECK-NEXT: nvvm.clusterlaunchcontrol.try.cancel %{{.*}}, %{{.*}}
  // CHECK-GENERIC: "nvvm.clusterlaunchcontrol.try.cancel"(%{{.*}}, %{{.*}}) : (!llvm.ptr<3>, !llvm.ptr<3>) -> ()
  nvvm.clusterlaunchcontrol.try.cancel %addr, %mbar
  // CHECK-NEXT: nvvm.clusterlaunchcontrol.try.cancel multicast, %{{.*}}, %{{.*}}
  // CHECK-GENERIC: "nvvm.clusterlaunchcontrol.try.cancel"(%{{.*}}, %{{.*}}) <{multicast}> : (!llvm.ptr<3>, !llvm.ptr<3>) -> ()
  nvvm.clusterlaunchcontrol.try.cancel multicast, %addr, %mbar
  // CHECK-NEXT: %{{.*}} = nvvm.clusterlaunchcontrol.query.cancel query = is_canceled, %{{.*}} : i1
  // CHECK-GENERIC: "nvvm.clusterlaunchcontrol.query.cancel"(%{{.*}}) <{query_type = "is_canceled"}> : (i128) -> i1
  %c = nvvm.clusterlaunchcontrol.query.cancel query = is_canceled, %response : i1
  // CHECK-NEXT: %{{.*}} = nvvm.clusterlaunchcontrol.query.cancel query = get_first_cta_id_x, %{{.*}} : i32
  %x = nvvm.clusterlaunchcontrol.query.cancel query = get_first_cta_id_x, %response : i32
  // CHECK-NEXT: %{{.*}} = nvvm.clusterlaunchcontrol.query.cancel query = get_first_cta_id_y, %{{.*}} : i32
  %y = nvvm.clusterlaunchcontrol.query.cancel query = get_first_cta_id_y, %response : i32
  // CHECK-NEXT: %{{.*}} = nvvm.clusterlaunchcontrol.query.cancel query = get_first_cta_id_z, %{{.*}} : i32
  %z = nvvm.clusterlaunchcontrol.query.cancel query = get_first_cta_id_z, %response : i32
  llvm.return
}
