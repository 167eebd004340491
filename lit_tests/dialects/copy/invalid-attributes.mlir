// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid attribute or type per chunk (#copy.target, #copy.smem, !copy.barrier), named
// after the rule it breaks (`// rule:` gives the id in copy_dialect/rules.toml). The checks:
// copy_dialect/attributes.py.
// `// fix: s|OLD|NEW|` lines give the edit the note describes (or `// fix: none -- why`);
// tests/tools/test_fix_notes.py applies them and checks that the result verifies.

// rule: C6
// fix: s|swizzle = 48|swizzle = 64|
func.func @c6_unsupported_swizzle() {
  // expected-error@+2 {{Unsupported swizzle: 48}}
  // expected-note@+1 {{16 (none), 32, 64 or 128 bytes}}
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem<swizzle = 48>>
  func.return
}

// -----

// rule: I1
// fix: s|!copy.barrier<33>|!copy.barrier<32>|
func.func @i1_more_than_32_barriers() {
  // expected-error@+2 {{Only up to 32 barriers per group supported}}
  // expected-note@+1 {{got 33}}
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<33>
  func.return
}

// -----

// fix: s|"sm_75"|"sm_90a"|
// expected-error@+2 {{unknown target 'sm_75'}}
// expected-note@+1 {{expected one of sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a}}
func.func @unknown_target() attributes {copy.target = #copy.target<"sm_75">} {
  copy.fence_async_shared
  func.return
}

// -----

// An attribute the op does not define is an error, not ignored: copy.barrier_expect_tx has no
// scope (copy.barrier_arrive has).
// rule: AT1
// fix: s|, 16 {scope = #copy<scope cluster>}|, 16|
func.func @at1_unknown_attribute(%p: i1) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{unknown attribute 'scope' on copy.barrier_expect_tx, whose attributes are: bytes}}
  // expected-note@+1 {{drop 'scope', or prefix it with its dialect's name (mydialect.scope)}}
  copy.barrier_expect_tx %bar[%c0], 16 {scope = #copy<scope cluster>} : !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %p : !copy.barrier<1>
  func.return
}

// -----

// copy.cluster is the kernel's (a function attribute), not an op's.
// rule: AT1
// fix: s| {copy.cluster = array<i32: 2, 1, 1>}||
func.func @at1_copy_attribute_on_an_op() attributes {copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{the copy dialect's attribute 'copy.cluster' does not apply to copy.fence_async_shared, whose attributes are: none (and copy.target)}}
  // expected-note@+1 {{drop 'copy.cluster'}}
  copy.fence_async_shared {copy.cluster = array<i32: 2, 1, 1>}
  func.return
}

// -----

// An op with regions is held to its attributes too.
// rule: AT1
// fix: s| attributes {persistent}||
func.func @at1_unknown_attribute_on_warp_specialize() attributes {copy.target = #copy.target<"sm_90a">, gpu.known_block_size = array<i32: 64, 1, 1>} {
  // expected-error@+2 {{unknown attribute 'persistent' on copy.warp_specialize, whose attributes are: maxnreg, warps}}
  // expected-note@+1 {{drop 'persistent', or prefix it with its dialect's name (mydialect.persistent)}}
  copy.warp_specialize warps [1, 1] attributes {persistent} {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }
  func.return
}

// -----

// A discardable attribute of another dialect keeps its own meaning: no error.
func.func @other_dialects_attributes_are_kept() attributes {copy.target = #copy.target<"sm_90a">} {
  copy.fence_async_shared {mydialect.note = "kept", llvm.noinline}
  func.return
}

// -----

// A kernel's name is its PTX entry: non-ASCII characters made LLVM's NVPTX backend abort.
// rule: AT2
// fix: s|@"kérnel"|@k_rnel|
// expected-error@+2 {{the function name 'kérnel' is not a PTX identifier}}
// expected-note@+1 {{rename it, e.g. @k_rnel}}
func.func @"kérnel"() attributes {copy.target = #copy.target<"sm_90a">} {
  copy.fence_async_shared
  func.return
}

// -----

// A '.' in a kernel's name gave PTX that ptxas cannot parse.
// rule: AT2
// fix: s|@"tile.copy"|@tile_copy|
// expected-error@+2 {{the function name 'tile.copy' is not a PTX identifier}}
// expected-note@+1 {{rename it, e.g. @tile_copy}}
func.func @"tile.copy"() attributes {copy.target = #copy.target<"sm_90a">} {
  copy.fence_async_shared
  func.return
}

// -----

// The PTX ISA allows a leading '%', but LLVM's NVPTX backend aborted on it ("Symbol name with
// unsupported characters").
// rule: AT2
// fix: s|@"%kernel"|@_kernel|
// expected-error@+2 {{the function name '%kernel' is not a PTX identifier: PTX names a symbol with a letter, then letters, digits, '_' and '$' (or '_' or '$' first, then one of those), and not WARP_SZ}}
// expected-note@+1 {{rename it, e.g. @_kernel}}
func.func @"%kernel"() attributes {copy.target = #copy.target<"sm_90a">} {
  copy.fence_async_shared
  func.return
}

// -----

// WARP_SZ is PTX's predefined identifier: ptxas cannot parse it as an entry's name.
// rule: AT2
// fix: s|@WARP_SZ|@k_WARP_SZ|
// expected-error@+2 {{the function name 'WARP_SZ' is not a PTX identifier}}
// expected-note@+1 {{rename it, e.g. @k_WARP_SZ}}
func.func @WARP_SZ() attributes {copy.target = #copy.target<"sm_90a">} {
  copy.fence_async_shared
  func.return
}

// -----

// A global a kernel uses is emitted under its name too: a non-ASCII one made LLVM abort.
// rule: AT2
// fix: s|@"glöb"(0|@gl_b(0|
// fix: s|addressof @"glöb"|addressof @gl_b|
llvm.mlir.global external @"glöb"(0 : i32) {addr_space = 1 : i32} : i32
func.func @store_to_global() attributes {copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{the symbol 'glöb' that llvm.mlir.addressof refers to is not a PTX identifier}}
  // expected-note@+1 {{rename it and its definition, e.g. @gl_b: it is emitted under its name in the PTX}}
  %p = llvm.mlir.addressof @"glöb" : !llvm.ptr<1>
  %c = arith.constant 1 : i32
  llvm.store %c, %p : i32, !llvm.ptr<1>
  func.return
}
