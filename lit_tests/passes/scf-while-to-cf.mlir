// RUN: copy-opt %s -t llvm --target sm_90a | filecheck %s

// scf.while (which xDSL's convert-scf-to-cf does not lower) in a kernel: a before block that
// tests the condition, an after block that branches back to it, and the loop's result in the
// block after the loop.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @halve_until_odd(%x: memref<1xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 1, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : i32
    %c0i = arith.constant 0 : i32
    %v = memref.load %x[%c0] : memref<1xi32>
    %r = scf.while (%a = %v) : (i32) -> i32 {
      %low = arith.andi %a, %c1 : i32
      %even = arith.cmpi eq, %low, %c0i : i32
      %nz = arith.cmpi ne, %a, %c0i : i32
      %go = arith.andi %even, %nz : i1
      scf.condition(%go) %a : i32
    } do {
    ^bb0(%b: i32):
      %h = arith.shrui %b, %c1 : i32
      scf.yield %h : i32
    }
    memref.store %r, %x[%c0] : memref<1xi32>
    func.return
  }
}

// CHECK-LABEL: define ptx_kernel void @halve_until_odd
// CHECK:       %[[V:.+]] = load i32
// CHECK-NEXT:  br label %[[BEFORE:bb[0-9]+]]
// CHECK:       [[BEFORE]]:
// CHECK-NEXT:  %a = phi i32 [ %[[V]], %bb0 ], [ %h, %[[AFTER:bb[0-9]+]] ]
// CHECK:       br i1 %go, label %[[AFTER]], label %[[CONT:bb[0-9]+]]
// CHECK:       [[AFTER]]:
// CHECK-NEXT:  %b = phi i32 [ %a, %[[BEFORE]] ]
// CHECK-NEXT:  %h = lshr i32 %b, 1
// CHECK-NEXT:  br label %[[BEFORE]]
// CHECK:       [[CONT]]:
// CHECK-NEXT:  %r = phi i32 [ %a, %[[BEFORE]] ]
// CHECK:       store i32 %r
