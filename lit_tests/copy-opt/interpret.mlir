// RUN: copy-opt %s --split-input-file --no-verify-protocol --interpret --interpret-schedules 3 --verify-diagnostics
// RUN: not copy-opt %s --split-input-file --no-verify-protocol --interpret --interpret-schedules 3 2>/dev/null | filecheck %s

// copy-opt --interpret: each kernel runs on the CPU under the interpreter; the rules a run
// breaks are errors at their ops (with a note at the other access), and the output is a
// report of the runs. The protocol analysis is left out here (--no-verify-protocol) so that
// the interpreter sees the broken kernels.

// A TMA tile copy that waits for its load and its store: clean.
// CHECK: // @clean: grid (1, 1, 1), 3 run(s) of schedule random from seed 0: clean
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @clean(%x: memref<64x64xf32>, %y: memref<64x64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0]
      : memref<64x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// P1: the threads read the tile before the wait that completes its load.
// CHECK: // @read_before_wait: {{.*}}: 1 violation(s)
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @read_before_wait(%x: memref<64x64xf32>, %y: memref<64x64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %phase = arith.constant false
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // expected-note@+1 {{the other access}}
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0]
      : memref<64x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    // expected-error@+1 {{'memref.load' op the block reads SMEM byte 256 that the async copy writes, and nothing orders the two (no wait, barrier or group retirement between them) [P1]}}
    %v = memref.load %tile[%c1, %t] : memref<64x64xf32, #copy.smem>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    memref.store %v, %y[%c0, %t] : memref<64x64xf32>
    func.return
  }
}

// -----

// P2: a thread rewrites the tile while the TMA store may still read it.
// CHECK: // @rewrite_while_stored: {{.*}}: 1 violation(s)
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @rewrite_while_stored(%y: memref<64x64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    // expected-note@+1 {{the other access}}
    copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32>
    copy.commit_group bulk
    // expected-error@+1 {{'memref.store' op the block writes SMEM byte 0 that the async copy reads, and nothing orders the two (no wait, barrier or group retirement between them) [P2]}}
    memref.store %one, %tile[%c0, %t] : memref<64x64xf32, #copy.smem>
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// P6: the barrier awaits two arrivals and gets one: the wait never returns.
// CHECK: // @hang: {{.*}}: 1 violation(s)
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @hang(%x: memref<64x64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 2 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0]
      : memref<64x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    // expected-error@+1 {{never returns: every thread of the CTA waits and no copy is in flight; the block waits for parity 0 of %bar[0] (phase 0: 1 of 2 arrivals, 0 bytes outstanding) [P6]}}
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    func.return
  }
}

// -----

// P7: the kernel returns while its TMA store may still read the tile.
// CHECK: // @store_in_flight: {{.*}}: 1 violation(s)
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @store_in_flight(%y: memref<64x64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    // expected-error@+1 {{is still in flight when the kernel returns: no wait the returning threads passed covers it [P7]}}
    copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32>
    copy.commit_group bulk
    func.return
  }
}

// -----

// An op the interpreter does not model stops the run: an error at the op, and the report
// says the run stopped (not "clean": nothing after the op ran).
// CHECK: // @not_modelled: grid (1, 1, 1), 3 run(s) of schedule random from seed 0: stopped in run 1: an op it cannot interpret
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @not_modelled(%x: memref<64x64xf32>, %y: memref<64xi64>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0]
      : memref<64x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    // expected-error@+1 {{cannot interpret: a cast other than of an SMEM or TMEM memref to a pointer is not modelled by the interpreter}}
    %w = builtin.unrealized_conversion_cast %c0 : index to i64
    memref.store %w, %y[%c0] : memref<64xi64>
    func.return
  }
}
