// --allow-unregistered-dialect: ops of dialects copy-opt does not know are parsed, verified
// (as far as registered ops go), run through passes and printed in the generic form.

// RUN: copy-opt %s --allow-unregistered-dialect -p cse | filecheck %s
// RUN: not copy-opt %s 2>&1 | filecheck %s --check-prefix=REJECTED

%0 = "foo.bar"() {a = 1} : () -> i32
"foo.baz"(%0) ({
  "foo.yield"() : () -> ()
}) : (i32) -> ()

// CHECK:      builtin.module {
// CHECK-NEXT:   %0 = "foo.bar"() {a = 1 : i64} : () -> i32
// CHECK-NEXT:   "foo.baz"(%0) ({
// CHECK-NEXT:     "foo.yield"() : () -> ()
// CHECK-NEXT:   }) : (i32) -> ()
// CHECK-NEXT: }

// REJECTED: allow-unregistered-dialect.mlir:7:1: error: unknown operation 'foo.bar': dialect 'foo' is not registered (use --allow-unregistered-dialect to accept unregistered operations)
