// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid copy.assume per chunk, named after the rule it breaks (`// rule:` gives the id
// in copy_dialect/rules.toml). The checks: copy_dialect/assume.py.

// rule: AS1
// fix: s|copy.assume %f ge 1 : f32|copy.assume %n ge 1 : index|
func.func @as1_float_operand(%f: f32, %n: index) {
  // expected-error@+2 {{expected an integer (of at most 64 bits) or index operand, got f32}}
  // expected-note@+1 {{state the fact of the integer or index value this one is computed from, or drop the assumption}}
  copy.assume %f ge 1 : f32
  func.return
}

// -----

// rule: AS1
// fix: s|"copy.assume"(%n) : (index) -> ()|copy.assume %n ge 1 : index|
func.func @as1_no_fact(%n: index) {
  // expected-error@+2 {{expected a fact ('ge', 'le', 'in [lo, hi]' or 'multiple_of'), got none}}
  // expected-note@+1 {{state what is known, e.g. copy.assume %n ge 1 : index}}
  "copy.assume"(%n) : (index) -> ()
  func.return
}

// -----

// rule: AS1
// fix: s|in [8, 4]|in [4, 8]|
func.func @as1_empty_range(%n: index) {
  // expected-error@+2 {{expected lo <= hi, got in [8, 4]: no value is in the range}}
  // expected-note@+1 {{swap the bounds: in [4, 8]}}
  copy.assume %n in [8, 4] : index
  func.return
}

// -----

// rule: AS1
// fix: s|multiple_of 0|multiple_of 8|
func.func @as1_zero_divisor(%n: index) {
  // expected-error@+2 {{expected a positive divisor, got multiple_of 0}}
  // expected-note@+1 {{give a divisor >= 1 (multiple_of 8: the value is 0, 8, 16, ...)}}
  copy.assume %n multiple_of 0 : index
  func.return
}

// -----

// rule: AS1
// fix: s|ge 200|ge 127|
func.func @as1_bound_outside_the_type(%b: i8) {
  // expected-error@+2 {{expected a bound within i8's range [-128, 127], got ge 200}}
  // expected-note@+1 {{every i8 value is in [-128, 127]: give a bound within it (the nearest is ge 127), or state the fact of a wider value (arith.extsi to i64)}}
  copy.assume %b ge 200 : i8
  func.return
}

// -----

// rule: AS1
// fix: s|in [1, 7]|in [1, 8]|
func.func @as1_no_multiple_in_the_range(%n: index) {
  // expected-error@+2 {{expected a range that holds a multiple of 8, got in [1, 7] multiple_of 8: no value satisfies the assumption}}
  // expected-note@+1 {{widen the range to a multiple of 8 (in [0, 7] or in [1, 8]), or change the divisor}}
  copy.assume %n in [1, 7] multiple_of 8 : index
  func.return
}

// -----

// The fact would hold only where %flag is true, but a loop bounded by %n would use it
// everywhere.
// rule: AS2
// fix: s|copy.assume %n ge 1 : index||
// fix: s|%n = arith.divui %rows, %c64 : index|%n = arith.divui %rows, %c64 : index copy.assume %n ge 1 : index|
func.func @as2_in_a_branch(%x: memref<?xf32>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %rows = memref.dim %x, %c0 : memref<?xf32>
  %n = arith.divui %rows, %c64 : index
  scf.if %flag {
    // expected-error@+2 {{expected in the block that defines %n, got one in a nested region: the fact would be used wherever %n is, but this op runs only where its region runs}}
    // expected-note@+1 {{move the copy.assume into the block that defines %n, right after the definition}}
    copy.assume %n ge 1 : index
  }
  func.return
}

// -----

// rule: AS3
// fix: s|copy.assume %c0 ge 1 : index||
func.func @as3_constant_breaks_the_fact() {
  %c0 = arith.constant 0 : index
  // expected-error@+2 {{the assumption does not hold: %c0 is the constant 0, expected ge 1}}
  // expected-note@+1 {{drop the copy.assume (it is false in every run), or correct the constant %c0}}
  copy.assume %c0 ge 1 : index
  func.return
}

// -----

// An i1 is read as 0 or 1: `true` is 1.
// rule: AS3
// fix: s|copy.assume %true in [0, 0] : i1||
func.func @as3_constant_i1() {
  %true = arith.constant true
  // expected-error@+2 {{the assumption does not hold: %true is the constant 1, expected in [0, 0]}}
  // expected-note@+1 {{drop the copy.assume (it is false in every run), or correct the constant %true}}
  copy.assume %true in [0, 0] : i1
  func.return
}
