// RUN: copy-opt %s -t ptx --target sm_80 | filecheck %s

// The mbarrier-breadth forms sm_80 has (ptxas -arch=sm_80 accepts the PTX): a nocomplete
// arrival with a count (the count of a plain arrival needs sm_90), arrive_drop once and with
// a count under nocomplete, inval, and the reinit's init and block barrier (no
// fence.proxy.async before sm_90). Phase 0 counts 3 arrivals, phase 1 the 2 left.

builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @sm80_forms(%x: memref<128xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %bar = copy.barrier_init arrivals 3 : !copy.barrier<1>
    copy.barrier_arrive %bar[%c0] count 2 nocomplete issuer elected : !copy.barrier<1>
    copy.barrier_arrive_drop %bar[%c0] issuer elected : !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.barrier_arrive_drop %bar[%c0] count 1 nocomplete issuer elected : !copy.barrier<1>
    copy.barrier_arrive %bar[%c0] issuer elected : !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
    copy.barrier_inval %bar : !copy.barrier<1>
    copy.barrier_reinit %bar arrivals 1 : !copy.barrier<1>
    func.return
  }
}

// CHECK-LABEL: .entry sm80_forms(
// CHECK:       mbarrier.init.shared.b64 [[[BAR:%rd[0-9]+]]], {{%r[0-9]+}};
// CHECK:       mbarrier.arrive.noComplete.shared::cta.b64 _, [[[BAR]]], {{%r[0-9]+}};
// CHECK:       mbarrier.arrive_drop.shared::cta.b64 _, [[[BAR]]];
// CHECK:       mbarrier.test_wait.parity.shared.b64
// CHECK:       mbarrier.arrive_drop.noComplete.shared::cta.b64 _, [[[BAR]]], {{%r[0-9]+}};
// CHECK:       mbarrier.test_wait.parity.shared.b64
// CHECK:       bar.sync 0;
// CHECK:       mbarrier.inval.shared::cta.b64 [[[BAR]]];
// CHECK:       mbarrier.init.shared.b64 [[[BAR]]], {{%r[0-9]+}};
// CHECK-NOT:   fence.proxy.async
// CHECK:       bar.sync 0;
