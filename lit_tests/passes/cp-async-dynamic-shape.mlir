// A cp.async copy of a dynamic-shape GMEM ref: convert-copy-to-nvvm appends an i64 size
// parameter per dynamic size the copy reads (after the caller's arguments), records them in
// the kernel's ABI (`{kind = "size", arg, dim}`, filled by the runtime from the array), and
// computes the chunks' addresses and zero-fill bounds from them. Where the row pitch is
// dynamic, the chunk size is picked at run time: the largest of those the copy may move
// that divides the array's address and its pitch (the ABI's `align` is the smallest).
// RUN: copy-opt %s --split-input-file -p convert-copy-to-nvvm | filecheck %s

// Zero-filled, both sizes dynamic: the pitch (x_size1 floats) picks 16-, 8- or 4-byte
// chunks; the bounds are x_size0 rows and x_size1 columns.
// CHECK-LABEL: func.func @zero_fill(%x: memref<?x?xf32>, %n: i32, %x_size0: i64, %x_size1: i64)
// CHECK-SAME: copy.abi = {name = "zero_fill", params = [{kind = "pointer", arg = 0 : i64, element = "f32", shape = array<i64: -1, -1>, align = 4 : i64}, {kind = "scalar", type = "i32"}, {kind = "size", arg = 0 : i64, dim = 0 : i64}, {kind = "size", arg = 0 : i64, dim = 1 : i64}]
// CHECK: %[[BASE:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr<1> to i64
// CHECK-NEXT: %[[FOUR:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT: %[[PITCH:.*]] = llvm.mul %x_size1, %[[FOUR]] : i64
// CHECK-NEXT: %[[BITS:.*]] = llvm.or %[[BASE]], %[[PITCH]] : i64
// CHECK-NEXT: %[[M16:.*]] = llvm.mlir.constant(15) : i64
// CHECK-NEXT: %[[LOW16:.*]] = llvm.and %[[BITS]], %[[M16]] : i64
// CHECK: %[[FITS16:.*]] = llvm.icmp "eq" %[[LOW16]], %{{.*}} : i64
// CHECK-NEXT: scf.if %[[FITS16]] {
// CHECK: llvm.mul %{{.*}}, %x_size1 : i64
// CHECK: llvm.icmp "ult" %{{.*}}, %x_size0 : i64
// CHECK-NEXT: llvm.sub %x_size1, %{{.*}} : i64
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: } else {
// CHECK: llvm.and %[[BITS]], %{{.*}} : i64
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 8, cache = ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: } else {
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @zero_fill(%x: memref<?x?xf32>, %n: i32) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    copy.async_copy %x[%c0, %c0] to %buf oob zeros : memref<?x?xf32> to memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}

// -----

// In bounds by promise: no bounds, so only the pitch's size (dim 1) is a parameter.
// CHECK-LABEL: func.func @in_bounds(%x: memref<?x?xf32>, %x_size1: i64)
// CHECK-SAME: {kind = "size", arg = 0 : i64, dim = 1 : i64}]
// CHECK-NOT: "size"
// CHECK: scf.if
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @in_bounds(%x: memref<?x?xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    copy.async_copy %x[%c0, %c0] to %buf oob promise_in_bounds : memref<?x?xf32> to memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}

// -----

// A static row pitch (64 floats, 256 bytes) with a dynamic row count: one 16-byte loop, no
// choice at run time and no `align`; the row count bounds the zero fill.
// CHECK-LABEL: func.func @static_pitch(%x: memref<?x64xf32>, %x_size0: i64)
// CHECK-SAME: params = [{kind = "pointer", arg = 0 : i64, element = "f32", shape = array<i64: -1, 64>, align = 16 : i64}, {kind = "size", arg = 0 : i64, dim = 0 : i64}]
// CHECK-NOT: scf.if
// CHECK: llvm.icmp "ult" %{{.*}}, %x_size0 : i64
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: func.return
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @static_pitch(%x: memref<?x64xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    copy.async_copy %x[%c0, %c0] to %buf oob zeros : memref<?x64xf32> to memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}

// -----

// cache cg moves 16-byte chunks only: one loop, and the runtime asks for 16-byte rows.
// CHECK-LABEL: func.func @cache_cg(%x: memref<?x?xf32>, %x_size0: i64, %x_size1: i64)
// CHECK-SAME: shape = array<i64: -1, -1>, align = 16 : i64}
// CHECK-NOT: scf.if
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: func.return
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @cache_cg(%x: memref<?x?xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    copy.async_copy %x[%c0, %c0] to %buf oob zeros cache cg : memref<?x?xf32> to memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}

// -----

// On sm_90a, a TMA load of one dynamic ref needs no size (its tensor map is encoded from
// the array) and a cp.async load of another does: the sizes follow the caller's arguments,
// the tensor map comes last.
// CHECK-LABEL: func.func @tma_and_cp_async(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %y_size0: i64, %y_size1: i64, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-SAME: {kind = "size", arg = 1 : i64, dim = 0 : i64}, {kind = "size", arg = 1 : i64, dim = 1 : i64}, {kind = "tensor_map", arg = 0 : i64
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @tma_and_cp_async(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %a = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    %b = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %a barrier %bar[%c0] : memref<?x?xf32> to memref<16x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %y[%c0, %c0] to %b impl cp_async oob zeros : memref<?x?xf32> to memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}
