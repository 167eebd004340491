// RUN: copy-opt %s -t ptx | filecheck %s

// A barrier_wait's suspend_hint reaches the PTX as mbarrier.try_wait's suspend-time operand
// (the wait without one passes the lowering's default, 10000000 ns).

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @waits() attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %bars = copy.barrier_init arrivals 128 : !copy.barrier<1>
    copy.barrier_arrive %bars[%c0] : !copy.barrier<1>
    copy.barrier_wait %bars[%c0], %false suspend_hint 1000 : !copy.barrier<1>
    copy.barrier_arrive %bars[%c0] : !copy.barrier<1>
    copy.barrier_wait %bars[%c0], %true : !copy.barrier<1>
    func.return
  }
}

// CHECK-LABEL: .entry waits(
// CHECK:       mov.b32 [[HINT:%r[0-9]+]], 1000;
// CHECK:       mbarrier.try_wait.parity.shared::cta.b64 P1, [%rd{{[0-9]+}}], %r{{[0-9]+}}, [[HINT]];
// CHECK:       mov.b32 [[DEFAULT:%r[0-9]+]], 10000000;
// CHECK:       mbarrier.try_wait.parity.shared::cta.b64 P1, [%rd{{[0-9]+}}], %r{{[0-9]+}}, [[DEFAULT]];
