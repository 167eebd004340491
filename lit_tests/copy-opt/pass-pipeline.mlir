// MLIR's pass pipeline syntax: --pass-pipeline (or -p) 'builtin.module(...)', nested
// pipelines anchored on an op name, pass options in braces; xDSL's flat 'a,b' still works.

// RUN: copy-opt %s --pass-pipeline='builtin.module(func.func(cse,canonicalize))' | filecheck %s --check-prefix=NESTED
// RUN: copy-opt %s -p 'builtin.module(func.func(cse,canonicalize))' | filecheck %s --check-prefix=NESTED
// RUN: copy-opt %s -p 'func.func(cse),func.func(canonicalize)' | filecheck %s --check-prefix=NESTED
// RUN: copy-opt %s -p 'builtin.module(any(cse))' | filecheck %s --check-prefix=NESTED-CSE
// RUN: copy-opt %s -p cse | filecheck %s --check-prefix=NESTED-CSE

// A nested pipeline runs on each op of its name directly inside the enclosing op: the
// func.func inside the gpu.module is reached only through builtin.module(gpu.module(...)).
// RUN: copy-opt %s -p 'builtin.module(func.func(cse))' | filecheck %s --check-prefix=TOP-ONLY
// RUN: copy-opt %s -p 'builtin.module(gpu.module(func.func(cse)))' | filecheck %s --check-prefix=GPU-ONLY

// Options, as mlir-opt spells them (space-separated in braces): convert-copy-to-nvvm's.
// RUN: copy-opt %S/../../examples/tma_tile_copy.mlir --pass-pipeline='builtin.module(convert-copy-to-nvvm{debug-guards=true target=sm_90a})' | filecheck %s --check-prefix=OPTIONS
// RUN: copy-opt %S/../../examples/tma_tile_copy.mlir --pass-pipeline='builtin.module(convert-copy-to-nvvm{prefetch-tensormaps=false})' | filecheck %s --check-prefix=NO-PREFETCH

func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}

"gpu.module"() <{sym_name = "kernels"}> ({
  func.func @g(%a: i32) -> i32 {
    %0 = arith.addi %a, %a : i32
    %1 = arith.addi %a, %a : i32
    %2 = arith.muli %0, %1 : i32
    func.return %2 : i32
  }
}) : () -> ()

// NESTED:      func.func @f(%a: i32) -> i32 {
// NESTED-NEXT:   %0 = arith.addi %a, %a : i32
// NESTED-NEXT:   %1 = arith.muli %0, %0 : i32
// NESTED-NEXT:   func.return %1 : i32

// NESTED-CSE:      func.func @f(%a: i32) -> i32 {
// NESTED-CSE-NEXT:   %0 = arith.addi %a, %a : i32
// NESTED-CSE-NEXT:   %1 = arith.muli %0, %0 : i32

// TOP-ONLY:      func.func @f(%a: i32) -> i32 {
// TOP-ONLY-NEXT:   %0 = arith.addi %a, %a : i32
// TOP-ONLY-NEXT:   %1 = arith.muli %0, %0 : i32
// TOP-ONLY:      func.func @g(%a: i32) -> i32 {
// TOP-ONLY-NEXT:   %0 = arith.addi %a, %a : i32
// TOP-ONLY-NEXT:   %1 = arith.addi %a, %a : i32

// GPU-ONLY:      func.func @f(%a: i32) -> i32 {
// GPU-ONLY-NEXT:   %0 = arith.addi %a, %a : i32
// GPU-ONLY-NEXT:   %1 = arith.addi %a, %a : i32
// GPU-ONLY:      func.func @g(%a: i32) -> i32 {
// GPU-ONLY-NEXT:   %0 = arith.addi %a, %a : i32
// GPU-ONLY-NEXT:   %1 = arith.muli %0, %0 : i32

// OPTIONS: llvm.mlir.global private constant @__copy_guard_{{[0-9]+}}("copy-dialect guard TR12:
// NO-PREFETCH-NOT: prefetch

// Errors: one `copy-opt: error:` line, exit status 1.

// RUN: not copy-opt %s -p 'builtin.module(fun.func(cse))' 2>&1 | filecheck %s --check-prefix=BAD-ANCHOR
// BAD-ANCHOR: copy-opt: error: unknown operation 'fun.func' anchoring a nested pipeline (column 16) in -p 'builtin.module(fun.func(cse))'; a nested pipeline names a registered op, such as builtin.module, func.func or gpu.module, or 'any'

// RUN: not copy-opt %s --pass-pipeline='builtin.module(cse' 2>&1 | filecheck %s --check-prefix=UNCLOSED
// UNCLOSED: copy-opt: error: invalid pass pipeline --pass-pipeline 'builtin.module(cse': Expected ')' closing the nested pipeline here (reached the end) at column 19

// RUN: not copy-opt %s --pass-pipeline='builtin.module(cse))' 2>&1 | filecheck %s --check-prefix=EXTRA
// EXTRA: copy-opt: error: invalid pass pipeline --pass-pipeline 'builtin.module(cse))': Expected ',' after a pass here at column 20

// RUN: not copy-opt %s --pass-pipeline='builtin.module(func.func(cse{x=1}))' 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION: copy-opt: error: invalid options for pass 'cse' in --pass-pipeline 'builtin.module(func.func(cse{x=1}))': {{.*}}; pass 'cse' takes no options

// RUN: not copy-opt %s --pass-pipeline='builtin.module(func.func(cse{x=1)))' 2>&1 | filecheck %s --check-prefix=OPTION-SYNTAX
// OPTION-SYNTAX: copy-opt: error: invalid pass pipeline --pass-pipeline 'builtin.module(func.func(cse{x=1)))': {{.*}} at column {{[0-9]+}}

// A pass anchored on func.func may change only inside the func (as in mlir-opt); one that
// replaces it, or adds ops next to it, is an error at the func.
// RUN: not copy-opt %s -p 'builtin.module(func.func(convert-func-to-llvm))' 2>&1 | filecheck %s --check-prefix=REPLACED
// REPLACED: pass-pipeline.mlir:19:1: error: pass 'convert-func-to-llvm' failed: a pass anchored on 'func.func' may change only inside the op it runs on, but it replaced that op ('llvm.func'): run it on builtin.module instead
// RUN: not copy-opt %S/../../examples/tma_tile_copy.mlir -p 'builtin.module(func.func(convert-copy-to-nvvm))' 2>&1 | filecheck %s --check-prefix=ADDED
// ADDED: tma_tile_copy.mlir:4:3: error: pass 'convert-copy-to-nvvm' failed: a pass anchored on 'func.func' may change only inside the op it runs on, but it added ops next to it ('llvm.mlir.global'): run it on builtin.module instead
