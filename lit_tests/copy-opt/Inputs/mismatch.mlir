// Input of verify-diagnostics-mismatch.mlir: every way --verify-diagnostics can fail.
// The line numbers matter: that test checks them.

func.func @wrong_message() -> i32 {
  // expected-error@+1 {{a message that is not the one produced}}
  func.return
}

// -----

func.func @unexpected_error() -> i32 {
  func.return
}

// -----

// expected-error@+1 {{use of undefined SSA value %v}}
"test.op"(%v) : (i32) -> ()
// expected-note@+1 {{a note nobody emits}}
"test.op"() : () -> ()

// -----

func.func @unexpected_note() {
^bb0:
  func.return
// expected-error@+1 {{re-declaration of block 'bb0'}}
^bb0:
  func.return
}

// -----

func.func @wrong_severity() -> i32 {
  func.return // expected-warning {{got []}}
}

// -----

"test.op"() : () -> () // expected-error
