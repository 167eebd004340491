// What convert-copy-to-nvvm cannot lower gets a diagnostic at the op, never a crash.
// RUN: copy-opt %s --split-input-file -p convert-copy-to-nvvm --verify-diagnostics

// fix: s|  copy.fence_async_shared|  func.func @k() { copy.fence_async_shared func.return }|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // expected-error@+1 {{pass 'convert-copy-to-nvvm' failed: 'copy.fence_async_shared' op must be inside a func.func kernel to be lowered}}
  copy.fence_async_shared
}


// -----

// fix: s|builtin.module {|builtin.module attributes {copy.target = #copy.target<"sm_90a">} {|
// expected-error@+1 {{convert-copy-to-nvvm needs a target}}
builtin.module {
  func.func @no_target() {
    copy.fence_async_shared
    func.return
  }
}
