// --list-passes: the copy dialect's passes first, each with its summary (its class
// docstring's first sentence) and its options with their types and defaults, then xDSL's
// other passes by name under their own heading.

// RUN: copy-opt --list-passes | filecheck %s
// CHECK:      Passes of the copy dialect (copy-opt -p 'name{option=value ...}'):
// CHECK-EMPTY:
// CHECK-NEXT:   convert-copy-to-nvvm
// CHECK-NEXT:       Lowers the `copy` dialect to `nvvm` for the module's target (or `target`).
// CHECK-NEXT:       target: str = ""
// CHECK-NEXT:           Overrides the module's `copy.target` (sm_80, sm_90a, sm_100a, ...).
// CHECK-NEXT:       debug-guards: bool = false
// CHECK:            prefetch-tensormaps: bool = true
// CHECK:      {{^}}  lower-copy-to-llvm{{$}}
// CHECK-NEXT:       Runs the whole lowering, copy dialect to llvm + nvvm, for the module's target.
// CHECK-NEXT:       Runs, in order: convert-copy-to-nvvm, convert-vector-to-llvm, convert-scf-to-cf,
// CHECK:      {{^}}  convert-arith-to-llvm{{$}}
// CHECK-NEXT:       Lowers `arith` to `llvm`.
// CHECK:      {{^}}  convert-vector-to-llvm{{$}}
// CHECK:      Other passes (xDSL's, {{[0-9]+}}; none of them knows the copy dialect):
// CHECK-EMPTY:
// CHECK-NEXT:   apply-eqsat-pdl, {{.*}}
// CHECK:      {{.*}}canonicalize
// CHECK-NOT:  convert-copy-to-nvvm
