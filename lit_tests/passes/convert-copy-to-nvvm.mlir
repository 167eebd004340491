// RUN: copy-opt %s --split-input-file -p convert-copy-to-nvvm | filecheck %s

// A TMA load and store: the elected thread (thread 0) arrives on the barrier with the box
// bytes and issues the bulk tensor copies; the tensor maps become grid-constant parameters.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK: llvm.mlir.global external @__copy_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
  // CHECK-LABEL: func.func @tma_load_store(
  // CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}
  func.func @tma_load_store(%x: memref<256x256xf32>, %y: memref<256x256xf32>, %i: index, %j: index, %p: i1) {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    // CHECK: nvvm.mbarrier.init.shared
    // CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    // CHECK-NEXT: nvvm.barrier0
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // CHECK: scf.if %[[LEADER:.*]] {
    // CHECK: nvvm.mbarrier.arrive.expect_tx.shared %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
    // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] {cta_destination} : !llvm.ptr<3>, !llvm.ptr
    copy.async_copy %x[%i, %j] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    %phase = arith.constant false
    // Every thread waits.
    // CHECK: nvvm.mbarrier.try_wait.parity.shared %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32, i32
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    // The store, its commit and its wait follow each other: one elected region issues them.
    // CHECK: scf.if %[[LEADER]] {
    // CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr, !llvm.ptr<3>, i32, i32
    copy.async_copy %buf to %y[%i, %j] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    // CHECK-NEXT: nvvm.cp.async.bulk.commit.group
    copy.commit_group bulk
    // CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
    // CHECK-NEXT: }
    // CHECK-NEXT: nvvm.barrier0
    copy.wait_group bulk 0 read_only
    // CHECK-NOT: copy.{{[a-z_]+}} {{[%:]}}
    func.return
  }
}

// -----

// A TMA reduce-add into GMEM, a prefetch, and a predicated load with an L2 cache hint.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @reduce_prefetch_predicate(
  func.func @reduce_prefetch_predicate(%x: memref<256x256xbf16>, %y: memref<256x256xbf16>, %i: index, %p: i1) {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<32x64xbf16, #copy.smem<swizzle = 128>>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // CHECK: nvvm.cp.async.bulk.tensor.prefetch %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr
    copy.prefetch %x[%i, %c0] {box = array<i64: 32, 64>} : memref<256x256xbf16>
    // The user's predicate is and-ed with the elected thread's.
    // CHECK: %[[COND:.*]] = llvm.and %{{.*}}, %{{.*}} : i1
    // CHECK-NEXT: scf.if %[[COND]] {
    // The L2 policy evict_last is the 64-bit operand createpolicy gives it.
    // CHECK: %[[POLICY:.*]] = llvm.mlir.constant(1508705875169116160) : i64
    // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} l2_cache_hint = %[[POLICY]] {cta_destination} : !llvm.ptr<3>, !llvm.ptr
    copy.async_copy %x[%i, %c0] to %buf barrier %bar[%c0] if %p l2 evict_last : memref<256x256xbf16> to memref<32x64xbf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    // The wait is predicated as the load is: nothing arrives when %p is false.
    scf.if %p {
      %phase = arith.constant false
      copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    }
    copy.fence_async_shared
    // CHECK: nvvm.cp.async.bulk.tensor.reduce %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
    copy.async_copy %buf to %y[%i, %c0] reduce add : memref<32x64xbf16, #copy.smem<swizzle = 128>> to memref<256x256xbf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    // CHECK-NOT: copy.{{[a-z_]+}} {{[%:]}}
    func.return
  }
}

// -----

// A multicast load over a cluster of 2: each CTA loads half of the box (its index in the
// group times 32 rows) into its half of SMEM, with the group's CTA mask (0b11 shifted to the
// group's first rank); each CTA's barrier expects the whole box.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @multicast(
  func.func @multicast(%x: memref<256x256xf32>, %i: index) attributes {copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    // Barriers are initialized cluster-wide before any CTA multicasts into its peer.
    // CHECK: nvvm.fence.mbarrier.init
    // CHECK-NEXT: nvvm.cluster.arrive {aligned}
    // CHECK-NEXT: nvvm.cluster.wait {aligned}
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // CHECK: %[[TX:.*]] = llvm.mlir.constant(16384 : i32) : i32
    // CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx.shared %{{.*}}, %[[TX]]
    // CHECK: nvvm.read.ptx.sreg.cluster.ctarank
    // CHECK: %[[PATTERN:.*]] = llvm.mlir.constant(3) : i64
    // CHECK-NEXT: %[[SHIFTED:.*]] = llvm.shl %[[PATTERN]], %{{.*}} : i64
    // CHECK-NEXT: %[[MASK:.*]] = llvm.trunc %[[SHIFTED]] : i64 to i16
    // CHECK: llvm.mlir.constant(8192) : i64
    // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %[[MASK]] : !llvm.ptr<3>, !llvm.ptr
    copy.async_copy %x[%i, %c0] to %buf barrier %bar[%c0] {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    %phase = arith.constant false
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    // CHECK-NOT: copy.{{[a-z_]+}} {{[%:]}}
    func.return
  }
}

// -----

// cp.async on sm_80: every thread copies 16-byte chunks in a loop over the box; with
// oob zeros each chunk's source size is clipped to the array (the rest is zero-filled).

builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  // CHECK-LABEL: func.func @cp_async(
  func.func @cp_async(%x: memref<100x100xf32>, %i: index, %j: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %buf = copy.alloc_smem : memref<32x64xf32, #copy.smem>
    // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
    // CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
    copy.async_copy %x[%i, %j] to %buf oob zeros : memref<100x100xf32> to memref<32x64xf32, #copy.smem>
    // CHECK: nvvm.cp.async.commit.group
    copy.commit_group cp_async
    // CHECK: nvvm.cp.async.wait.group 0
    // CHECK-NEXT: nvvm.barrier0
    copy.wait_group cp_async 0
    // CHECK-NOT: copy.{{[a-z_]+}} {{[%:]}}
    func.return
  }
}

// -----

// Barriers on sm_80: the wait is a test_wait.parity loop; an arrival count needs sm_90's
// mbarrier.arrive with a count (inline PTX).

builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  // CHECK-LABEL: func.func @barriers_sm80(
  func.func @barriers_sm80(%p: i1) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c1 = arith.constant 1 : index
    %bars = copy.barrier_init arrivals 128 : !copy.barrier<2>
    // CHECK: nvvm.mbarrier.arrive.shared %{{.*}} : !llvm.ptr<3>
    copy.barrier_arrive %bars[%c1] : !copy.barrier<2>
    // CHECK: nvvm.mbarrier.test_wait.parity.shared %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
    %phase = arith.constant false
    copy.barrier_wait %bars[%c1], %phase : !copy.barrier<2>
    // CHECK-NOT: copy.{{[a-z_]+}} {{[%:]}}
    func.return
  }
}

// -----

// TMEM on sm_100a: warp 0 allocates into an SMEM slot; loads and stores address the warp's
// lane quarter.

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  // CHECK-LABEL: func.func @tmem(
  func.func @tmem(%col: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    // CHECK: nvvm.tcgen05.alloc %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
    // CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit
    // CHECK: llvm.inttoptr %{{.*}} : i32 to !llvm.ptr<6>
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    // CHECK: nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
    // CHECK: llvm.bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
    %v = copy.tmem_load %acc[%col] shape shape_32x32b num 4 : memref<128x128xf32, #copy.tmem> -> vector<4xf32>
    // CHECK: nvvm.tcgen05.wait <load>
    copy.tmem_wait load
    // CHECK: nvvm.tcgen05.st %{{.*}}, %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
    copy.tmem_store %v, %acc[%col] shape shape_32x32b num 4 : vector<4xf32>, memref<128x128xf32, #copy.tmem>
    // CHECK: nvvm.tcgen05.wait <store>
    copy.tmem_wait store
    // CHECK: nvvm.barrier0
    // CHECK: nvvm.tcgen05.dealloc %{{.*}}, %{{.*}} : !llvm.ptr<6>, i32
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    // CHECK-NOT: copy.{{[a-z_]+}} {{[%:]}}
    func.return
  }
}

// -----

// Consecutive elected ops share one region of the elected thread; a predicated store (its
// condition is the elected thread and the predicate) and the kernel's own scf.if keep theirs.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @elected_regions(
  func.func @elected_regions(%y: memref<256x256xf32>, %i: index, %p: i1) {
    %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    // CHECK: %[[BOTH:.*]] = llvm.and %[[LEADER:.*]], %{{.*}} : i1
    // CHECK-NEXT: scf.if %[[BOTH]] {
    // CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
    // CHECK: }
    copy.async_copy %buf to %y[%i, %i] if %p : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    // CHECK-NEXT: scf.if %[[LEADER]] {
    // CHECK-NEXT: nvvm.cp.async.bulk.commit.group
    // CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
    // CHECK-NEXT: nvvm.cp.async.bulk.commit.group
    // CHECK-NEXT: }
    copy.commit_group bulk
    copy.async_copy %buf to %y[%i, %i] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    // CHECK-NEXT: scf.if %p {
    scf.if %p {
      scf.yield
    }
    // CHECK: scf.if %[[LEADER]] {
    // CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// The prologue's thread index: with gpu.known_block_size the block's thread count is a
// constant and a dim of extent 1 adds nothing (x fastest: tid.x + 32 tid.z); without it,
// the index and count come from tid and ntid.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @known_block(
  func.func @known_block(%y: memref<256x256xf32>) attributes {gpu.known_block_size = array<i32: 32, 1, 4>} {
    // CHECK-NEXT: %[[X:.*]] = nvvm.read.ptx.sreg.tid.x : i32
    // CHECK-NEXT: %[[X64:.*]] = llvm.zext %[[X]] : i32 to i64
    // CHECK-NEXT: %[[Z:.*]] = nvvm.read.ptx.sreg.tid.z : i32
    // CHECK-NEXT: %[[Z64:.*]] = llvm.zext %[[Z]] : i32 to i64
    // CHECK-NEXT: %[[C32:.*]] = llvm.mlir.constant(32) : i64
    // CHECK-NEXT: %[[ZROW:.*]] = llvm.mul %[[Z64]], %[[C32]] : i64
    // CHECK-NEXT: %[[LINEAR:.*]] = llvm.add %[[X64]], %[[ZROW]] : i64
    // CHECK-NEXT: %{{.*}} = llvm.mlir.constant(128) : i64
    // CHECK-NEXT: %[[C0:.*]] = llvm.mlir.constant(0) : i64
    // CHECK-NEXT: %{{.*}} = llvm.icmp "eq" %[[LINEAR]], %[[C0]] : i64
    // CHECK-NOT: ntid
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    copy.async_copy %buf to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
  // CHECK-LABEL: func.func @any_block(
  func.func @any_block(%y: memref<256x256xf32>) {
    // CHECK: nvvm.read.ptx.sreg.tid.y
    // CHECK: nvvm.read.ptx.sreg.ntid.z
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    copy.async_copy %buf to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// A barrier's address: a constant index is folded into it (barrier 0 is the group's own
// address, barrier 2 sixteen bytes on); a run-time index is multiplied by 8.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @barrier_addresses(
  func.func @barrier_addresses(%k: index, %phase: i1) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    // CHECK: %[[GROUP:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    // CHECK: nvvm.mbarrier.init.shared %[[GROUP]]
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<4>
    // CHECK: nvvm.mbarrier.try_wait.parity.shared %[[GROUP]], %{{.*}}, %{{.*}}
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<4>
    // CHECK: %[[C16:.*]] = llvm.mlir.constant(16) : i64
    // CHECK-NEXT: %[[B2:.*]] = llvm.getelementptr %[[GROUP]][%[[C16]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    // CHECK: nvvm.mbarrier.try_wait.parity.shared %[[B2]], %{{.*}}, %{{.*}}
    copy.barrier_wait %bar[%c2], %phase : !copy.barrier<4>
    // CHECK: %[[C8:.*]] = llvm.mlir.constant(8) : i64
    // CHECK-NEXT: %[[OFFSET:.*]] = llvm.mul %{{.*}}, %[[C8]] : i64
    // CHECK-NEXT: %[[BK:.*]] = llvm.getelementptr %[[GROUP]][%[[OFFSET]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    // CHECK: nvvm.mbarrier.try_wait.parity.shared %[[BK]], %{{.*}}, %{{.*}}
    copy.barrier_wait %bar[%k], %phase : !copy.barrier<4>
    func.return
  }
}
