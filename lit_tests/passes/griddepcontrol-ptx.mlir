// RUN: copy-opt %s -p convert-copy-to-nvvm | filecheck %s --check-prefix=NVVM
// RUN: copy-opt %s -t ptx | filecheck %s
// RUN: copy-opt %s -t ptx --target sm_100a | filecheck %s

// Programmatic dependent launch lowered (passes/convert_copy_to_nvvm/grid_dependency.py):
// copy.launch_dependents and copy.grid_dependency_wait become upstream's
// `nvvm.griddepcontrol launch_dependents` / `wait`, LLVM's llvm.nvvm.griddepcontrol
// intrinsics and PTX's `griddepcontrol.launch_dependents;` / `griddepcontrol.wait;`
// (PTX ISA 7.8, sm_90+), executed by every thread that reaches them; the kernel that waits
// is `grid_dependent` in its ABI (the runtime launches it with programmatic stream
// serialization), the other is not. tests/passes/test_grid_dependency.py assembles the PTX
// with nvJitLink and, where it is on PATH, ptxas, for every target with griddepcontrol.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // NVVM-LABEL: func.func @produce(
  // NVVM-NOT: grid_dependent
  // NVVM: nvvm.griddepcontrol launch_dependents
  // CHECK-LABEL: .entry produce(
  // CHECK: griddepcontrol.launch_dependents;
  // CHECK: st.global.b32
  func.func @produce(%x: memref<256xf32>, %y: memref<256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    copy.launch_dependents
    %t = gpu.thread_id x
    %a = memref.load %x[%t] : memref<256xf32>
    memref.store %a, %y[%t] : memref<256xf32>
    func.return
  }

  // NVVM-LABEL: func.func @consume(
  // NVVM-SAME: grid_dependent = true
  // NVVM: memref.load
  // NVVM: nvvm.griddepcontrol wait
  // NVVM: memref.load
  // CHECK-LABEL: .entry consume(
  // CHECK: ld.global.b32
  // CHECK: griddepcontrol.wait;
  // CHECK: ld.global.b32
  // CHECK: st.global.b32
  func.func @consume(%w: memref<256xf32> {copy.predecessor_access = "read"}, %y: memref<256xf32>, %z: memref<256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %t = gpu.thread_id x
    %a = memref.load %w[%t] : memref<256xf32>
    copy.grid_dependency_wait
    %v = memref.load %y[%t] : memref<256xf32>
    %r = arith.mulf %a, %v : f32
    memref.store %r, %z[%t] : memref<256xf32>
    func.return
  }
}
