// RUN: copy-opt %s --split-input-file --print-debuginfo | filecheck %s
// RUN: copy-opt %s --split-input-file | filecheck %s --check-prefix=PLAIN

// Each parsed op gets loc("FILE":LINE:COL) of its first token (lines of the whole file,
// also in later chunks), unless it has its own loc(...). The implicit module gets the
// chunk's first line. Locations are printed only with --print-debuginfo.

%0 = "test.op"() : () -> i32
  "test.op"(%0) : (i32) -> () loc("elsewhere.mlir":3:4)

// CHECK:      builtin.module {
// CHECK-NEXT:   %0 = "test.op"() : () -> i32 loc("{{.*}}locations.mlir":8:1)
// CHECK-NEXT:   "test.op"(%0) : (i32) -> () loc("elsewhere.mlir":3:4)
// CHECK-NEXT: } loc("{{.*}}locations.mlir":1:1)

// -----

func.func @f() {
    func.return
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @f() {
// CHECK-NEXT:     func.return loc("{{.*}}locations.mlir":19:5)
// CHECK-NEXT:   } loc("{{.*}}locations.mlir":18:1)
// CHECK-NEXT: } loc("{{.*}}locations.mlir":17:1)

// PLAIN-NOT: loc(
