// What the lowering cannot give a dynamic-shape GMEM ref is a diagnostic at the op.
// RUN: copy-opt %s --split-input-file -p convert-copy-to-nvvm,convert-memref-to-llvm --verify-diagnostics

// A function without copy ops is no kernel of convert-copy-to-nvvm: it gets no size
// parameters, and a store into a ?x? array needs the row pitch.
// fix: none -- the function needs a copy op to become a kernel with size parameters; no one-line edit makes one
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @no_kernel(%y: memref<?x?xf32>, %v: f32) {
    %c0 = arith.constant 0 : index
    // expected-error@+1 {{'memref.store' op needs size 1 of memref<?x?xf32>, which the kernel has no parameter for: only a kernel (a function with copy ops, lowered by convert-copy-to-nvvm) gets the sizes of its dynamic arrays, each a parameter the runtime fills from the array}}
    memref.store %v, %y[%c0, %c0] : memref<?x?xf32>
    func.return
  }
}

// -----

// memref.dim needs a constant dim: its size is one parameter or another.
// fix: s|arith.index_cast %i : i32 to index|arith.constant 0 : index|
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @dim_of_a_variable(%y: memref<?x?xf32>, %i: i32) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %d = arith.index_cast %i : i32 to index
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    // expected-error@+1 {{'memref.dim' op expected a constant dim index below the rank 2 of memref<?x?xf32>, got an index computed at run time: each size is a parameter of its own; take the dim from an arith.constant}}
    %n = memref.dim %y, %d : memref<?x?xf32>
    copy.async_copy %y[%n, %c0] to %buf oob zeros : memref<?x?xf32> to memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}

// -----

// The sizes come from the arrays the runtime is given: a dynamic ref that cp.async
// addresses must be a kernel argument, not a value made from one.
// fix: s|copy.async_copy %y[|copy.async_copy %x[|
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @cast_ref(%x: memref<?x?xf32>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %y = "memref.cast"(%x) : (memref<?x?xf32>) -> memref<?x?xf32>
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    // expected-error@+1 {{'copy.async_copy' op expected a kernel argument for the dynamic GMEM ref of type memref<?x?xf32> (the runtime passes the sizes of the arrays it is given), got a value made by memref.cast from %x: address %x itself}}
    copy.async_copy %y[%c0, %c0] to %buf oob zeros : memref<?x?xf32> to memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}
