// RUN: copy-opt %s -t ptx --target sm_90a | filecheck %s

// The mbarrier-breadth ops through the whole pipeline on sm_90a (ptxas -arch=sm_90a accepts
// the PTX): expect_tx and complete_tx without an arrival (complete_tx after a
// fence.acq_rel.cta, from each thread and from lane 0 of each warp), a nocomplete arrival
// with a count, arrive_drop with a count, with expect_tx and with nocomplete, inval and the
// reinit's init, fence and block barrier. The phases balance (the protocol analysis proves
// the kernel): phase 0 counts 5 arrivals and 640 bytes, phase 1 the 2 arrivals left.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @breadth() attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %bar = copy.barrier_init arrivals 5 : !copy.barrier<1>
    copy.barrier_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    copy.barrier_complete_tx %bar[%c0], 4 : !copy.barrier<1>
    copy.barrier_arrive %bar[%c0] count 2 nocomplete issuer elected : !copy.barrier<1>
    copy.barrier_arrive_drop %bar[%c0] count 2 issuer elected : !copy.barrier<1>
    copy.barrier_arrive_drop %bar[%c0] expect_tx 128 issuer elected : !copy.barrier<1>
    copy.barrier_complete_tx %bar[%c0], 32 issuer warps : !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.barrier_arrive_drop %bar[%c0] count 1 nocomplete issuer elected : !copy.barrier<1>
    copy.barrier_arrive_drop %bar[%c0] issuer elected : !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
    copy.barrier_inval %bar : !copy.barrier<1>
    copy.barrier_reinit %bar arrivals 1 : !copy.barrier<1>
    func.return
  }
}

// CHECK-LABEL: .entry breadth(
// CHECK:       mbarrier.init.shared.b64 [[[BAR:%rd[0-9]+]]], {{%r[0-9]+}};
// The elected thread's expect_tx and every thread's complete_tx (LLVM may place either
// block first).
// CHECK-DAG:   mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [[[BAR]]], {{%r[0-9]+}};
// CHECK-DAG:   fence.acq_rel.cta;
// CHECK-DAG:   mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [[[BAR]]], {{%r[0-9]+}};
// CHECK:       mbarrier.arrive.noComplete.shared::cta.b64 _, [[[BAR]]], {{%r[0-9]+}};
// CHECK:       mbarrier.arrive_drop.shared::cta.b64 _, [[[BAR]]], {{%r[0-9]+}};
// CHECK:       mbarrier.arrive_drop.expect_tx.shared::cta.b64 _, [[[BAR]]], {{%r[0-9]+}};
// CHECK:       bar.warp.sync -1;
// CHECK:       fence.acq_rel.cta;
// CHECK:       mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [[[BAR]]], {{%r[0-9]+}};
// CHECK:       mbarrier.try_wait.parity.shared::cta.b64
// CHECK:       mbarrier.arrive_drop.noComplete.shared::cta.b64 _, [[[BAR]]], {{%r[0-9]+}};
// CHECK:       mbarrier.arrive_drop.shared::cta.b64 _, [[[BAR]]];
// CHECK:       mbarrier.try_wait.parity.shared::cta.b64
// CHECK:       bar.sync 0;
// CHECK:       mbarrier.inval.shared::cta.b64 [[[BAR]]];
// CHECK:       mbarrier.init.shared.b64 [[[BAR]]], {{%r[0-9]+}};
// CHECK:       fence.proxy.async.shared::cta;
// CHECK-NEXT:  bar.sync 0;
