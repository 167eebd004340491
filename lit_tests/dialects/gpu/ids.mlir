// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// The custom forms of gpu's id ops, gpu.lane_id and gpu.barrier, as upstream MLIR prints them
// (copy_dialect/upstream_gpu.py installs them on xDSL 0.75's classes, which parse and print
// only the generic forms), printed back after a trip through the generic form (CHECK), and
// the generic form itself (CHECK-GENERIC).

// CHECK-LABEL: func.func @ids(
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "ids"
func.func @ids() {
  // CHECK-NEXT: %{{.*}} = gpu.thread_id x
  // CHECK-GENERIC: "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %0 = gpu.thread_id x
  // CHECK-NEXT: %{{.*}} = gpu.thread_id y
  // CHECK-GENERIC-NEXT: "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
  %1 = gpu.thread_id y
  // CHECK-NEXT: %{{.*}} = gpu.block_id z
  // CHECK-GENERIC-NEXT: "gpu.block_id"() <{dimension = #gpu<dim z>}> : () -> index
  %2 = gpu.block_id z
  // CHECK-NEXT: %{{.*}} = gpu.block_dim x
  // CHECK-GENERIC-NEXT: "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
  %3 = gpu.block_dim x
  // CHECK-NEXT: %{{.*}} = gpu.grid_dim y
  // CHECK-GENERIC-NEXT: "gpu.grid_dim"() <{dimension = #gpu<dim y>}> : () -> index
  %4 = gpu.grid_dim y
  // CHECK-NEXT: %{{.*}} = gpu.global_id x
  // CHECK-GENERIC-NEXT: "gpu.global_id"() <{dimension = #gpu<dim x>}> : () -> index
  %5 = gpu.global_id x
  // CHECK-NEXT: %{{.*}} = gpu.lane_id
  // CHECK-GENERIC-NEXT: "gpu.lane_id"() : () -> index
  %6 = gpu.lane_id
  // CHECK-NEXT: gpu.barrier
  // CHECK-GENERIC-NEXT: "gpu.barrier"() : () -> ()
  gpu.barrier
  // The generic form still parses, and prints in the custom one.
  // CHECK-NEXT: %{{.*}} = gpu.thread_id z
  %7 = "gpu.thread_id"() <{dimension = #gpu<dim z>}> : () -> index
  func.return
}
