// A GMEM ref's layout offset (rule B14) where the verifier does not see it: a thread access
// is no copy op, so the lowering reports the offset at the access. The runtime passes the
// address of the array's first element, and every address starts there.
// RUN: copy-opt %s --split-input-file -p convert-copy-to-nvvm,convert-memref-to-llvm --verify-diagnostics

// rule: B14
// fix: s|, offset: 4||
// fix: s|, offset: 4||
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @thread_store_with_offset(%y: memref<64x60xf32, strided<[64, 1], offset: 4>>, %v: f32) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    // expected-note@+2 {{drop the offset, and pass the view of the array that starts where it pointed}}
    // expected-error@+1 {{'memref.store' op: expected the layout of a GMEM ref to have offset 0 (the runtime passes the address of the array's first element, and every address starts there), got offset 4 in memref<64x60xf32, strided<[64, 1], offset: 4>>}}
    memref.store %v, %y[%c0, %c0] : memref<64x60xf32, strided<[64, 1], offset: 4>>
    func.return
  }
}
