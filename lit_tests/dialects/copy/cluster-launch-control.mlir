// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// Cluster launch control (copy_dialect/cluster_launch_control.py): copy.try_cancel and
// copy.query_cancel in their custom and generic forms, in kernels the protocol analysis
// proves (analysis/protocol/ops_clc.py): each response is expected (16 bytes) on its
// barrier, queried only after the barrier's phase completed, and a slot is requested into
// again only after a block barrier follows every thread's query of it. @persistent is the
// persistent loop: a CTA stores its tile, asks for the next cluster's, and goes on with the
// canceled cluster's first ctaid until a request fails (-1 ends the loop).

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  // CHECK-LABEL: func.func @one_request(
  func.func @one_request(%out: memref<128xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %resp = copy.alloc_smem : memref<16xi8, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %bar[%c0], 16 : !copy.barrier<1>
    // CHECK: copy.try_cancel %{{.*}} barrier %{{.*}}[%{{.*}}] : memref<16xi8, #copy.smem>, !copy.barrier<1>
    copy.try_cancel %resp barrier %bar[%c0] : memref<16xi8, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    // CHECK: copy.query_cancel %{{.*}} : memref<16xi8, #copy.smem>
    %ok, %x, %y, %z = copy.query_cancel %resp : memref<16xi8, #copy.smem>
    %tid = gpu.thread_id x
    %v = arith.select %ok, %x, %y : i32
    memref.store %v, %out[%tid] : memref<128xi32>
    func.return
  }

  // CTA 0 of the pair requests with multicast: the response lands in the slot of each CTA,
  // which each expects on its own barrier (initialized before the cluster barrier, so that
  // CTA 0's request cannot reach CTA 1's barrier first).
  // CHECK-LABEL: func.func @multicast_pair(
  func.func @multicast_pair(%out: memref<256xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %false = arith.constant false
    %resp = copy.alloc_smem : memref<1x2xi64, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.cluster_sync
    %bx = gpu.block_id x
    %rank = arith.remui %bx, %c2 : index
    %lead = arith.cmpi eq, %rank, %c0 : index
    copy.barrier_arrive_expect_tx %bar[%c0], 16 : !copy.barrier<1>
    scf.if %lead {
      // CHECK: copy.try_cancel %{{.*}}[%{{.*}}] barrier %{{.*}}[%{{.*}}] multicast : memref<1x2xi64, #copy.smem>, !copy.barrier<1>
      // CHECK-GENERIC: "copy.try_cancel"({{.*}}) <{multicast, operandSegmentSizes = array<i32: 1, 1, 1, 1>}>
      copy.try_cancel %resp[%c0] barrier %bar[%c0] multicast : memref<1x2xi64, #copy.smem>, !copy.barrier<1>
    }
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    %ok, %x, %y, %z = copy.query_cancel %resp[%c0] : memref<1x2xi64, #copy.smem>
    %tid = gpu.thread_id x
    %base = arith.muli %rank, %c128 : index
    %at = arith.addi %base, %tid : index
    memref.store %x, %out[%at] : memref<256xi32>
    func.return
  }

  // CHECK-LABEL: func.func @persistent(
  // CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "persistent"
  func.func @persistent(%out: memref<4096xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %resp = copy.alloc_smem : memref<2x16xi8, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %bid = gpu.block_id x
    %tid = gpu.thread_id x
    %first = arith.index_cast %bid : index to i32
    %end:2 = scf.while (%tile = %first, %k = %c0) : (i32, index) -> (i32, index) {
      %go = arith.cmpi sge, %tile, %first : i32
      scf.condition(%go) %tile, %k : i32, index
    } do {
    ^bb0(%t: i32, %n: index):
      %ti = arith.index_cast %t : i32 to index
      %base = arith.muli %ti, %c128 : index
      %at = arith.addi %base, %tid : index
      %v = arith.index_cast %at : index to i32
      memref.store %v, %out[%at] : memref<4096xi32>
      %s = arith.remui %n, %c2 : index
      %lap = arith.divui %n, %c2 : index
      %lapbit = arith.remui %lap, %c2 : index
      %parity = arith.cmpi ne, %lapbit, %c0 : index
      gpu.barrier
      copy.barrier_arrive_expect_tx %bars[%s], 16 : !copy.barrier<2>
      // CHECK: copy.try_cancel %{{.*}}[%{{.*}}] barrier %{{.*}}[%{{.*}}] : memref<2x16xi8, #copy.smem>, !copy.barrier<2>
      // CHECK-GENERIC: "copy.try_cancel"({{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (memref<2x16xi8, #copy.smem>, index, !copy.barrier<2>, index) -> ()
      copy.try_cancel %resp[%s] barrier %bars[%s] : memref<2x16xi8, #copy.smem>, !copy.barrier<2>
      copy.barrier_wait %bars[%s], %parity : !copy.barrier<2>
      // CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = copy.query_cancel %{{.*}}[%{{.*}}] : memref<2x16xi8, #copy.smem>
      // CHECK-GENERIC: "copy.query_cancel"({{.*}}) : (memref<2x16xi8, #copy.smem>, index) -> (i1, i32, i32, i32)
      %ok, %x, %y, %z = copy.query_cancel %resp[%s] : memref<2x16xi8, #copy.smem>
      %none = arith.constant -1 : i32
      %next = arith.select %ok, %x, %none : i32
      %n1 = arith.addi %n, %c1 : index
      scf.yield %next, %n1 : i32, index
    }
    func.return
  }
}
