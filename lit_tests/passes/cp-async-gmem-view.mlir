// A cp.async copy (and a thread access) of a GMEM view made in the kernel: a
// memref.reinterpret_cast of an array, whose offset, sizes and row pitch are values the
// kernel computed (a group of a pool). The view needs no size parameter: the copy's bounds
// and addresses are the cast's operands, its base the array's pointer plus the offset
// (convert-memref-to-llvm lowers the cast to that GEP, after the ops that address it). The
// chunk size is picked at run time from the view's address and pitch; where even the
// smallest chunk is not proven (elements narrower than it), the last choice copies the box
// element by element.
// RUN: copy-opt %s --split-input-file -p convert-copy-to-nvvm,convert-memref-to-llvm | filecheck %s

// f32: 16-, 8- or 4-byte chunks; 4 bytes always fit (an f32 view's address and pitch are
// multiples of 4 bytes).
// CHECK-LABEL: func.func @group_tile(%pool: memref<4096xf32>, %off: index, %rows: index, %cols: index, %pitch: index)
// CHECK-NOT: kind = "size"
// CHECK: %[[POOL:.*]] = builtin.unrealized_conversion_cast %pool : memref<4096xf32> to !llvm.ptr<1>
// CHECK-NEXT: %[[OFF:.*]] = builtin.unrealized_conversion_cast %off : index to i64
// CHECK-NEXT: %[[BASE:.*]] = llvm.getelementptr %[[POOL]][%[[OFF]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: %[[VIEW:.*]] = builtin.unrealized_conversion_cast %[[BASE]] : !llvm.ptr<1> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-NEXT: %[[PITCH:.*]] = builtin.unrealized_conversion_cast %pitch : index to i64
// CHECK-NEXT: %[[ROWS:.*]] = builtin.unrealized_conversion_cast %rows : index to i64
// CHECK-NEXT: %[[COLS:.*]] = builtin.unrealized_conversion_cast %cols : index to i64
// CHECK-NEXT: %[[PTR:.*]] = builtin.unrealized_conversion_cast %[[VIEW]] : memref<?x?xf32, strided<[?, 1], offset: ?>> to !llvm.ptr<1>
// CHECK: %[[ADDR:.*]] = llvm.ptrtoint %[[PTR]] : !llvm.ptr<1> to i64
// CHECK-NEXT: %[[FOUR:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT: %[[BYTES:.*]] = llvm.mul %[[PITCH]], %[[FOUR]] : i64
// CHECK-NEXT: %[[BITS:.*]] = llvm.or %[[ADDR]], %[[BYTES]] : i64
// CHECK: scf.if
// CHECK: llvm.mul %{{.*}}, %[[PITCH]] : i64
// CHECK: llvm.icmp "ult" %{{.*}}, %[[ROWS]] : i64
// CHECK-NEXT: llvm.sub %[[COLS]], %{{.*}} : i64
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: } else {
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 8, cache = ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: } else {
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK-NOT: llvm.load
// CHECK: nvvm.cp.async.commit.group
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @group_tile(%pool: memref<4096xf32>, %off: index, %rows: index, %cols: index, %pitch: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %v = memref.reinterpret_cast %pool to offset: [%off], sizes: [%rows, %cols], strides: [%pitch, 1] : memref<4096xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    copy.async_copy %v[%c0, %c0] to %buf impl cp_async oob zeros : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}

// -----

// f16: an odd offset or pitch puts a row 2 bytes off any chunk, so the last choice is the
// element loop: each element read where it lies inside the view (zero elsewhere) and stored
// to SMEM.
// CHECK-LABEL: func.func @half_tile(
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: } else {
// CHECK: scf.for
// CHECK: llvm.icmp "sge" %{{.*}}, %{{.*}} : i64
// CHECK: scf.if %{{.*}} -> (i16) {
// CHECK-NEXT: llvm.load %{{.*}} : !llvm.ptr<1> -> i16
// CHECK: llvm.store %{{.*}}, %{{.*}} : i16, !llvm.ptr<3>
// CHECK: nvvm.cp.async.commit.group
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @half_tile(%pool: memref<4096xf16>, %off: index, %rows: index, %cols: index, %pitch: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %v = memref.reinterpret_cast %pool to offset: [%off], sizes: [%rows, %cols], strides: [%pitch, 1] : memref<4096xf16> to memref<?x?xf16, strided<[?, 1], offset: ?>>
    %buf = copy.alloc_smem : memref<16x64xf16, #copy.smem>
    copy.async_copy %v[%c0, %c0] to %buf impl cp_async oob zeros : memref<?x?xf16, strided<[?, 1], offset: ?>> to memref<16x64xf16, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}

// -----

// A thread's load and memref.dim of a view: the pitch and the size are the cast's operands
// (the size is the cast's %cols itself).
// CHECK-LABEL: func.func @thread_access(
// CHECK: %[[BASE:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: %[[PITCH:.*]] = builtin.unrealized_conversion_cast %pitch : index to i64
// CHECK: llvm.mul %{{.*}}, %[[PITCH]] : i64
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: func.return %{{.*}}, %cols : f32, index
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @thread_access(%pool: memref<4096xf32>, %off: index, %rows: index, %cols: index, %pitch: index, %i: index) -> (f32, index) {
    %v = memref.reinterpret_cast %pool to offset: [%off], sizes: [%rows, %cols], strides: [%pitch, 1] : memref<4096xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
    %x = memref.load %v[%i, %i] : memref<?x?xf32, strided<[?, 1], offset: ?>>
    %c1 = arith.constant 1 : index
    %n = memref.dim %v, %c1 : memref<?x?xf32, strided<[?, 1], offset: ?>>
    func.return %x, %n : f32, index
  }
}
