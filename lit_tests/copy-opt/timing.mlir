// --mlir-timing: mlir-opt's execution time report on stderr, wall time of parsing, verifying,
// each pass (a nested pipeline's and a pipeline pass's stages indented below it) and
// printing, then the rest and the total. xdsl-opt's --time-passes line per pass stays.

// RUN: copy-opt %s -p 'builtin.module(cse,func.func(canonicalize))' --mlir-timing 2>&1 >/dev/null | filecheck %s --match-full-lines
// CHECK:      ===-------------------------------------------------------------------------===
// CHECK-NEXT:                          ... Execution time report ...
// CHECK-NEXT: ===-------------------------------------------------------------------------===
// CHECK-NEXT:   Total Execution Time: {{[0-9]+\.[0-9]+}} seconds
// CHECK-EMPTY:
// CHECK-NEXT:   ----Wall Time----  ----Name----
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)}}  Parser
// CHECK-NEXT:   {{.*}}  Verifier
// CHECK-NEXT:   {{.*}}  CommonSubexpressionElimination
// CHECK-NEXT:   {{.*}}  'func.func' Pipeline
// CHECK-NEXT:   {{.*}}    CanonicalizePass
// CHECK-NEXT:   {{.*}}    Verifier
// CHECK-NEXT:   {{.*}}  Output
// CHECK-NEXT:   {{.*}}  Rest
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \(100\.0%\)}}  Total

// RUN: copy-opt %S/../../examples/tma_tile_copy.mlir -p lower-copy-to-llvm --mlir-timing 2>&1 >/dev/null | filecheck %s --check-prefix=PIPELINE
// PIPELINE:      {{.*}}  LowerCopyToLLVMPass
// PIPELINE-NEXT: {{.*}}    ConvertCopyToNVVMPass
// PIPELINE-NEXT: {{.*}}    Verifier
// PIPELINE-NEXT: {{.*}}    ConvertVectorToLLVMPass
// PIPELINE:      {{.*}}    ReconcileUnrealizedCastsPass
// PIPELINE-NEXT: {{.*}}  Output

// RUN: copy-opt %s -p cse --time-passes 2>&1 >/dev/null | filecheck %s --check-prefix=TIME-PASSES
// TIME-PASSES: Pass cse took {{.*}} seconds

func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  func.return %1 : i32
}
