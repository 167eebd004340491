// RUN: not copy-opt %S/Inputs/mismatch.mlir --split-input-file --verify-diagnostics 2>&1 | filecheck %s --match-full-lines

// What --verify-diagnostics reports when the diagnostics do not match (exit status 1).

// CHECK:      {{.*}}mismatch.mlir:6:3: error: unexpected error: 'func.return' op Expected arguments to have the same types as the function output types: expected [i32], got []
// CHECK-NEXT:   func.return
// CHECK-NEXT:   ^
// CHECK-NEXT: {{.*}}mismatch.mlir:5:6: error: expected error "a message that is not the one produced" was not produced
// CHECK-NEXT:   // {{.*}}
// CHECK-NEXT:      ^
// CHECK-NEXT: {{.*}}mismatch.mlir:12:3: error: unexpected error: 'func.return' op {{.*}}
// CHECK-NEXT:   func.return
// CHECK-NEXT:   ^
// CHECK-NEXT: {{.*}}mismatch.mlir:19:4: error: expected note "a note nobody emits" was not produced
// CHECK-NEXT: // {{.*}}
// CHECK-NEXT:    ^
// CHECK-NEXT: {{.*}}mismatch.mlir:25:1: error: unexpected note: originally declared here
// CHECK-NEXT: ^bb0:
// CHECK-NEXT: ^
// CHECK-NEXT: {{.*}}mismatch.mlir:35:18: error: 'error' diagnostic emitted when expecting a 'warning'
// CHECK-NEXT:   func.return // {{.*}}
// CHECK-NEXT:                  ^
// CHECK-NEXT: {{.*}}mismatch.mlir:35:18: error: expected warning "got []" was not produced
// CHECK-NEXT:   func.return // {{.*}}
// CHECK-NEXT:                  ^
// CHECK-NEXT: {{.*}}mismatch.mlir:40:27: error: expected-error needs a message: write expected-error {{[{][{]}}message{{[}][}]}}
// CHECK-NEXT: "test.op"() : () -> () // {{.*}}
// CHECK-NEXT:                           ^
