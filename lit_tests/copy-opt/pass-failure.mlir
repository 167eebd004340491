// RUN: not copy-opt %s -p convert-func-to-x86-func 2>&1 | filecheck %s --match-full-lines

// A pass that fails is an error at the module it ran on (here the implicit module, which
// starts at line 1), not a traceback; nothing is printed on stdout.

func.func @shaped(%a: tensor<4xf32>) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}

// CHECK:      {{.*}}pass-failure.mlir:1:1: error: pass 'convert-func-to-x86-func' failed: Cannot lower shaped function parameters (not implemented)
// CHECK-NEXT: // {{R}}UN: {{.*}}
// CHECK-NEXT: ^
// CHECK-NOT:  {{.}}
