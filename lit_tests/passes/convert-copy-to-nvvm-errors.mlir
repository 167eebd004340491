// What convert-copy-to-nvvm cannot lower gets a diagnostic at the op, never a crash.
// RUN: copy-opt %s --split-input-file -p convert-copy-to-nvvm --verify-diagnostics

// fix: s|  copy.fence_async_shared|  func.func @k() { copy.fence_async_shared func.return }|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // expected-error@+1 {{pass 'convert-copy-to-nvvm' failed: 'copy.fence_async_shared' op must be inside a func.func kernel to be lowered}}
  copy.fence_async_shared
}

// -----

// fix: none -- the GMEM shape is dynamic on purpose; the lowering does not handle dynamic shapes yet
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @dynamic_gmem_shape(%x: memref<?x64xf32>) {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    // expected-error@+2 {{'copy.async_copy' op: the lowering supports memrefs of static shape and strides, got memref<?x64xf32>}}
    // expected-note@+1 {{dynamic shapes are not lowered yet}}
    copy.async_copy %x[%c0, %c0] to %buf : memref<?x64xf32> to memref<64x64xf32, #copy.smem>
    func.return
  }
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
