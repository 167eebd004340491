// RUN: copy-opt %s --split-input-file --verify-diagnostics

// gpu.shuffle moves 32-bit values only (copy_dialect/upstream_gpu.py): shfl.sync's.

// fix: s|%v: f64|%v: f32|
// fix: s|%width : f64|%width : f32|
func.func @shuffle_f64(%v: f64, %offset: i32, %width: i32) {
  // expected-error@+1 {{expected a 32-bit value to shuffle (i32 or f32, what shfl.sync moves), got f64}}
  %0, %1 = gpu.shuffle xor %v, %offset, %width : f64
  func.return
}

// -----

// fix: s|%v: i16|%v: i32|
// fix: s|%width : i16|%width : i32|
func.func @shuffle_i16(%v: i16, %offset: i32, %width: i32) {
  // expected-error@+1 {{expected a 32-bit value to shuffle (i32 or f32, what shfl.sync moves), got i16}}
  %0, %1 = gpu.shuffle idx %v, %offset, %width : i16
  func.return
}
