// RUN: copy-opt %s -p convert-copy-to-nvvm | filecheck %s --check-prefix=NONE
// RUN: copy-opt %s --debug-guards -p convert-copy-to-nvvm | filecheck %s
// RUN: copy-opt %s --debug-guards -t ptx | filecheck %s --check-prefix=PTX

// copy.assume (issue N, item 1): the normal lowering drops it and emits nothing for it;
// under --debug-guards every thread that reaches it checks the fact (AS3), printing the
// value and trapping where it does not hold.

// NONE-NOT: copy.assume
// NONE-NOT: copy-dialect guard
// NONE-NOT: llvm.srem
// A function whose only copy op is an assumption is not made a kernel.
// NONE: func.func @helper(%k: index) {{[{]$}}
// NONE-NEXT: func.return

// CHECK: llvm.mlir.global private constant @[[RANGE:__copy_guard_[0-9]+]]("copy-dialect guard AS3: the assumption %%n in [1, 64] multiple_of 8 does not hold: %%n is %lld at {{.*}}assume.mlir:{{[0-9]+}}:5\0A\00")
// CHECK: llvm.mlir.global private constant @[[I32:__copy_guard_[0-9]+]]("copy-dialect guard AS3: the assumption %%m ge 1 does not hold: %%m is %lld at
// CHECK: llvm.mlir.global private constant @[[I1:__copy_guard_[0-9]+]]("copy-dialect guard AS3: the assumption %%p in [1, 1] does not hold: %%p is %lld at
// CHECK: llvm.func @vprintf(!llvm.ptr, !llvm.ptr) -> i32

// PTX: trap;

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @blocks(
  func.func @blocks(%x: memref<256x256xf32>, %n: index, %m: i32, %p: i1) {
    // An index is checked as i64: n < 1, n > 64, n srem 8 != 0.
    // CHECK: %[[N:.*]] = builtin.unrealized_conversion_cast %n : index to i64
    // CHECK-NEXT: %[[LO:.*]] = llvm.mlir.constant(1) : i64
    // CHECK-NEXT: %[[BELOW:.*]] = llvm.icmp "slt" %[[N]], %[[LO]] : i64
    // CHECK-NEXT: %[[HI:.*]] = llvm.mlir.constant(64) : i64
    // CHECK-NEXT: %[[ABOVE:.*]] = llvm.icmp "sgt" %[[N]], %[[HI]] : i64
    // CHECK-NEXT: %[[D:.*]] = llvm.mlir.constant(8) : i64
    // CHECK-NEXT: %[[REM:.*]] = llvm.srem %[[N]], %[[D]] : i64
    // CHECK-NEXT: %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
    // CHECK-NEXT: %[[ODD:.*]] = llvm.icmp "ne" %[[REM]], %[[ZERO]] : i64
    // CHECK-NEXT: %[[OR:.*]] = llvm.or %[[BELOW]], %[[ABOVE]] : i1
    // CHECK-NEXT: %[[FAILED:.*]] = llvm.or %[[OR]], %[[ODD]] : i1
    // CHECK-NEXT: scf.if %[[FAILED]] {
    // CHECK-NEXT: llvm.store %[[N]], %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr
    // CHECK: llvm.mlir.addressof @[[RANGE]]
    // CHECK: llvm.call @vprintf
    // CHECK: llvm.call_intrinsic "llvm.trap"
    copy.assume %n in [1, 64] multiple_of 8 : index
    // An i32 is sign-extended, an i1 zero-extended (0 or 1).
    // CHECK: llvm.sext %m : i32 to i64
    // CHECK: llvm.mlir.addressof @[[I32]]
    copy.assume %m ge 1 : i32
    // CHECK: llvm.zext %p : i1 to i64
    // CHECK: llvm.mlir.addressof @[[I1]]
    copy.assume %p in [1, 1] : i1
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    func.return
  }

  func.func @helper(%k: index) {
    copy.assume %k ge 0 : index
    func.return
  }
}
