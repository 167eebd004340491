// A GMEM argument of a strided layout (rows padded to a pitch): convert-copy-to-nvvm records
// the layout's element strides in the kernel's ABI (`strides`, outermost first; -1 for a `?`
// stride) where they are not the row-major strides of the shape, and the runtime takes an
// array of exactly those strides (a view of a padded array) instead of a contiguous one.
// RUN: copy-opt %s --split-input-file -p convert-copy-to-nvvm,convert-memref-to-llvm | filecheck %s

// A cp.async copy and a thread store of 64x60 arrays with rows 64 elements apart: both
// arguments record strides [64, 1], and the store addresses row i at i * 64 elements.
// CHECK-LABEL: func.func @padded_rows(
// CHECK-SAME: params = [{kind = "pointer", arg = 0 : i64, element = "f32", shape = array<i64: 64, 60>, align = 16 : i64, strides = array<i64: 64, 1>}, {kind = "pointer", arg = 1 : i64, element = "f32", shape = array<i64: 64, 60>, strides = array<i64: 64, 1>}]
// CHECK: builtin.unrealized_conversion_cast %y : memref<64x60xf32, strided<[64, 1]>> to !llvm.ptr<1>
// CHECK: %[[PITCH:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT: llvm.mul %{{.*}}, %[[PITCH]] : i64
// CHECK: llvm.store
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @padded_rows(%x: memref<64x60xf32, strided<[64, 1]>>, %y: memref<64x60xf32, strided<[64, 1]>>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<16x60xf32, #copy.smem>
    copy.async_copy %x[%c0, %c0] to %buf : memref<64x60xf32, strided<[64, 1]>> to memref<16x60xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    %v = memref.load %buf[%c0, %c0] : memref<16x60xf32, #copy.smem>
    memref.store %v, %y[%c0, %c0] : memref<64x60xf32, strided<[64, 1]>>
    func.return
  }
}

// -----

// A strided layout that is the shape's row-major one records nothing: the runtime takes a
// contiguous array, as for a ref without a layout.
// CHECK-LABEL: func.func @row_major_spelled_out(
// CHECK-SAME: params = [{kind = "pointer", arg = 0 : i64, element = "f32", shape = array<i64: 64, 64>, align = 16 : i64}]
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @row_major_spelled_out(%x: memref<64x64xf32, strided<[64, 1]>>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    copy.async_copy %x[%c0, %c0] to %buf : memref<64x64xf32, strided<[64, 1]>> to memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}

// -----

// Dynamic sizes, a static pitch: the sizes are parameters, the strides are the layout's
// (the pitch is no product of sizes).
// CHECK-LABEL: func.func @dynamic_sizes_static_pitch(%x: memref<?x?xf32, strided<[64, 1]>>, %x_size0: i64, %x_size1: i64)
// CHECK-SAME: params = [{kind = "pointer", arg = 0 : i64, element = "f32", shape = array<i64: -1, -1>, align = 16 : i64, strides = array<i64: 64, 1>}, {kind = "size", arg = 0 : i64, dim = 0 : i64}, {kind = "size", arg = 0 : i64, dim = 1 : i64}]
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @dynamic_sizes_static_pitch(%x: memref<?x?xf32, strided<[64, 1]>>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    copy.async_copy %x[%c0, %c0] to %buf oob zeros : memref<?x?xf32, strided<[64, 1]>> to memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}

// -----

// A `?` stride, which only a tensor map addresses: -1, the array's own stride (its map is
// encoded from the array at launch).
// CHECK-LABEL: func.func @tma_any_pitch(
// CHECK-SAME: params = [{kind = "pointer", arg = 0 : i64, element = "f32", shape = array<i64: 64, 60>, strides = array<i64: -1, 1>}, {kind = "tensor_map", arg = 0 : i64
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @tma_any_pitch(%x: memref<64x60xf32, strided<[?, 1]>>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %buf = copy.alloc_smem : memref<16x60xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<64x60xf32, strided<[?, 1]>> to memref<16x60xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    func.return
  }
}
