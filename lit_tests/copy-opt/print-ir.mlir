// IR printing around passes, as mlir-opt: the dumps go to stderr, each under mlir-opt's
// header `// -----// IR Dump {Before|After} <PassClass> (<pass-name>) //----- //`.

// RUN: copy-opt %s -p 'cse,canonicalize' --mlir-print-ir-before=cse --mlir-print-ir-after=canonicalize 2>&1 >/dev/null | filecheck %s --check-prefix=NAMED
// NAMED:      // -----// IR Dump Before CommonSubexpressionElimination (cse) //----- //
// NAMED-NEXT: builtin.module {
// NAMED-NEXT:   func.func @f(%a: i32) -> i32 {
// NAMED-NEXT:     %0 = arith.addi %a, %a : i32
// NAMED-NEXT:     %1 = arith.addi %a, %a : i32
// NAMED-NOT:  IR Dump After CommonSubexpressionElimination
// NAMED:      // -----// IR Dump After CanonicalizePass (canonicalize) //----- //
// NAMED-NEXT: builtin.module {
// NAMED-NEXT:   func.func @f(%a: i32) -> i32 {
// NAMED-NEXT:     %0 = arith.addi %a, %a : i32
// NAMED-NEXT:     %1 = arith.muli %0, %0 : i32
// NAMED-NOT:  IR Dump

// RUN: copy-opt %s -p 'cse,canonicalize' --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER-ALL
// AFTER-ALL:     // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// AFTER-ALL:     // -----// IR Dump After CanonicalizePass (canonicalize) //----- //
// AFTER-ALL-NOT: IR Dump

// RUN: copy-opt %s -p 'cse,canonicalize' --mlir-print-ir-before-all 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE-ALL
// BEFORE-ALL:     // -----// IR Dump Before CommonSubexpressionElimination (cse) //----- //
// BEFORE-ALL:     // -----// IR Dump Before CanonicalizePass (canonicalize) //----- //
// BEFORE-ALL-NOT: IR Dump

// A pass of a nested pipeline prints the op it ran on, or with --mlir-print-ir-module-scope
// the whole module under a header naming that op.
// RUN: copy-opt %s -p 'builtin.module(func.func(cse))' --mlir-print-ir-after=cse 2>&1 >/dev/null | filecheck %s --check-prefix=NESTED
// NESTED:      // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// NESTED-NEXT: func.func @f(%a: i32) -> i32 {
// RUN: copy-opt %s -p 'builtin.module(func.func(cse))' --mlir-print-ir-after=cse --mlir-print-ir-module-scope 2>&1 >/dev/null | filecheck %s --check-prefix=MODULE-SCOPE
// MODULE-SCOPE:      // -----// IR Dump After CommonSubexpressionElimination (cse) ('func.func' operation: @f) //----- //
// MODULE-SCOPE-NEXT: builtin.module {

// A pass that fails prints the IR it left, under mlir-opt's "Failed" header.
// RUN: not copy-opt %s -p 'builtin.module(func.func(convert-func-to-llvm))' --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=FAILED
// FAILED: // -----// IR Dump After ConvertFuncToLLVMPass Failed (convert-func-to-llvm) //----- //

// lower-copy-to-llvm is a pipeline pass: --print-between-passes and --mlir-print-ir-after-all
// print after each of its stages; naming it prints once, after its last stage.
// RUN: copy-opt %S/../../examples/tma_tile_copy.mlir -p lower-copy-to-llvm --print-between-passes 2>&1 >/dev/null | filecheck %s --check-prefix=BETWEEN
// BETWEEN:      // -----// IR Dump After ConvertCopyToNVVMPass (convert-copy-to-nvvm) //----- //
// BETWEEN-NEXT: builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
// BETWEEN:      // -----// IR Dump After ConvertVectorToLLVMPass (convert-vector-to-llvm) //----- //
// BETWEEN:      // -----// IR Dump After ConvertScfToCf (convert-scf-to-cf) //----- //
// BETWEEN:      // -----// IR Dump After ConvertMemrefToLLVMPass (convert-memref-to-llvm) //----- //
// BETWEEN:      // -----// IR Dump After ConvertGpuToNVVMPass (convert-gpu-to-nvvm) //----- //
// BETWEEN:      // -----// IR Dump After ConvertArithToLLVMPass (convert-arith-to-llvm) //----- //
// BETWEEN:      // -----// IR Dump After ConvertCfToLLVMPass (convert-cf-to-llvm) //----- //
// BETWEEN:      // -----// IR Dump After ConvertFuncToLLVMPass (convert-func-to-llvm) //----- //
// BETWEEN-NOT:  IR Dump
// RUN: copy-opt %S/../../examples/tma_tile_copy.mlir -p lower-copy-to-llvm --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=STAGES
// STAGES:     // -----// IR Dump After ConvertCopyToNVVMPass (convert-copy-to-nvvm) //----- //
// STAGES:     // -----// IR Dump After ReconcileUnrealizedCastsPass (reconcile-unrealized-casts) //----- //
// STAGES-NOT: IR Dump
// RUN: copy-opt %S/../../examples/tma_tile_copy.mlir -p lower-copy-to-llvm --mlir-print-ir-after=lower-copy-to-llvm 2>&1 >/dev/null | filecheck %s --check-prefix=PIPELINE
// PIPELINE:      // -----// IR Dump After LowerCopyToLLVMPass (lower-copy-to-llvm) //----- //
// PIPELINE-NEXT: builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
// PIPELINE-NOT:  IR Dump
// A stage is also named by its own pass name.
// RUN: copy-opt %S/../../examples/tma_tile_copy.mlir -p lower-copy-to-llvm --mlir-print-ir-before=convert-func-to-llvm,convert-cf-to-llvm 2>&1 >/dev/null | filecheck %s --check-prefix=STAGE
// STAGE:     // -----// IR Dump Before ConvertCfToLLVMPass (convert-cf-to-llvm) //----- //
// STAGE:     // -----// IR Dump Before ConvertFuncToLLVMPass (convert-func-to-llvm) //----- //
// STAGE-NOT: IR Dump

// RUN: not copy-opt %s -p cse --mlir-print-ir-after=cs 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: copy-opt: error: unknown pass 'cs' in --mlir-print-ir-after=cs; did you mean 'cse'? (copy-opt --list-passes lists the passes)

func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}
