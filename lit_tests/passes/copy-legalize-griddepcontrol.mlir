// RUN: copy-opt %s -p 'copy-legalize{target=sm_80}' | filecheck %s
// RUN: copy-opt %s -p 'copy-legalize{target=sm_90a}' | filecheck %s --check-prefix=SM90

// copy-legalize for a target without griddepcontrol (sm_80-sm_89, rule GD1) removes
// copy.grid_dependency_wait and copy.launch_dependents: without programmatic dependent
// launch a kernel starts only once the one ahead of it on the stream completed, which is
// what the wait waited for, and the trigger has nothing to trigger. The result verifies for
// sm_80 (copy-opt verifies it after the pass); on sm_90a the pass keeps them.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @consume(
  // CHECK-NOT: copy.grid_dependency_wait
  // CHECK-NOT: copy.launch_dependents
  // CHECK: memref.load
  // CHECK-NOT: copy.grid_dependency_wait
  // CHECK-NOT: copy.launch_dependents
  // CHECK: func.return
  // SM90-LABEL: func.func @consume(
  // SM90: copy.grid_dependency_wait
  // SM90: copy.launch_dependents
  func.func @consume(%w: memref<256xf32> {copy.predecessor_access = "read"}, %y: memref<256xf32>, %z: memref<256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %t = gpu.thread_id x
    %a = memref.load %w[%t] : memref<256xf32>
    copy.grid_dependency_wait
    %v = memref.load %y[%t] : memref<256xf32>
    %r = arith.mulf %a, %v : f32
    memref.store %r, %z[%t] : memref<256xf32>
    copy.launch_dependents
    func.return
  }
}
