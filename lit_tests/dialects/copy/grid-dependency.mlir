// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// Programmatic dependent launch (copy_dialect/grid_dependency.py): the two ops in their
// custom and generic forms, and kernels whose GMEM accesses the kernel rule GD2/GD3
// accepts (analysis/kernel/grid_dependency.py): every access of an argument the
// predecessor may write comes after copy.grid_dependency_wait on every path of its thread,
// and arguments marked copy.predecessor_access are read ("read") or also written ("none")
// before it.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @produce(
  // CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "produce"
  func.func @produce(%x: memref<256xf32>, %y: memref<256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    // CHECK: copy.launch_dependents
    // CHECK-GENERIC: "copy.launch_dependents"() : () -> ()
    copy.launch_dependents
    %t = gpu.thread_id x
    %a = memref.load %x[%t] : memref<256xf32>
    memref.store %a, %y[%t] : memref<256xf32>
    func.return
  }

  // The weights (not the predecessor's) and a scratch buffer it does not touch before the
  // wait; its output after it.
  // CHECK-LABEL: func.func @consume(
  // CHECK-SAME: {copy.predecessor_access = "read"}
  // CHECK-SAME: {copy.predecessor_access = "none"}
  func.func @consume(%w: memref<256xf32> {copy.predecessor_access = "read"}, %s: memref<256xf32> {copy.predecessor_access = "none"}, %y: memref<256xf32>, %z: memref<256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %t = gpu.thread_id x
    %a = memref.load %w[%t] : memref<256xf32>
    memref.store %a, %s[%t] : memref<256xf32>
    // CHECK: copy.grid_dependency_wait
    // CHECK-GENERIC: "copy.grid_dependency_wait"() : () -> ()
    copy.grid_dependency_wait
    %v = memref.load %y[%t] : memref<256xf32>
    %r = arith.mulf %a, %v : f32
    memref.store %r, %z[%t] : memref<256xf32>
    copy.launch_dependents
    func.return
  }

  // A wait and the accesses it orders inside one scf.if arm; a wait before a loop orders
  // the loop's accesses; a wait at the top of a loop's body orders the accesses after it in
  // the body, on every lap.
  // CHECK-LABEL: func.func @paths(
  func.func @paths(%y: memref<256xf32>, %z: memref<256xf32>, %c: i1) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %t = gpu.thread_id x
    scf.if %c {
      copy.grid_dependency_wait
      %v = memref.load %y[%t] : memref<256xf32>
      memref.store %v, %z[%t] : memref<256xf32>
    }
    scf.for %k = %c0 to %c4 step %c1 {
      copy.grid_dependency_wait
      %v = memref.load %y[%k] : memref<256xf32>
      memref.store %v, %z[%k] : memref<256xf32>
    }
    copy.grid_dependency_wait
    scf.for %k = %c0 to %c4 step %c1 {
      %v = memref.load %y[%k] : memref<256xf32>
      memref.store %v, %z[%k] : memref<256xf32>
    }
    func.return
  }

  // In a CFG: a wait on each branch orders what follows their join.
  // CHECK-LABEL: func.func @branches(
  func.func @branches(%y: memref<256xf32>, %c: i1) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %t = gpu.thread_id x
    cf.cond_br %c, ^bb1, ^bb2
  ^bb1:
    copy.grid_dependency_wait
    cf.br ^bb3
  ^bb2:
    copy.grid_dependency_wait
    cf.br ^bb3
  ^bb3:
    %v = memref.load %y[%t] : memref<256xf32>
    func.return
  }

  // A wait before copy.warp_specialize orders every role's accesses.
  // CHECK-LABEL: func.func @roles(
  func.func @roles(%y: memref<256xf32>, %z: memref<256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    copy.grid_dependency_wait
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      %v = memref.load %y[%t] : memref<256xf32>
    }, {
    ^bb0(%t: index):
      %v = memref.load %y[%t] : memref<256xf32>
      memref.store %v, %z[%t] : memref<256xf32>
    }
    func.return
  }
}
