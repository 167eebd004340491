// copy-legalize keeps TMA copies of dynamic-shape GMEM refs: the load becomes an
// mbarrier-tracked cp.async of the same ?x? ref (its lowering takes the sizes as kernel
// parameters), the store or reduction thread stores or atomics clipped to the sizes that
// memref.dim reads at run time. One compiled kernel still serves every shape.
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_80}' | filecheck %s
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_86}' | filecheck %s

// A tile copy of ?x? arrays.
// CHECK-LABEL: func.func @dynamic_copy
// CHECK: %bar = copy.barrier_init arrivals 128 : !copy.barrier<1>
// CHECK-NEXT: copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] impl cp_async oob zeros : memref<?x?xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
// CHECK-NEXT: copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
// CHECK: %[[D0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[ROWS:.*]] = memref.dim %y, %[[D0]] : memref<?x?xf32>
// CHECK-NEXT: %[[D1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[COLS:.*]] = memref.dim %y, %[[D1]] : memref<?x?xf32>
// CHECK-NEXT: scf.for
// CHECK: %[[OK0:.*]] = arith.cmpi ult, %{{.*}}, %[[ROWS]] : index
// CHECK-NEXT: %[[OK1:.*]] = arith.cmpi ult, %{{.*}}, %[[COLS]] : index
// CHECK: memref.store %{{.*}}, %y[%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK-NOT: copy.commit_group bulk
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @dynamic_copy(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %col = arith.muli %bx, %c64 : index
    %row = arith.muli %by, %c64 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] oob zeros : memref<?x?xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%row, %col] : memref<64x64xf32, #copy.smem> to memref<?x?xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// A reduction into a ?x256 array: the static column count stays a constant, the row count
// is read with memref.dim; each element is a red.global (memref.atomic_rmw addf).
// CHECK-LABEL: func.func @dynamic_reduce
// CHECK: copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] impl cp_async oob zeros : memref<?x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
// CHECK: %[[D0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[ROWS:.*]] = memref.dim %y, %[[D0]] : memref<?x256xf32>
// CHECK-NEXT: %[[COLS:.*]] = arith.constant 256 : index
// CHECK-NEXT: scf.for
// CHECK: arith.cmpi ult, %{{.*}}, %[[ROWS]] : index
// CHECK-NEXT: arith.cmpi ult, %{{.*}}, %[[COLS]] : index
// CHECK: memref.atomic_rmw
// CHECK-SAME: memref<?x256xf32>
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @dynamic_reduce(%x: memref<?x256xf32>, %y: memref<?x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %col = arith.muli %bx, %c64 : index
    %row = arith.muli %by, %c64 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] oob zeros : memref<?x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%row, %col] reduce add : memref<64x64xf32, #copy.smem> to memref<?x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
