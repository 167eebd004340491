// RUN: copy-opt %S/Inputs/empty.mlir | filecheck %s
// RUN: copy-opt < %S/Inputs/empty.mlir | filecheck %s

// An empty input is an empty module, like mlir-opt.

// CHECK:      builtin.module {
// CHECK-NEXT: }
