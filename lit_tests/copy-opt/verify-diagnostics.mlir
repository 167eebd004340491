// RUN: copy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// --verify-diagnostics like mlir-opt: every diagnostic, notes included, is expected by an
// `expected-*` comment on its line, and every expected diagnostic is produced. Chunks with
// errors print nothing; the others print their module.

func.func @return_without_value() -> i32 {
  // expected-error@+1 {{'func.return' op Expected arguments to have the same types as the function output types: expected [i32], got []}}
  func.return
}

// -----

func.func @return_too_many(%a: i32) {
  func.return %a : i32 // expected-error {{expected [], got [i32]}}
}

// -----

func.func @below() -> i64 {
  // expected-error@below {{expected [i64], got []}}
  func.return
}

// -----

func.func @above() -> index {
  func.return
  // expected-error-re@above {{expected [{{[a-z]+}}], got []}}
}

// -----

// Parse errors are diagnostics too.
%0 = "test.op"() : () -> i32
// expected-error@+1 {{use of undefined SSA value %nowhere}}
"test.op"(%0, %nowhere) : (i32, i32) -> ()

// -----

// expected-error@+1 {{unknown operation 'nodialect.op'}}
"nodialect.op"() : () -> ()

// -----

func.func @redeclared_block() {
// expected-note@+1 {{originally declared here}}
^bb0:
  func.return
// expected-error@+1 {{re-declaration of block 'bb0'}}
^bb0:
  func.return
}

// -----

// A chunk without diagnostics is printed.
"test.op"() {valid} : () -> ()

// CHECK:      // -----
// CHECK-NEXT: // -----
// CHECK-NEXT: // -----
// CHECK-NEXT: // -----
// CHECK-NEXT: // -----
// CHECK-NEXT: // -----
// CHECK-NEXT: // -----
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   "test.op"() {valid} : () -> ()
// CHECK-NEXT: }
