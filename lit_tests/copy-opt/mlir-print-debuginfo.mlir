// --mlir-print-debuginfo (mlir-opt's spelling of xdsl-opt's --print-debuginfo): each op
// prints its loc("FILE":LINE:COL), in the custom and the generic form. xDSL's printer prints
// locations inline only (no #loc aliases), and copy-opt's parser does not locate block
// arguments, so they print loc(unknown).

// RUN: copy-opt %s --mlir-print-debuginfo | filecheck %s
// RUN: copy-opt %s --mlir-print-debuginfo --mlir-print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @f(%a: i32) -> i32 {
  func.return %a : i32
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @f(%a: i32 loc(unknown)) -> i32 {
// CHECK-NEXT:     func.return %a : i32 loc("{{.*}}mlir-print-debuginfo.mlir":10:3)
// CHECK-NEXT:   } loc("{{.*}}mlir-print-debuginfo.mlir":9:1)
// CHECK-NEXT: } loc("{{.*}}mlir-print-debuginfo.mlir":1:1)

// GENERIC:      "func.return"(%a) : (i32) -> () loc("{{.*}}mlir-print-debuginfo.mlir":10:3)
