// RUN: not copy-opt %s --split-input-file 2>&1 | filecheck %s --match-full-lines

// The diagnostics of copy-opt itself: `FILE:LINE:COL: error: MESSAGE`, the source line,
// a caret under the column; lines are those of this file, not of the chunk.

func.func @wrong_result_count() -> i32 {
  func.return
}
// CHECK:      {{.*}}diagnostics.mlir:[[# @LINE - 2]]:3: error: 'func.return' op Expected arguments to have the same types as the function output types: expected [i32], got []
// CHECK-NEXT:   func.return
// CHECK-NEXT:   ^

// -----

%0 = "test.op"() : () -> i32
"test.op"(%undefined) : (i32) -> ()
// CHECK-NEXT: {{.*}}diagnostics.mlir:[[# @LINE - 1]]:11: error: use of undefined SSA value %undefined
// CHECK-NEXT: "test.op"(%undefined) : (i32) -> ()
// CHECK-NEXT:           ^

// -----

%1 = "test.op"() : () -> i32
"test.op"(%1) : (f32) -> ()
// CHECK-NEXT: {{.*}}diagnostics.mlir:[[# @LINE - 1]]:11: error: operand is used with type f32, but has been previously used or defined with type i32
// CHECK-NEXT: "test.op"(%1) : (f32) -> ()
// CHECK-NEXT:           ^

// -----

  "nodialect.op"() : () -> ()
// CHECK-NEXT: {{.*}}diagnostics.mlir:[[# @LINE - 1]]:3: error: unknown operation 'nodialect.op': dialect 'nodialect' is not registered (use --allow-unregistered-dialect to accept unregistered operations)
// CHECK-NEXT:   "nodialect.op"() : () -> ()
// CHECK-NEXT:   ^

// -----

"test.op"() : () -> !nodialect.type
// CHECK-NEXT: {{.*}}diagnostics.mlir:[[# @LINE - 1]]:21: error: unknown type '!nodialect.type': dialect 'nodialect' is not registered (use --allow-unregistered-dialect to accept unregistered attributes and types)
// CHECK-NEXT: "test.op"() : () -> !nodialect.type
// CHECK-NEXT:                     ^

// -----

func.func @f() {
^bb0:
  func.return
^bb0:
  func.return
}
// CHECK-NEXT: {{.*}}diagnostics.mlir:[[# @LINE - 3]]:1: error: re-declaration of block 'bb0'
// CHECK-NEXT: ^bb0:
// CHECK-NEXT: ^
// CHECK-NEXT: {{.*}}diagnostics.mlir:[[# @LINE - 8]]:1: note: originally declared here

// -----

// Two failing ops in one module: both are reported, nested ops first.
func.func @two_errors() -> i32 {
  func.return
}
func.func @three_errors() -> (i32, i32) {
  func.return
}
// CHECK-NEXT: {{.*}}diagnostics.mlir:[[# @LINE - 5]]:3: error: 'func.return' op {{.*}}expected [i32], got []
// CHECK-NEXT:   func.return
// CHECK-NEXT:   ^
// CHECK-NEXT: {{.*}}diagnostics.mlir:[[# @LINE - 5]]:3: error: 'func.return' op {{.*}}expected [i32, i32], got []
// CHECK-NEXT:   func.return
// CHECK-NEXT:   ^
// CHECK-NOT: {{.}}
