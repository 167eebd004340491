// RUN: copy-opt %s --split-input-file -p convert-memref-to-llvm | filecheck %s

// Thread loads and stores of swizzled SMEM use the layout TMA writes (copy_dialect/layout.py):
// the linear byte offset of the padded rows, then o ^ ((o >> 3) & ((S / 16 - 1) << 4)).

// 128-byte rows under 128B swizzle: o = 128 i + 4 j, XOR-ed with (o >> 3) & 0x70.
// CHECK-LABEL: func.func @swizzle_128_span_rows(
func.func @swizzle_128_span_rows(%s: memref<64x32xf32, #copy.smem<swizzle = 128>>, %i: index, %j: index, %v: f32) -> f32 {
  // CHECK: %[[BASE:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<64x32xf32, #copy.smem<swizzle = 128>> to !llvm.ptr<3>
  // CHECK: %[[I:.*]] = builtin.unrealized_conversion_cast %{{.*}} : index to i64
  // CHECK: %[[J:.*]] = builtin.unrealized_conversion_cast %{{.*}} : index to i64
  // CHECK: %[[PITCH:.*]] = llvm.mlir.constant(128) : i64
  // CHECK-NEXT: %[[ROW:.*]] = llvm.mul %[[I]], %[[PITCH]] : i64
  // CHECK-NEXT: %[[ESIZE:.*]] = llvm.mlir.constant(4) : i64
  // CHECK-NEXT: %[[COL:.*]] = llvm.mul %[[J]], %[[ESIZE]] : i64
  // CHECK-NEXT: %[[LIN:.*]] = llvm.add %[[COL]], %[[ROW]] : i64
  // CHECK-NEXT: %[[THREE:.*]] = llvm.mlir.constant(3) : i64
  // CHECK-NEXT: %[[SHR:.*]] = llvm.lshr %[[LIN]], %[[THREE]] : i64
  // CHECK-NEXT: %[[MASK:.*]] = llvm.mlir.constant(112) : i64
  // CHECK-NEXT: %[[BITS:.*]] = llvm.and %[[SHR]], %[[MASK]] : i64
  // CHECK-NEXT: %[[PHYS:.*]] = llvm.xor %[[LIN]], %[[BITS]] : i64
  // CHECK-NEXT: %[[PTR:.*]] = llvm.getelementptr %[[BASE]][%[[PHYS]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
  // CHECK-NEXT: llvm.store %{{.*}}, %[[PTR]] : f32, !llvm.ptr<3>
  memref.store %v, %s[%i, %j] : memref<64x32xf32, #copy.smem<swizzle = 128>>
  // CHECK: llvm.lshr
  // CHECK: llvm.and %{{.*}}, %{{.*}} : i64
  // CHECK: %[[LPHYS:.*]] = llvm.xor
  // CHECK-NEXT: %[[LPTR:.*]] = llvm.getelementptr %{{.*}}[%[[LPHYS]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
  // CHECK-NEXT: llvm.load %[[LPTR]] : !llvm.ptr<3> -> f32
  %r = memref.load %s[%j, %i] : memref<64x32xf32, #copy.smem<swizzle = 128>>
  func.return %r : f32
}

// -----

// 16-byte rows under 128B swizzle are padded to the span: the row pitch is 128, not 16.
// CHECK-LABEL: func.func @swizzle_128_narrow_rows(
func.func @swizzle_128_narrow_rows(%s: memref<64x8xf16, #copy.smem<swizzle = 128>>, %i: index, %j: index) -> f16 {
  // CHECK: llvm.mlir.constant(128) : i64
  // CHECK-NEXT: llvm.mul
  // CHECK-NEXT: llvm.mlir.constant(2) : i64
  // CHECK-NEXT: llvm.mul
  // CHECK-NEXT: llvm.add
  // CHECK-NEXT: llvm.mlir.constant(3) : i64
  // CHECK-NEXT: llvm.lshr
  // CHECK-NEXT: llvm.mlir.constant(112) : i64
  // CHECK-NEXT: llvm.and
  // CHECK-NEXT: llvm.xor
  // CHECK-NEXT: llvm.getelementptr {{.*}} -> !llvm.ptr<3>, i8
  // CHECK-NEXT: llvm.load {{.*}} -> f16
  %r = memref.load %s[%i, %j] : memref<64x8xf16, #copy.smem<swizzle = 128>>
  func.return %r : f16
}

// -----

// A two-slot ring of 16-byte i8 rows under 32B swizzle: rows padded to 32 bytes, slots
// 64 * 32 = 2048 bytes apart, and the mask is one 16-byte unit (16).
// CHECK-LABEL: func.func @swizzle_32_ring(
func.func @swizzle_32_ring(%s: memref<2x64x16xi8, #copy.smem<swizzle = 32>>, %k: index, %i: index, %j: index, %v: i8) {
  // CHECK: llvm.mlir.constant(2048) : i64
  // CHECK-NEXT: llvm.mul
  // CHECK-NEXT: llvm.mlir.constant(32) : i64
  // CHECK-NEXT: llvm.mul
  // CHECK-NEXT: llvm.add
  // CHECK-NEXT: llvm.add
  // CHECK-NEXT: llvm.mlir.constant(3) : i64
  // CHECK-NEXT: llvm.lshr
  // CHECK-NEXT: llvm.mlir.constant(16) : i64
  // CHECK-NEXT: llvm.and
  // CHECK-NEXT: llvm.xor
  // CHECK-NEXT: llvm.getelementptr {{.*}} -> !llvm.ptr<3>, i8
  // CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} : i8, !llvm.ptr<3>
  memref.store %v, %s[%k, %i, %j] : memref<2x64x16xi8, #copy.smem<swizzle = 32>>
  func.return
}

// -----

// 64B swizzle: mask 0x30.
// CHECK-LABEL: func.func @swizzle_64(
func.func @swizzle_64(%s: memref<64x16xf32, #copy.smem<swizzle = 64>>, %i: index, %j: index) -> f32 {
  // CHECK: llvm.mlir.constant(64) : i64
  // CHECK: llvm.lshr
  // CHECK-NEXT: llvm.mlir.constant(48) : i64
  // CHECK-NEXT: llvm.and
  // CHECK-NEXT: llvm.xor
  %r = memref.load %s[%i, %j] : memref<64x16xf32, #copy.smem<swizzle = 64>>
  func.return %r : f32
}

// -----

// Unswizzled SMEM and GMEM keep plain element strides: no XOR, no padding.
// CHECK-LABEL: func.func @unswizzled(
func.func @unswizzled(%s: memref<64x8xf32, #copy.smem>, %g: memref<64x8xf32>, %i: index, %j: index) {
  // CHECK: llvm.mlir.constant(8) : i64
  // CHECK-NEXT: llvm.mul
  // CHECK-NEXT: llvm.add
  // CHECK-NEXT: llvm.getelementptr {{.*}} -> !llvm.ptr<3>, f32
  // CHECK-NEXT: llvm.load
  // CHECK-NOT: llvm.xor
  // CHECK: llvm.getelementptr {{.*}} -> !llvm.ptr<1>, f32
  // CHECK-NEXT: llvm.store
  // CHECK-NOT: llvm.xor
  %v = memref.load %s[%i, %j] : memref<64x8xf32, #copy.smem>
  memref.store %v, %g[%i, %j] : memref<64x8xf32>
  func.return
}

// -----

// A memref.generic_atomic_rmw whose body is PTX's wrapping increment (what copy-legalize
// writes for a TMA reduction inc), its result unused: red.global.inc.u32 at the element.
// CHECK-LABEL: func.func @wrapping_inc(
func.func @wrapping_inc(%g: memref<64x8xi32>, %i: index, %j: index, %s: i32) {
  // CHECK: llvm.getelementptr {{.*}} -> !llvm.ptr<1>, i32
  // CHECK-NEXT: nvvm.red.global "inc" "u32" %{{.*}}, %{{.*}} : !llvm.ptr<1>, i32
  // CHECK-NOT: memref.generic_atomic_rmw
  %old = memref.generic_atomic_rmw %g[%i, %j] : memref<64x8xi32> {
  ^bb0(%current: i32):
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %wrap = arith.cmpi uge, %current, %s : i32
    %next = arith.addi %current, %c1 : i32
    %new = arith.select %wrap, %c0, %next : i32
    memref.atomic_yield %new : i32
  }
  func.return
}

// -----

// The wrapping decrement: red.global.dec.u32.
// CHECK-LABEL: func.func @wrapping_dec(
func.func @wrapping_dec(%g: memref<64xi32>, %i: index, %s: i32) {
  // CHECK: nvvm.red.global "dec" "u32" %{{.*}}, %{{.*}} : !llvm.ptr<1>, i32
  %old = memref.generic_atomic_rmw %g[%i] : memref<64xi32> {
  ^bb0(%current: i32):
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.cmpi eq, %current, %c0 : i32
    %above = arith.cmpi ugt, %current, %s : i32
    %wrap = arith.ori %zero, %above : i1
    %prev = arith.subi %current, %c1 : i32
    %new = arith.select %wrap, %s, %prev : i32
    memref.atomic_yield %new : i32
  }
  func.return
}

// -----

// An alignment promise is the same pointer: the store goes through the array's own address
// (the promise was read before, by the kernel's ABI and convert-vector-to-llvm).
// CHECK-LABEL: func.func @assume_alignment(
// CHECK-NOT: memref.assume_alignment
// CHECK: llvm.store
func.func @assume_alignment(%g: memref<64xf32>, %i: index, %v: f32) {
  %a = memref.assume_alignment %g, 16 : memref<64xf32>
  memref.store %v, %a[%i] : memref<64xf32>
  func.return
}
