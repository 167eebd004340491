// RUN: copy-opt %s --split-input-file --verify-diagnostics --no-verify-protocol

// Programmatic dependent launch done wrongly, one mistake per chunk, named after the rule it
// breaks (`// rule:` gives the id in copy_dialect/rules.toml): griddepcontrol on a target
// without it (GD1, copy_dialect/grid_dependency.py); in a kernel that waits for its
// predecessor, a GMEM read (GD2) or write (GD3) of an argument the predecessor may write
// that a copy.grid_dependency_wait does not precede on every path of its thread; a
// copy.predecessor_access mark that is no mark (GD4). The kernel rules:
// analysis/kernel/grid_dependency.py. `// fix: s|OLD|NEW|` lines give the edit the note
// describes; tests/tools/test_fix_notes.py applies them and checks that the result verifies.

// rule: GD1
// fix: s|copy.grid_dependency_wait||
func.func @gd1_wait_on_sm_80(%y: memref<256xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  // expected-error@+2 {{'copy.grid_dependency_wait' op needs a target with griddepcontrol (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{drop copy.grid_dependency_wait: before sm_90 a kernel starts only once the kernel ahead of it on the stream has completed, or write the kernel for sm_90a and run copy-opt -p 'copy-legalize{target=sm_80}'}}
  copy.grid_dependency_wait
  func.return
}

// -----

// rule: GD1
// fix: s|copy.launch_dependents||
func.func @gd1_trigger_on_sm_89() attributes {copy.target = #copy.target<"sm_89">} {
  // expected-error@+2 {{'copy.launch_dependents' op needs a target with griddepcontrol (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_89}}
  // expected-note@+1 {{drop copy.launch_dependents}}
  copy.launch_dependents
  func.return
}

// -----

// The early read of the predecessor's output: before the wait in the same block.
// rule: GD2
// fix: s|%y: memref<256xf32>|%y: memref<256xf32> {copy.predecessor_access = "read"}|
func.func @gd2_read_before_wait(%y: memref<256xf32>, %z: memref<256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %t = gpu.thread_id x
  // expected-error@+2 {{'memref.load' op expected every GMEM read of a kernel that waits for its predecessor to come after copy.grid_dependency_wait, found a read of argument 0 (%y) where no copy.grid_dependency_wait comes before it (the kernel's wait comes later): the predecessor may still be writing it}}
  // expected-note@+1 {{move copy.grid_dependency_wait before this op, at the kernel's level (every thread), or, if the predecessor does not write argument 0 (%y), mark it {copy.predecessor_access = "read"}}}
  %v = memref.load %y[%t] : memref<256xf32>
  copy.grid_dependency_wait
  memref.store %v, %z[%t] : memref<256xf32>
  func.return
}

// -----

// A wait in one arm of an scf.if orders nothing after the scf.if: the other arm skips it.
// rule: GD2
// fix: s|%y: memref<256xf32>|%y: memref<256xf32> {copy.predecessor_access = "read"}|
func.func @gd2_wait_on_some_paths(%y: memref<256xf32>, %c: i1) attributes {copy.target = #copy.target<"sm_90a">} {
  %t = gpu.thread_id x
  scf.if %c {
    copy.grid_dependency_wait
  }
  // expected-error@+2 {{found a read of argument 0 (%y) where a copy.grid_dependency_wait comes before it on some paths only (one on a branch, in a loop or in another role orders nothing after it)}}
  // expected-note@+1 {{move copy.grid_dependency_wait before this op}}
  %v = memref.load %y[%t] : memref<256xf32>
  func.return
}

// -----

// The same in a CFG: the wait on one branch only.
// rule: GD2
// fix: s|%y: memref<256xf32>|%y: memref<256xf32> {copy.predecessor_access = "read"}|
func.func @gd2_wait_on_one_branch(%y: memref<256xf32>, %c: i1) attributes {copy.target = #copy.target<"sm_90a">} {
  %t = gpu.thread_id x
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  copy.grid_dependency_wait
  cf.br ^bb3
^bb2:
  cf.br ^bb3
^bb3:
  // expected-error@+2 {{found a read of argument 0 (%y) where a copy.grid_dependency_wait comes before it on some paths only (one on a branch, in a loop or in another role orders nothing after it)}}
  // expected-note@+1 {{mark it {copy.predecessor_access = "read"}}}
  %v = memref.load %y[%t] : memref<256xf32>
  func.return
}

// -----

// The wait is a thread's: another role's wait orders nothing in this role.
// rule: GD2
// fix: s|%y: memref<256xf32>|%y: memref<256xf32> {copy.predecessor_access = "read"}|
func.func @gd2_wait_in_another_role(%y: memref<256xf32>) attributes {gpu.known_block_size = array<i32: 64, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  copy.warp_specialize warps [1, 1] {
  ^bb0(%t: index):
    copy.grid_dependency_wait
  }, {
  ^bb0(%t: index):
    // expected-error@+2 {{found a read of argument 0 (%y) where no copy.grid_dependency_wait comes before it (the kernel's wait is in another role: it orders its own threads' accesses)}}
    // expected-note@+1 {{move copy.grid_dependency_wait before this op}}
    %v = memref.load %y[%t] : memref<256xf32>
  }
  func.return
}

// -----

// A TMA load of the predecessor's output before the wait.
// rule: GD2
// fix: s|%x: memref<256x256xf32>|%x: memref<256x256xf32> {copy.predecessor_access = "read"}|
func.func @gd2_tma_load_before_wait(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{'copy.async_copy' op expected every GMEM read of a kernel that waits for its predecessor to come after copy.grid_dependency_wait, found a read of argument 0 (%x)}}
  // expected-note@+1 {{mark it {copy.predecessor_access = "read"}}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.grid_dependency_wait
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// A write before the wait: the predecessor may still read or write it (WAR, WAW).
// rule: GD3
// fix: s|%z: memref<256xf32>|%z: memref<256xf32> {copy.predecessor_access = "none"}|
func.func @gd3_write_before_wait(%w: memref<256xf32> {copy.predecessor_access = "read"}, %z: memref<256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  %t = gpu.thread_id x
  %a = memref.load %w[%t] : memref<256xf32>
  // expected-error@+2 {{'memref.store' op expected every GMEM write of a kernel that waits for its predecessor to come after copy.grid_dependency_wait, found a write of argument 1 (%z) where no copy.grid_dependency_wait comes before it (the kernel's wait comes later): the predecessor may still read or write it}}
  // expected-note@+1 {{move copy.grid_dependency_wait before this op, at the kernel's level (every thread), or, if the predecessor neither reads nor writes argument 1 (%z), mark it {copy.predecessor_access = "none"}}}
  memref.store %a, %z[%t] : memref<256xf32>
  copy.grid_dependency_wait
  func.return
}

// -----

// A memref.copy reads its source and writes its destination: the read of %w (marked) may
// come first, the write of %z may not.
// rule: GD3
// fix: s|%z: memref<256xf32>|%z: memref<256xf32> {copy.predecessor_access = "none"}|
func.func @gd3_copy_before_wait(%w: memref<256xf32> {copy.predecessor_access = "read"}, %z: memref<256xf32>) attributes {copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{'memref.copy' op expected every GMEM write of a kernel that waits for its predecessor to come after copy.grid_dependency_wait, found a write of argument 1 (%z)}}
  // expected-note@+1 {{mark it {copy.predecessor_access = "none"}}}
  "memref.copy"(%w, %z) : (memref<256xf32>, memref<256xf32>) -> ()
  copy.grid_dependency_wait
  func.return
}

// -----

// "read" allows reads before the wait, not writes: the predecessor reads the argument.
// rule: GD3
// fix: s|{copy.predecessor_access = "read"}|{copy.predecessor_access = "none"}|
func.func @gd3_write_of_read_argument(%w: memref<256xf32> {copy.predecessor_access = "read"}) attributes {copy.target = #copy.target<"sm_90a">} {
  %t = gpu.thread_id x
  %a = memref.load %w[%t] : memref<256xf32>
  // expected-error@+2 {{found a write of argument 0 (%w) where no copy.grid_dependency_wait comes before it}}
  // expected-note@+1 {{mark it {copy.predecessor_access = "none"}}}
  memref.store %a, %w[%t] : memref<256xf32>
  copy.grid_dependency_wait
  func.return
}

// -----

// rule: GD4
// fix: s|"write"|"read"|
// expected-error@+2 {{'func.func' op expected copy.predecessor_access on a GMEM memref argument, one of "none" (the predecessor neither reads nor writes it), "read" (the predecessor at most reads it), found "write" on argument 0 of type memref<256xf32>}}
// expected-note@+1 {{write copy.predecessor_access = "read" or "none" on a GMEM memref argument, or drop it}}
func.func @gd4_unknown_mark(%w: memref<256xf32> {copy.predecessor_access = "write"}) attributes {copy.target = #copy.target<"sm_90a">} {
  copy.grid_dependency_wait
  func.return
}

// -----

// rule: GD4
// fix: s| {copy.predecessor_access = "none"}||
// expected-error@+2 {{found "none" on argument 0 of type index}}
// expected-note@+1 {{or drop it}}
func.func @gd4_mark_on_a_scalar(%i: index {copy.predecessor_access = "none"}) attributes {copy.target = #copy.target<"sm_90a">} {
  copy.grid_dependency_wait
  func.return
}
