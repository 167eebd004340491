// RUN: copy-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: not copy-opt %s --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

// SSA dominance, as mlir-opt checks it: a use that its definition does not dominate is an
// error at the use (`operand #N does not dominate this use`), with mlir-opt's note at the
// definition and a note saying how to fix it. The last chunk is IR that verifies.

// A value used in its own definition: an error even in a graph region (a module body).
// fix: s|"test.op"(%0) {self}|"test.op"(%a) {self}|
%a = "test.op"() : () -> i32
// expected-error@+3 {{operand #0 does not dominate this use}}
// expected-note@+2 {{operand defined here (op in the same block)}}
// expected-note@+1 {{an op cannot use its own result: use a value defined before the op}}
%0 = "test.op"(%0) {self} : (i32) -> i32
// ERR:      dominance.mlir:[[# @LINE - 1]]:1: error: operand #0 does not dominate this use
// ERR-NEXT: %0 = "test.op"(%0) {self} : (i32) -> i32
// ERR-NEXT: ^
// ERR-NEXT: dominance.mlir:[[# @LINE - 4]]:1: note: operand defined here (op in the same block)
// ERR-NEXT: dominance.mlir:[[# @LINE - 5]]:1: note: an op cannot use its own result: use a value defined before the op
// ERR-NOT:  Traceback

// -----

// ... and inside the op's own region.
// fix: s|"test.op"(%0) {inner}|"test.op"(%a) {inner}|
%a = "test.op"() : () -> i32
// expected-note@+1 {{operand defined here (op in a parent region)}}
%0 = "test.op"() ({
  // expected-error@+2 {{operand #0 does not dominate this use}}
  // expected-note@+1 {{an op cannot use its own result: use a value defined before the op}}
  "test.op"(%0) {inner} : (i32) -> ()
  "test.termop"() : () -> ()
}) : () -> i32

// -----

// fix: s|"test.op"(%1) {use} : (i32) -> ()||
// fix: s|%1 = "test.op"() {def} : () -> i32|%1 = "test.op"() {def} : () -> i32 "test.op"(%1) {use} : (i32) -> ()|
func.func @use_before_def_in_the_same_block() {
  // expected-error@+2 {{operand #0 does not dominate this use}}
  // expected-note@+1 {{define the value before its use: move the use below the definition, or the definition above it}}
  "test.op"(%1) {use} : (i32) -> ()
  // expected-note@+1 {{operand defined here (op in the same block)}}
  %1 = "test.op"() {def} : () -> i32
  func.return
}

// -----

// A use in a nested region counts as a use by the op holding it.
// fix: s|scf.if %c {|%v = arith.constant 7 : i32 scf.if %c {|
// fix: s|%v = arith.constant 1 : i32||
func.func @use_in_a_region_above_the_def(%c: i1) {
  scf.if %c {
    // expected-error@+2 {{operand #0 does not dominate this use}}
    // expected-note@+1 {{define the value before its use: move the 'scf.if' op holding the use below the definition, or the definition above it}}
    "test.op"(%v) : (i32) -> ()
  }
  // expected-note@+1 {{operand defined here (op in a parent region)}}
  %v = arith.constant 1 : i32
  func.return
}

// -----

// fix: s|%v = "test.op"() {def} : () -> i32||
// fix: s|cf.cond_br %c|%v = "test.op"() {def} : () -> i32 cf.cond_br %c|
func.func @use_in_a_block_the_def_does_not_dominate(%c: i1) {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  // expected-note@+1 {{operand defined here (op in the same region)}}
  %v = "test.op"() {def} : () -> i32
  cf.br ^bb2
^bb2:
  // expected-error@+2 {{operand #0 does not dominate this use}}
  // expected-note@+1 {{define the value in a block that dominates the use (one that every path from the entry block to it passes through), or pass it to the use's block as a block argument}}
  "test.op"(%v) : (i32) -> ()
  func.return
}

// -----

// fix: s|^bb2:|^bb2(%p: i32):|
// fix: s|"test.op"(%a)|"test.op"(%p)|
// fix: s|cf.br ^bb2|cf.br ^bb2(%a : i32)|
// fix: s|^bb1(%x : i32), ^bb2|^bb1(%x : i32), ^bb2(%x : i32)|
// expected-note@+1 {{operand defined as a block argument (block #1 in the same region)}}
func.func @block_argument_of_a_block_that_does_not_dominate(%c: i1, %x: i32) {
  cf.cond_br %c, ^bb1(%x : i32), ^bb2
^bb1(%a: i32):
  cf.br ^bb2
^bb2:
  // expected-error@+2 {{operand #0 does not dominate this use}}
  // expected-note@+1 {{define the value in a block that dominates the use (one that every path from the entry block to it passes through), or pass it to the use's block as a block argument}}
  "test.op"(%a) : (i32) -> ()
  func.return
}

// -----

// Valid: uses in every block the definition dominates (an unreachable predecessor does not
// change that), block arguments, uses in the regions of later ops, uses in unreachable
// blocks (not checked), and, in a graph region, a use above the definition.
"test.op"(%late) {graph} : (i32) -> ()
%late = "test.op"() : () -> i32
func.func @dominated(%c: i1, %x: i32) -> i32 {
  %v = arith.addi %x, %x : i32
  cf.cond_br %c, ^bb1(%v : i32), ^bb2
^bb1(%a: i32):
  %w = arith.addi %a, %v : i32
  scf.if %c {
    %u = arith.addi %w, %a : i32
    scf.if %c {
      %t = arith.addi %u, %x : i32
    }
  }
  cf.br ^bb2
^dead:
  cf.br ^bb2
^bb2:
  func.return %v : i32
^unreachable:
  func.return %w : i32
}

// CHECK:      // -----
// CHECK-NEXT: // -----
// CHECK-NEXT: // -----
// CHECK-NEXT: // -----
// CHECK-NEXT: // -----
// CHECK-NEXT: // -----
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   "test.op"(%late) {graph} : (i32) -> ()
// CHECK-NEXT:   %late = "test.op"() : () -> i32
// CHECK-NEXT:   func.func @dominated(%c: i1, %x: i32) -> i32 {
// CHECK:        ^dead:
// CHECK-NEXT:     cf.br ^[[EXIT:bb[0-9]+]]
// CHECK-NEXT:   ^[[EXIT]]:
// CHECK-NEXT:     func.return %v : i32
// CHECK-NEXT:   ^unreachable:
// CHECK-NEXT:     func.return %w : i32
