// Thread accesses of a dynamic-shape GMEM ref in a kernel: convert-copy-to-nvvm appends the
// sizes they read as i64 parameters (after the caller's arguments: the sizes of a row-major
// ref's strides, all but the outermost, and those memref.dim reads) and records them in the
// kernel's ABI; convert-memref-to-llvm finds them there: the strides are their products,
// memref.dim is the parameter.
// RUN: copy-opt %s --split-input-file -p convert-copy-to-nvvm,convert-memref-to-llvm | filecheck %s

// A store into a ?x?x? array: strides y_size2 * y_size1 and y_size2; memref.dim %y, 2 is
// y_size2 itself (no parameter for the outermost size, which nothing reads), used as the
// index with no cast back and forth.
// CHECK-LABEL: func.func @store_3d(%x: memref<16x64xf32>, %y: memref<?x?x?xf32>, %i: index, %j: index, %y_size1: i64, %y_size2: i64)
// CHECK-SAME: {kind = "size", arg = 1 : i64, dim = 1 : i64}, {kind = "size", arg = 1 : i64, dim = 2 : i64}]
// CHECK: %n = builtin.unrealized_conversion_cast %y_size2 : i64 to index
// CHECK-NEXT: %[[PLANE:.*]] = llvm.mul %y_size2, %y_size1 : i64
// CHECK: %[[A:.*]] = llvm.mul %{{.*}}, %[[PLANE]] : i64
// CHECK-NEXT: %[[B:.*]] = llvm.mul %{{.*}}, %y_size2 : i64
// CHECK-NEXT: %[[AB:.*]] = llvm.add %[[A]], %[[B]] : i64
// CHECK-NEXT: %[[OFF:.*]] = llvm.add %[[AB]], %y_size2 : i64
// CHECK-NEXT: %[[PTR:.*]] = llvm.getelementptr %{{.*}}[%[[OFF]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: llvm.store %{{.*}}, %[[PTR]] : f32, !llvm.ptr<1>
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @store_3d(%x: memref<16x64xf32>, %y: memref<?x?x?xf32>, %i: index, %j: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    copy.async_copy %x[%c0, %c0] to %buf : memref<16x64xf32> to memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    %v = memref.load %buf[%c0, %c0] : memref<16x64xf32, #copy.smem>
    %n = memref.dim %y, %c2 : memref<?x?x?xf32>
    memref.store %v, %y[%i, %j, %n] : memref<?x?x?xf32>
    func.return
  }
}

// -----

// A load from a ?x64 array: its strides are static (64, 1), so no size is a parameter; the
// row count that memref.dim reads is one.
// CHECK-LABEL: func.func @load_rows(%x: memref<?x64xf32>, %i: index, %x_size0: i64)
// CHECK-SAME: params = [{kind = "pointer", arg = 0 : i64, element = "f32", shape = array<i64: -1, 64>}, {kind = "scalar", type = "index"}, {kind = "size", arg = 0 : i64, dim = 0 : i64}]
// CHECK: %rows = builtin.unrealized_conversion_cast %x_size0 : i64 to index
// CHECK: %[[PITCH:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT: llvm.mul %{{.*}}, %[[PITCH]] : i64
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @load_rows(%x: memref<?x64xf32>, %i: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    %rows = memref.dim %x, %c0 : memref<?x64xf32>
    %last = arith.subi %rows, %i : index
    %v = memref.load %x[%last, %c0] : memref<?x64xf32>
    memref.store %v, %buf[%c0, %c0] : memref<16x64xf32, #copy.smem>
    copy.wait_group cp_async 0
    func.return
  }
}
