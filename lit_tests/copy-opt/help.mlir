// --help: the flags, then the copy dialect's passes with their summaries; xDSL's other
// passes are counted, not listed (--list-passes lists them).

// RUN: copy-opt --help | filecheck %s
// CHECK:      usage: copy-opt
// CHECK:      --pass-pipeline PIPELINE
// CHECK:      --target GPU_TARGET   GPU target (sm_80, sm_90a, sm_100a, ...), overriding
// CHECK:      also changes what -t
// CHECK:      passes of the copy dialect (copy-opt --list-passes: their options, and the rest):
// CHECK-NEXT:   convert-copy-to-nvvm    Lowers the `copy` dialect to `nvvm` for the module's target (or `target`).
// CHECK-NEXT:   lower-copy-to-llvm      Runs the whole lowering, copy dialect to llvm + nvvm, for the module's
// CHECK:        convert-math-to-llvm    Lowers `math` float ops (exp2, exp, fma, sqrt, rsqrt, absf, floor, ceil).
// CHECK:        convert-vector-to-llvm  Lowers the 1-D `vector` ops (load, store, broadcast, extract, insert).
// CHECK-NEXT:   copy-legalize           Rewrites the module for `target` (default: the module's own), keeping the
// CHECK-NEXT:                           semantics, or fails at the first op it cannot keep.
// CHECK-NEXT:   ... and {{[0-9]+}} other passes of xDSL (riscv, csl, stencil, ...), not listed

// RUN: copy-opt --help | filecheck %s --check-prefix=HIDDEN
// HIDDEN-NOT: convert-riscv-scf-to-riscv-cf
// HIDDEN-NOT: --shrink
// HIDDEN-NOT: --parsing-diagnostics
