// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// Every op of the copy dialect in its custom form, printed back after a trip through the
// generic form (CHECK), and in the generic form itself (CHECK-GENERIC).

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @tma_load_store(
  // CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "tma_load_store"
  // A kernel whose protocol is complete (the verifier proves it): each copy is waited on.
  func.func @tma_load_store(%x: memref<4096x4096xf32>, %y: memref<4096x4096xf32>, %i: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %p = arith.constant true
    %false = arith.constant false
    // CHECK: %{{.*}} = copy.alloc_smem : memref<2x64x32xf32, #copy.smem<swizzle = 128>>
    // CHECK-GENERIC: "copy.alloc_smem"() : () -> memref<2x64x32xf32, #copy.smem<swizzle = 128>>
    %buf = copy.alloc_smem : memref<2x64x32xf32, #copy.smem<swizzle = 128>>
    // CHECK: %{{.*}} = copy.alloc_smem {alignment = 256 : i64} : memref<64x32xf32, #copy.smem>
    // CHECK-GENERIC: "copy.alloc_smem"() <{alignment = 256 : i64}> : () -> memref<64x32xf32, #copy.smem>
    %plain = copy.alloc_smem {alignment = 256 : i64} : memref<64x32xf32, #copy.smem>
    // CHECK: %[[BARS:.*]] = copy.barrier_init arrivals 1 : !copy.barrier<2>
    // CHECK-GENERIC: "copy.barrier_init"() <{arrivals = 1 : i32}> : () -> !copy.barrier<2>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    // CHECK: copy.async_copy %{{.*}}[%{{.*}}, %{{.*}}] to %{{.*}}[%{{.*}}] barrier %[[BARS]][%{{.*}}] : memref<4096x4096xf32> to memref<2x64x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<2>
    // CHECK-GENERIC: "copy.async_copy"(%{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 2, 1, 1, 1, 0, 0>}>
    copy.async_copy %x[%c0, %i] to %buf[%c0] barrier %bars[%c0] : memref<4096x4096xf32> to memref<2x64x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<2>
    // CHECK: copy.async_copy %{{.*}}[%{{.*}}, %{{.*}}] to %{{.*}} barrier %[[BARS]][%{{.*}}] if %{{.*}} impl tma oob nan l2 evict_first {arrive = false, swizzle = 16 : i64} : memref<4096x4096xf32> to memref<64x32xf32, #copy.smem>, !copy.barrier<2>
    // CHECK-GENERIC: "copy.async_copy"(%{{.*}}) <{implementation = #copy<implementation tma>, oob = #copy<oob nan>, l2 = #copy<l2 evict_first>, arrive = false, swizzle = 16 : i64, operandSegmentSizes = array<i32: 1, 1, 2, 0, 1, 1, 1, 0>}>
    copy.async_copy %x[%i, %c0] to %plain barrier %bars[%c1] if %p impl tma oob nan l2 evict_first {arrive = false, swizzle = 16 : i64} : memref<4096x4096xf32> to memref<64x32xf32, #copy.smem>, !copy.barrier<2>
    // CHECK: copy.barrier_arrive_expect_tx %[[BARS]][%{{.*}}], 8192 : !copy.barrier<2>
    // CHECK-GENERIC: "copy.barrier_arrive_expect_tx"(%{{.*}}, %{{.*}}) <{bytes = 8192 : i64}> : (!copy.barrier<2>, index) -> ()
    copy.barrier_arrive_expect_tx %bars[%c1], 8192 : !copy.barrier<2>
    // CHECK: copy.barrier_wait %[[BARS]][%{{.*}}], %{{.*}} : !copy.barrier<2>
    // CHECK-GENERIC: "copy.barrier_wait"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (!copy.barrier<2>, index, i1) -> ()
    copy.barrier_wait %bars[%c0], %false : !copy.barrier<2>
    copy.barrier_wait %bars[%c1], %false : !copy.barrier<2>
    // Each of the 128 threads arrives twice.
    %sync = copy.barrier_init arrivals 256 : !copy.barrier<1>
    // CHECK: copy.barrier_arrive %{{.*}}[%{{.*}}] count 2 scope cluster : !copy.barrier<1>
    // CHECK-GENERIC: "copy.barrier_arrive"(%{{.*}}, %{{.*}}) <{count = 2 : i32, scope = #copy<scope cluster>}> : (!copy.barrier<1>, index) -> ()
    copy.barrier_arrive %sync[%c0] count 2 scope cluster : !copy.barrier<1>
    copy.barrier_wait %sync[%c0], %false : !copy.barrier<1>
    // CHECK: copy.fence_async_shared
    // CHECK-GENERIC: "copy.fence_async_shared"() : () -> ()
    copy.fence_async_shared
    // CHECK: copy.async_copy %{{.*}}[%{{.*}}] to %{{.*}}[%{{.*}}, %{{.*}}] reduce add : memref<2x64x32xf32, #copy.smem<swizzle = 128>> to memref<4096x4096xf32>
    // CHECK-GENERIC: "copy.async_copy"(%{{.*}}) <{reduction = #copy<reduction add>, operandSegmentSizes = array<i32: 1, 1, 1, 2, 0, 0, 0, 0>}>
    copy.async_copy %buf[%c0] to %y[%c0, %i] reduce add : memref<2x64x32xf32, #copy.smem<swizzle = 128>> to memref<4096x4096xf32>
    // CHECK: copy.async_copy %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}] oob undefined : memref<64x32xf32, #copy.smem> to memref<4096x4096xf32>
    copy.async_copy %plain to %y[%c0, %i] oob undefined : memref<64x32xf32, #copy.smem> to memref<4096x4096xf32>
    // CHECK: copy.commit_group bulk
    // CHECK-GENERIC: "copy.commit_group"() <{group = #copy<group bulk>}> : () -> ()
    copy.commit_group bulk
    // CHECK: copy.wait_group bulk 0 read_only
    // CHECK-GENERIC: "copy.wait_group"() <{group = #copy<group bulk>, pending = 0 : i32, read_only}> : () -> ()
    copy.wait_group bulk 0 read_only
    // CHECK: copy.wait_group bulk 1{{$}}
    copy.wait_group bulk 1
    // CHECK: copy.prefetch %{{.*}}[%{{.*}}, %{{.*}}] {box = array<i64: 64, 64>} : memref<4096x4096xf32>
    // CHECK-GENERIC: "copy.prefetch"(%{{.*}}, %{{.*}}, %{{.*}}) <{box = array<i64: 64, 64>}> : (memref<4096x4096xf32>, index, index) -> ()
    copy.prefetch %x[%c0, %i] {box = array<i64: 64, 64>} : memref<4096x4096xf32>
    // CHECK: copy.prefetch %{{.*}}[%{{.*}}, %{{.*}}] l2 evict_last {box = array<i64: 64, 64>} : memref<4096x4096xf32>
    // CHECK-GENERIC: "copy.prefetch"(%{{.*}}, %{{.*}}, %{{.*}}) <{l2 = #copy<l2 evict_last>, box = array<i64: 64, 64>}> : (memref<4096x4096xf32>, index, index) -> ()
    copy.prefetch %x[%c0, %i] l2 evict_last {box = array<i64: 64, 64>} : memref<4096x4096xf32>
    func.return
  }

  // CHECK-LABEL: func.func @multicast(
  func.func @multicast(%x: memref<1024x1024xbf16>) attributes {copy.cluster = array<i32: 2, 1, 1>, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<128x64xbf16, #copy.smem<swizzle = 128>>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // CHECK: copy.async_copy %{{.*}}[%{{.*}}, %{{.*}}] to %{{.*}} barrier %{{.*}}[%{{.*}}] {collective = array<i64: 0>} : memref<1024x1024xbf16> to memref<128x64xbf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    // CHECK-GENERIC: "copy.async_copy"(%{{.*}}) <{collective = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 2, 0, 1, 1, 0, 0>}>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {collective = array<i64: 0>} : memref<1024x1024xbf16> to memref<128x64xbf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    // Thread 0 alone arrives: phase 1 completes with no copy.
    %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // CHECK: copy.barrier_arrive %{{.*}} : !copy.barrier<1>
      // CHECK-GENERIC: "copy.barrier_arrive"(%{{.*}}) : (!copy.barrier<1>) -> ()
      copy.barrier_arrive %bar : !copy.barrier<1>
    }
    %p = arith.constant true
    copy.barrier_wait %bar[%c0], %p : !copy.barrier<1>
    // The next multicast writes the peer's %buf too: the peer must be done with its first
    // fill (the cluster's barrier orders every CTA's wait before any CTA's next load).
    copy.cluster_sync
    // One explicit expect_tx for a copy that does not arrive itself: 128 x 64 x 2 bytes (the
    // whole box, although each CTA of the pair issues half of it).
    // CHECK: copy.barrier_arrive_expect_tx %{{.*}}, 16384 : !copy.barrier<1>
    // CHECK-GENERIC: "copy.barrier_arrive_expect_tx"(%{{.*}}) <{bytes = 16384 : i64}> : (!copy.barrier<1>) -> ()
    copy.barrier_arrive_expect_tx %bar, 16384 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] {arrive = false, collective = array<i64: 0>} : memref<1024x1024xbf16> to memref<128x64xbf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.barrier_wait %bar, %false : !copy.barrier<1>
    func.return
  }
}

// -----

builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  // CHECK-LABEL: func.func @cp_async(
  func.func @cp_async(%x: memref<1000x256xf16>, %i: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %buf = copy.alloc_smem : memref<3x32x256xf16, #copy.smem>
    // CHECK: copy.async_copy %{{.*}}[%{{.*}}, %{{.*}}] to %{{.*}}[%{{.*}}] oob zeros cache cg : memref<1000x256xf16> to memref<3x32x256xf16, #copy.smem>
    // CHECK-GENERIC: "copy.async_copy"(%{{.*}}) <{oob = #copy<oob zeros>, cache = #copy<cache cg>, operandSegmentSizes = array<i32: 1, 1, 2, 1, 0, 0, 0, 0>}>
    copy.async_copy %x[%i, %i] to %buf[%c0] oob zeros cache cg : memref<1000x256xf16> to memref<3x32x256xf16, #copy.smem>
    // CHECK: copy.async_copy %{{.*}}[%{{.*}}, %{{.*}}] to %{{.*}}[%{{.*}}] impl cp_async oob promise_in_bounds cache ca
    copy.async_copy %x[%i, %i] to %buf[%c1] impl cp_async oob promise_in_bounds cache ca : memref<1000x256xf16> to memref<3x32x256xf16, #copy.smem>
    // CHECK: copy.commit_group cp_async
    // CHECK-GENERIC: "copy.commit_group"() <{group = #copy<group cp_async>}> : () -> ()
    copy.commit_group cp_async
    // CHECK: copy.wait_group cp_async 1
    // CHECK-GENERIC: "copy.wait_group"() <{group = #copy<group cp_async>, pending = 1 : i32}> : () -> ()
    copy.wait_group cp_async 1
    copy.wait_group cp_async 0
    func.return
  }
}

// -----

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  // CHECK-LABEL: func.func @leader_tracked(
  func.func @leader_tracked(%x: memref<512x512xf16>, %i: index) attributes {copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 128>>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // CHECK: copy.async_copy %{{.*}} to %{{.*}} barrier %{{.*}}[%{{.*}}] leader_tracked <partitioned 0> {collective = array<i64: 0>}
    // CHECK-GENERIC: leader_tracked = #copy.leader_tracked<partitioned 0>
    copy.async_copy %x[%c0, %i] to %buf barrier %bar[%c0] leader_tracked <partitioned 0> {collective = array<i64: 0>} : memref<512x512xf16> to memref<64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    // The leader's barrier counts both CTAs' boxes: the leader (the even CTA) waits on it,
    // the peer's own barrier gets no byte; the cluster's barrier then tells the peer its box
    // has landed.
    %false = arith.constant false
    %c2 = arith.constant 2 : index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    scf.if %leader {
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    }
    copy.cluster_sync
    // CHECK: copy.async_copy %{{.*}} to %{{.*}} barrier %{{.*}}[%{{.*}}] leader_tracked <replicated> {collective = array<i64: 0>}
    // CHECK-GENERIC: leader_tracked = #copy.leader_tracked<replicated>
    copy.async_copy %x[%c0, %i] to %buf barrier %bar[%c0] leader_tracked <replicated> {collective = array<i64: 0>} : memref<512x512xf16> to memref<64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    %true = arith.constant true
    scf.if %leader {
      copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
    }
    copy.cluster_sync
    func.return
  }

  // CHECK-LABEL: func.func @tmem(
  func.func @tmem(%col: index) {
    %commit_c0 = arith.constant 0 : index
    %commit_false = arith.constant false
    %commit_true = arith.constant true
    %commit_t = gpu.thread_id x
    %commit_leader = arith.cmpi eq, %commit_t, %commit_c0 : index
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    // CHECK: %[[ACC:.*]] = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    // CHECK-GENERIC: "copy.tmem_alloc"() : () -> memref<128x128xf32, #copy.tmem>
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    // CHECK: %[[V:.*]] = copy.tmem_load %[[ACC]][%{{.*}}] shape shape_32x32b num 4 : memref<128x128xf32, #copy.tmem> -> vector<4xf32>
    // CHECK-GENERIC: "copy.tmem_load"(%{{.*}}, %{{.*}}) <{shape = #copy<tmem_shape shape_32x32b>, num = 4 : i32}> : (memref<128x128xf32, #copy.tmem>, index) -> vector<4xf32>
    %v = copy.tmem_load %acc[%col] shape shape_32x32b num 4 : memref<128x128xf32, #copy.tmem> -> vector<4xf32>
    // CHECK: %{{.*}} = copy.tmem_load %[[ACC]][%{{.*}}] shape shape_16x32bx2 num 2 {offset = 16 : i64}
    %h = copy.tmem_load %acc[%col] shape shape_16x32bx2 num 2 {offset = 16 : i64} : memref<128x128xf32, #copy.tmem> -> vector<2xf32>
    // CHECK: copy.tmem_wait load
    // CHECK-GENERIC: "copy.tmem_wait"() <{kind = #copy<tmem_wait_kind load>}> : () -> ()
    copy.tmem_wait load
    // CHECK: copy.tmem_store %[[V]], %[[ACC]][%{{.*}}] shape shape_16x256b num 1 : vector<4xf32>, memref<128x128xf32, #copy.tmem>
    // CHECK-GENERIC: "copy.tmem_store"(%{{.*}}, %{{.*}}, %{{.*}}) <{shape = #copy<tmem_shape shape_16x256b>, num = 1 : i32}> : (vector<4xf32>, memref<128x128xf32, #copy.tmem>, index) -> ()
    copy.tmem_store %v, %acc[%col] shape shape_16x256b num 1 : vector<4xf32>, memref<128x128xf32, #copy.tmem>
    // CHECK: copy.tmem_wait store
    copy.tmem_wait store
    // Thread 0's tcgen05.cp below writes the columns every thread loaded and stored: the
    // block meets first, fenced on both sides (P14: nothing else orders it after the other
    // threads' accesses).
    nvvm.tcgen05.fence <before>
    gpu.barrier
    nvvm.tcgen05.fence <after>
    %tile = copy.alloc_smem : memref<128x8xf32, #copy.smem<swizzle = 32>>
    // CHECK: copy.smem_to_tmem %{{.*}} to %[[ACC]][%{{.*}}] shape shape_128x256b : memref<128x8xf32, #copy.smem<swizzle = 32>>, memref<128x128xf32, #copy.tmem>
    // CHECK-GENERIC: "copy.smem_to_tmem"(%{{.*}}, %{{.*}}, %{{.*}}) <{shape = #copy<tmem_copy_shape shape_128x256b>}> : (memref<128x8xf32, #copy.smem<swizzle = 32>>, memref<128x128xf32, #copy.tmem>, index) -> ()
    copy.smem_to_tmem %tile to %acc[%col] shape shape_128x256b : memref<128x8xf32, #copy.smem<swizzle = 32>>, memref<128x128xf32, #copy.tmem>
    // Two copies into the same columns are no tcgen05 pipeline (PTX ISA 9.7.16.6.2): the
    // second waits for the first's commit and fences (P14).
    scf.if %commit_leader {
      nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
    }
    copy.barrier_wait %done[%commit_c0], %commit_false : !copy.barrier<1>
    nvvm.tcgen05.fence <after>
    %rows = copy.alloc_smem : memref<32x4xf32, #copy.smem>
    // CHECK: copy.smem_to_tmem %{{.*}} to %[[ACC]][%{{.*}}] shape shape_32x128b multicast warpx4
    // CHECK-GENERIC: multicast = #copy<tmem_copy_multicast warpx4>
    copy.smem_to_tmem %rows to %acc[%col] shape shape_32x128b multicast warpx4 : memref<32x4xf32, #copy.smem>, memref<128x128xf32, #copy.tmem>
    // The copies read SMEM until the tcgen05.commit after them lands (P2, P7).
    scf.if %commit_leader {
      nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
    }
    copy.barrier_wait %done[%commit_c0], %commit_true : !copy.barrier<1>
    // CHECK: copy.tmem_dealloc %[[ACC]] : memref<128x128xf32, #copy.tmem>
    // CHECK-GENERIC: "copy.tmem_dealloc"(%{{.*}}) : (memref<128x128xf32, #copy.tmem>) -> ()
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}

// -----

// The fused load-reduce exists on sm_103a (ptxas rejects tcgen05.ld.red for sm_100a).
builtin.module attributes {copy.target = #copy.target<"sm_103a">} {
  // CHECK-LABEL: func.func @tmem_load_reduce(
  func.func @tmem_load_reduce(%col: index) {
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    // CHECK: %{{.*}}, %{{.*}} = copy.tmem_load %{{.*}}[%{{.*}}] shape shape_32x32b num 8 reduce max abs nan : memref<128x128xf32, #copy.tmem> -> vector<8xf32>, f32
    // CHECK-GENERIC: "copy.tmem_load"(%{{.*}}, %{{.*}}) <{shape = #copy<tmem_shape shape_32x32b>, num = 8 : i32, reduce = #copy<tmem_reduce max>, abs, nan}> : (memref<128x128xf32, #copy.tmem>, index) -> (vector<8xf32>, f32)
    %w, %m = copy.tmem_load %acc[%col] shape shape_32x32b num 8 reduce max abs nan : memref<128x128xf32, #copy.tmem> -> vector<8xf32>, f32
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}

// -----

// Bulk (non-tensor) copies: `impl bulk` asked for, and the lowering's own choice (no impl)
// for a plain in-bounds copy of whole rows; a multicast bulk load.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @bulk_copies(
  func.func @bulk_copies(%x: memref<64x256xf32>, %y: memref<64x256xf32>, %row: index) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<2x4x256xf32, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    // CHECK: copy.async_copy %{{.*}}[%{{.*}}, %{{.*}}] to %{{.*}}[%{{.*}}] barrier %{{.*}}[%{{.*}}] impl bulk oob promise_in_bounds l2 evict_first : memref<64x256xf32> to memref<2x4x256xf32, #copy.smem>, !copy.barrier<2>
    // CHECK-GENERIC: implementation = #copy<implementation bulk>
    copy.async_copy %x[%row, %c0] to %buf[%c0] barrier %bars[%c0] impl bulk oob promise_in_bounds l2 evict_first : memref<64x256xf32> to memref<2x4x256xf32, #copy.smem>, !copy.barrier<2>
    // CHECK: copy.async_copy %{{.*}}[%{{.*}}, %{{.*}}] to %{{.*}}[%{{.*}}] barrier %{{.*}}[%{{.*}}] impl bulk oob promise_in_bounds {collective = array<i64: 0>} : memref<64x256xf32> to memref<2x4x256xf32, #copy.smem>, !copy.barrier<2>
    copy.async_copy %x[%row, %c0] to %buf[%c1] barrier %bars[%c1] impl bulk oob promise_in_bounds {collective = array<i64: 0>} : memref<64x256xf32> to memref<2x4x256xf32, #copy.smem>, !copy.barrier<2>
    copy.barrier_wait %bars[%c0], %false : !copy.barrier<2>
    copy.barrier_wait %bars[%c1], %false : !copy.barrier<2>
    // CHECK: copy.async_copy %{{.*}}[%{{.*}}] to %{{.*}}[%{{.*}}, %{{.*}}] oob promise_in_bounds : memref<2x4x256xf32, #copy.smem> to memref<64x256xf32>
    copy.async_copy %buf[%c0] to %y[%row, %c0] oob promise_in_bounds : memref<2x4x256xf32, #copy.smem> to memref<64x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    // CHECK: copy.prefetch %{{.*}}[%{{.*}}, %{{.*}}] impl bulk l2 evict_last {box = array<i64: 4, 256>} : memref<64x256xf32>
    // CHECK-GENERIC: "copy.prefetch"(%{{.*}}, %{{.*}}, %{{.*}}) <{implementation = #copy<implementation bulk>, l2 = #copy<l2 evict_last>, box = array<i64: 4, 256>}>
    copy.prefetch %x[%row, %c0] impl bulk l2 evict_last {box = array<i64: 4, 256>} : memref<64x256xf32>
    func.return
  }
}

// -----

// Issue I, item 7: distributed shared memory inside a cluster (copy_dialect/dsmem.py). Every
// CTA of the pair runs this program: the peer expects the bytes on this CTA's barrier 0 and
// sends them (a st.async vector from each thread, a red.async add from each thread, one
// bulk copy), then arrives on barrier 1, and on barrier 2 relaxed.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @dsmem(
  // CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "dsmem"
  func.func @dsmem(%peer: index, %v: vector<4xf32>, %n: i32) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
    %rows = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %cnt = copy.alloc_smem : memref<128xi32, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<3>
    // 128 x 16 (st.async) + 128 x 4 (red.async) + 16384 (the bulk copy) bytes.
    // CHECK: copy.peer_arrive %{{.*}}[%{{.*}}] peer %{{.*}} expect_tx 18944 : !copy.barrier<3>
    // CHECK-GENERIC: "copy.peer_arrive"(%{{.*}}, %{{.*}}, %{{.*}}) <{expect_tx = 18944 : i64, operandSegmentSizes = array<i32: 1, 1, 1>}> : (!copy.barrier<3>, index, index) -> ()
    copy.peer_arrive %bars[%c0] peer %peer expect_tx 18944 : !copy.barrier<3>
    // CHECK: copy.peer_store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] peer %{{.*}}, %{{.*}}[%{{.*}}] : vector<4xf32>, memref<64x64xf32, #copy.smem>, !copy.barrier<3>
    // CHECK-GENERIC: "copy.peer_store"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 2, 1, 1, 1>}> : (vector<4xf32>, memref<64x64xf32, #copy.smem>, index, index, index, !copy.barrier<3>, index) -> ()
    copy.peer_store %v, %rows[%c0, %c0] peer %peer, %bars[%c0] : vector<4xf32>, memref<64x64xf32, #copy.smem>, !copy.barrier<3>
    // CHECK: copy.peer_store reduce add %{{.*}}, %{{.*}}[%{{.*}}] peer %{{.*}}, %{{.*}}[%{{.*}}] : i32, memref<128xi32, #copy.smem>, !copy.barrier<3>
    // CHECK-GENERIC: "copy.peer_store"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{reduction = #copy<reduction add>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1>}>
    copy.peer_store reduce add %n, %cnt[%c0] peer %peer, %bars[%c0] : i32, memref<128xi32, #copy.smem>, !copy.barrier<3>
    // CHECK: copy.peer_copy %{{.*}}[%{{.*}}] to %{{.*}}[%{{.*}}] peer %{{.*}}, %{{.*}}[%{{.*}}] : memref<2x64x64xf32, #copy.smem> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<3>
    // CHECK-GENERIC: "copy.peer_copy"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1>}> : (memref<2x64x64xf32, #copy.smem>, index, memref<2x64x64xf32, #copy.smem>, index, index, !copy.barrier<3>, index) -> ()
    copy.peer_copy %buf[%c0] to %buf[%c1] peer %peer, %bars[%c0] : memref<2x64x64xf32, #copy.smem> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<3>
    // CHECK: copy.peer_arrive %{{.*}}[%{{.*}}] peer %{{.*}} : !copy.barrier<3>
    // CHECK-GENERIC: "copy.peer_arrive"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (!copy.barrier<3>, index, index) -> ()
    copy.peer_arrive %bars[%c1] peer %peer : !copy.barrier<3>
    // CHECK: copy.peer_arrive %{{.*}}[%{{.*}}] peer %{{.*}} relaxed : !copy.barrier<3>
    // CHECK-GENERIC: "copy.peer_arrive"(%{{.*}}, %{{.*}}, %{{.*}}) <{relaxed, operandSegmentSizes = array<i32: 1, 1, 1>}> : (!copy.barrier<3>, index, index) -> ()
    copy.peer_arrive %bars[%c2] peer %peer relaxed : !copy.barrier<3>
    copy.barrier_wait %bars[%c0], %false : !copy.barrier<3>
    copy.barrier_wait %bars[%c1], %false : !copy.barrier<3>
    copy.barrier_wait %bars[%c2], %false : !copy.barrier<3>
    // The cluster's barrier: whole, then split into a relaxed arrive and a wait.
    // CHECK: copy.cluster_sync{{$}}
    // CHECK-GENERIC: "copy.cluster_sync"() : () -> ()
    copy.cluster_sync
    // CHECK: copy.cluster_sync arrive relaxed aligned
    // CHECK-GENERIC: "copy.cluster_sync"() <{arrive, relaxed, aligned}> : () -> ()
    copy.cluster_sync arrive relaxed aligned
    // CHECK: copy.cluster_sync wait aligned
    // CHECK-GENERIC: "copy.cluster_sync"() <{wait, aligned}> : () -> ()
    copy.cluster_sync wait aligned
    func.return
  }
}

// -----

// Issue I, item 5: TMA im2col loads (copy.im2col_load) over NWC, NHWC and NDHWC tensors, with
// a slot index, traversal strides, and arrive = false after an arrive_expect_tx of its bytes.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @im2col_loads(
  func.func @im2col_loads(%x3: memref<4x33x16xf32>, %x4: memref<2x9x9x64xf16>, %x5: memref<2x5x7x7x32xbf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %m1 = arith.constant -1 : index
    %t1 = arith.constant 1 : i16
    %t2 = arith.constant 2 : i16
    %phase = arith.constant false
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<3>
    %b3 = copy.alloc_smem : memref<64x16xf32, #copy.smem>
    // CHECK: copy.im2col_load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] offsets[%{{.*}}] to %{{.*}} barrier %{{.*}}[%{{.*}}] {lower = array<i64: -2>, upper = array<i64: 0>} : memref<4x33x16xf32> to memref<64x16xf32, #copy.smem>, !copy.barrier<3>
    // CHECK-GENERIC: "copy.im2col_load"(%{{.*}}) <{lower = array<i64: -2>, upper = array<i64: 0>, operandSegmentSizes = array<i32: 1, 3, 1, 1, 0, 1, 1>}> : (memref<4x33x16xf32>, index, index, index, i16, memref<64x16xf32, #copy.smem>, !copy.barrier<3>, index) -> ()
    copy.im2col_load %x3[%c0, %m1, %c0] offsets [%t1] to %b3 barrier %bars[%c0] {lower = array<i64: -2>, upper = array<i64: 0>} : memref<4x33x16xf32> to memref<64x16xf32, #copy.smem>, !copy.barrier<3>
    %b4 = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
    // CHECK: copy.im2col_load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] offsets[%{{.*}}, %{{.*}}] to %{{.*}}[%{{.*}}] barrier %{{.*}}[%{{.*}}] l2 evict_last {lower = array<i64: -1, -1>, upper = array<i64: -2, -2>, strides = array<i64: 2, 2>} : memref<2x9x9x64xf16> to memref<2x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<3>
    copy.im2col_load %x4[%c0, %m1, %m1, %c0] offsets [%t2, %t2] to %b4[%c1] barrier %bars[%c1] l2 evict_last {lower = array<i64: -1, -1>, upper = array<i64: -2, -2>, strides = array<i64: 2, 2>} : memref<2x9x9x64xf16> to memref<2x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<3>
    %b5 = copy.alloc_smem : memref<96x32xbf16, #copy.smem<swizzle = 64>>
    %c2 = arith.constant 2 : index
    // CHECK: copy.barrier_arrive_expect_tx %{{.*}}[%{{.*}}], 6144 : !copy.barrier<3>
    copy.barrier_arrive_expect_tx %bars[%c2], 6144 : !copy.barrier<3>
    // CHECK: copy.im2col_load %{{.*}} offsets[%{{.*}}, %{{.*}}, %{{.*}}] to %{{.*}} barrier %{{.*}}[%{{.*}}] {lower = array<i64: 0, -1, -1>, upper = array<i64: -1, -1, -1>, arrive = false} : memref<2x5x7x7x32xbf16> to memref<96x32xbf16, #copy.smem<swizzle = 64>>, !copy.barrier<3>
    copy.im2col_load %x5[%c0, %c0, %m1, %m1, %c0] offsets [%t1, %t1, %t2] to %b5 barrier %bars[%c2] {lower = array<i64: 0, -1, -1>, upper = array<i64: -1, -1, -1>, arrive = false} : memref<2x5x7x7x32xbf16> to memref<96x32xbf16, #copy.smem<swizzle = 64>>, !copy.barrier<3>
    copy.barrier_wait %bars[%c0], %phase : !copy.barrier<3>
    copy.barrier_wait %bars[%c1], %phase : !copy.barrier<3>
    copy.barrier_wait %bars[%c2], %phase : !copy.barrier<3>
    func.return
  }
}

// -----

// Issue I, item 5: a ring of 2 im2col slots over the 9 taps of a 3x3 filter, each tile stored
// once it has landed; a slot is reloaded only after the store from it has read it
// (wait_group bulk 1 read_only): the protocol analysis proves the kernel.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @im2col_ring(
  // CHECK: copy.im2col_load %{{.*}} offsets[%{{.*}}, %{{.*}}] to %{{.*}}[%{{.*}}] barrier
  func.func @im2col_ring(%x: memref<2x9x9x16xf16>, %y: memref<162x144xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c9 = arith.constant 9 : index
    %c16 = arith.constant 16 : index
    %m1 = arith.constant -1 : index
    %ring = copy.alloc_smem : memref<2x64x16xf16, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    scf.for %t = %c0 to %c9 step %c1 {
      %slot = arith.remui %t, %c2 : index
      %lap = arith.divui %t, %c2 : index
      %lap1 = arith.remui %lap, %c2 : index
      %lapi = arith.index_cast %lap1 : index to i32
      %parity = arith.trunci %lapi : i32 to i1
      %r = arith.divui %t, %c3 : index
      %s = arith.remui %t, %c3 : index
      %ri = arith.index_cast %r : index to i16
      %si = arith.index_cast %s : index to i16
      copy.im2col_load %x[%c0, %m1, %m1, %c0] offsets [%ri, %si] to %ring[%slot] barrier %full[%slot] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>} : memref<2x9x9x16xf16> to memref<2x64x16xf16, #copy.smem>, !copy.barrier<2>
      copy.barrier_wait %full[%slot], %parity : !copy.barrier<2>
      %col = arith.muli %t, %c16 : index
      copy.async_copy %ring[%slot] to %y[%c0, %col] : memref<2x64x16xf16, #copy.smem> to memref<162x144xf16>
      copy.commit_group bulk
      copy.wait_group bulk 1 read_only
    }
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// mbarrier breadth (issue I, item 8): nocomplete arrivals, arrive_drop with and without
// nocomplete and expect_tx, expect_tx and complete_tx without an arrival, inval and reinit.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @mbarrier_breadth(
  func.func @mbarrier_breadth() {
    %c0 = arith.constant 0 : index
    // CHECK: %[[B:.*]] = copy.barrier_init arrivals 4 : !copy.barrier<2>
    %bars = copy.barrier_init arrivals 4 : !copy.barrier<2>
    // CHECK: copy.barrier_arrive %[[B]][%{{.*}}] count 2 nocomplete issuer elected : !copy.barrier<2>
    // CHECK-GENERIC: "copy.barrier_arrive"(%{{.*}}, %{{.*}}) <{count = 2 : i32, nocomplete, issuer = #copy<issuer elected>}> : (!copy.barrier<2>, index) -> ()
    copy.barrier_arrive %bars[%c0] count 2 nocomplete issuer elected : !copy.barrier<2>
    // CHECK: copy.barrier_arrive_drop %[[B]][%{{.*}}] issuer warps : !copy.barrier<2>
    // CHECK-GENERIC: "copy.barrier_arrive_drop"(%{{.*}}, %{{.*}}) <{issuer = #copy<issuer warps>}> : (!copy.barrier<2>, index) -> ()
    copy.barrier_arrive_drop %bars[%c0] issuer warps : !copy.barrier<2>
    // CHECK: copy.barrier_arrive_drop %[[B]][%{{.*}}] count 3 : !copy.barrier<2>
    // CHECK-GENERIC: "copy.barrier_arrive_drop"(%{{.*}}, %{{.*}}) <{count = 3 : i32}> : (!copy.barrier<2>, index) -> ()
    copy.barrier_arrive_drop %bars[%c0] count 3 : !copy.barrier<2>
    // CHECK: copy.barrier_arrive_drop %[[B]][%{{.*}}] count 1 nocomplete issuer elected : !copy.barrier<2>
    // CHECK-GENERIC: "copy.barrier_arrive_drop"(%{{.*}}, %{{.*}}) <{count = 1 : i32, nocomplete, issuer = #copy<issuer elected>}> : (!copy.barrier<2>, index) -> ()
    copy.barrier_arrive_drop %bars[%c0] count 1 nocomplete issuer elected : !copy.barrier<2>
    // CHECK: copy.barrier_arrive_drop %[[B]][%{{.*}}] expect_tx 4096 issuer elected : !copy.barrier<2>
    // CHECK-GENERIC: "copy.barrier_arrive_drop"(%{{.*}}, %{{.*}}) <{expect_tx = 4096 : i64, issuer = #copy<issuer elected>}> : (!copy.barrier<2>, index) -> ()
    copy.barrier_arrive_drop %bars[%c0] expect_tx 4096 issuer elected : !copy.barrier<2>
    // CHECK: copy.barrier_expect_tx %[[B]][%{{.*}}], 512 : !copy.barrier<2>
    // CHECK-GENERIC: "copy.barrier_expect_tx"(%{{.*}}, %{{.*}}) <{bytes = 512 : i64}> : (!copy.barrier<2>, index) -> ()
    copy.barrier_expect_tx %bars[%c0], 512 : !copy.barrier<2>
    // CHECK: copy.barrier_complete_tx %[[B]][%{{.*}}], 4 : !copy.barrier<2>
    // CHECK-GENERIC: "copy.barrier_complete_tx"(%{{.*}}, %{{.*}}) <{bytes = 4 : i64}> : (!copy.barrier<2>, index) -> ()
    copy.barrier_complete_tx %bars[%c0], 4 : !copy.barrier<2>
    // CHECK: copy.barrier_complete_tx %[[B]][%{{.*}}], 128 issuer warps : !copy.barrier<2>
    // CHECK-GENERIC: "copy.barrier_complete_tx"(%{{.*}}, %{{.*}}) <{bytes = 128 : i64, issuer = #copy<issuer warps>}> : (!copy.barrier<2>, index) -> ()
    copy.barrier_complete_tx %bars[%c0], 128 issuer warps : !copy.barrier<2>
    // CHECK: copy.barrier_inval %[[B]] : !copy.barrier<2>
    // CHECK-GENERIC: "copy.barrier_inval"(%{{.*}}) : (!copy.barrier<2>) -> ()
    copy.barrier_inval %bars : !copy.barrier<2>
    // CHECK: copy.barrier_reinit %[[B]] arrivals 2 : !copy.barrier<2>
    // CHECK-GENERIC: "copy.barrier_reinit"(%{{.*}}) <{arrivals = 2 : i32}> : (!copy.barrier<2>) -> ()
    copy.barrier_reinit %bars arrivals 2 : !copy.barrier<2>
    func.return
  }
}

// -----

// Issue I, item 6: tensor maps in global memory rewritten in the kernel. The map of %x is
// a slot of a workspace the runtime fills; the kernel re-points it (address, a dim, a
// stride), releases and acquires it, and a load and a store issue through it.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @tensormap_update(
  func.func @tensormap_update(%x: memref<?x?xf32>, %pool: memref<4096xf32>, %off: index, %rows: i32, %pitch: i64) attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // CHECK: %[[M:.*]] = copy.tensormap_global %{{.*}} slot %{{.*}} of 4 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    // CHECK-GENERIC: "copy.tensormap_global"(%{{.*}}, %{{.*}}) <{slots = 4 : i64}> : (memref<?x?xf32>, index) -> !copy.tensormap<8x64xf32>
    %m = copy.tensormap_global %x slot %c0 of 4 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    // CHECK: copy.tensormap_replace %[[M]] global_address to %{{.*}}[%{{.*}}] : !copy.tensormap<8x64xf32>, memref<4096xf32>
    // CHECK-GENERIC: "copy.tensormap_replace"(%{{.*}}, %{{.*}}, %{{.*}}) <{field = #copy<tensormap_field global_address>}> : (!copy.tensormap<8x64xf32>, memref<4096xf32>, index) -> ()
    copy.tensormap_replace %m global_address to %pool[%off] : !copy.tensormap<8x64xf32>, memref<4096xf32>
    // CHECK: copy.tensormap_replace %[[M]] global_dim[0] to %{{.*}} : !copy.tensormap<8x64xf32>, i32
    // CHECK-GENERIC: "copy.tensormap_replace"(%{{.*}}, %{{.*}}) <{field = #copy<tensormap_field global_dim>, dim = 0 : i64}> : (!copy.tensormap<8x64xf32>, i32) -> ()
    copy.tensormap_replace %m global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32
    // CHECK: copy.tensormap_replace %[[M]] global_stride[0] to %{{.*}} : !copy.tensormap<8x64xf32>, i64
    copy.tensormap_replace %m global_stride[0] to %pitch : !copy.tensormap<8x64xf32>, i64
    // CHECK: copy.tensormap_fence_release %[[M]] : !copy.tensormap<8x64xf32>
    // CHECK-GENERIC: "copy.tensormap_fence_release"(%{{.*}}) : (!copy.tensormap<8x64xf32>) -> ()
    copy.tensormap_fence_release %m : !copy.tensormap<8x64xf32>
    // CHECK: copy.tensormap_fence_acquire %[[M]] : !copy.tensormap<8x64xf32>
    // CHECK-GENERIC: "copy.tensormap_fence_acquire"(%{{.*}}) : (!copy.tensormap<8x64xf32>) -> ()
    copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32>
    // CHECK: copy.async_copy %{{.*}}[%{{.*}}, %{{.*}}] to %{{.*}} barrier %{{.*}}[%{{.*}}] map(%[[M]] : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
    // CHECK-GENERIC: "copy.async_copy"(%{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 2, 0, 1, 1, 0, 1>}>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    func.return
  }
  // CHECK: func.func private @tensormap_types(!copy.tensormap<8x64xbf16, swizzle 128, oob nan>, !copy.tensormap<1x16xi8>)
  func.func private @tensormap_types(!copy.tensormap<8x64xbf16, swizzle 128, oob nan>, !copy.tensormap<1x16xi8>)
}

// -----

// L2 cache policies (issue I, item 3): evict_unchanged, fraction-based policies with a
// secondary priority, and the tensor map's L2 promotion, on copies and prefetches.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK-LABEL: func.func @l2_policies(
  func.func @l2_policies(%x: memref<4096x4096xf32>, %y: memref<4096x4096xf32>, %i: index) {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // CHECK: copy.async_copy %{{.*}}[%{{.*}}, %{{.*}}] to %{{.*}} barrier %{{.*}}[%{{.*}}] l2 evict_last fraction 5.000000e-01 secondary evict_first {l2_promotion = 256 : i64} : memref<4096x4096xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    // CHECK-GENERIC: "copy.async_copy"(%{{.*}}) <{l2 = #copy<l2 evict_last>, l2_fraction = 5.000000e-01 : f32, l2_secondary = #copy<l2 evict_first>, l2_promotion = 256 : i64, operandSegmentSizes = array<i32: 1, 1, 2, 0, 1, 1, 0, 0>}>
    copy.async_copy %x[%i, %c0] to %buf barrier %bar[%c0] l2 evict_last fraction 0.5 secondary evict_first {l2_promotion = 256 : i64} : memref<4096x4096xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    %phase = arith.constant false
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    // CHECK: copy.async_copy %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}] l2 evict_unchanged : memref<64x64xf32, #copy.smem> to memref<4096x4096xf32>
    // CHECK-GENERIC: "copy.async_copy"(%{{.*}}) <{l2 = #copy<l2 evict_unchanged>, operandSegmentSizes = array<i32: 1, 1, 0, 2, 0, 0, 0, 0>}>
    copy.async_copy %buf to %y[%i, %c0] l2 evict_unchanged : memref<64x64xf32, #copy.smem> to memref<4096x4096xf32>
    // CHECK: copy.prefetch %{{.*}}[%{{.*}}, %{{.*}}] l2 evict_first fraction 2.500000e-01 {box = array<i64: 64, 64>, l2_promotion = 0 : i64} : memref<4096x4096xf32>
    // CHECK-GENERIC: "copy.prefetch"(%{{.*}}, %{{.*}}, %{{.*}}) <{l2 = #copy<l2 evict_first>, l2_fraction = 2.500000e-01 : f32, box = array<i64: 64, 64>, l2_promotion = 0 : i64}> : (memref<4096x4096xf32>, index, index) -> ()
    copy.prefetch %y[%i, %c0] l2 evict_first fraction 0.25 {box = array<i64: 64, 64>, l2_promotion = 0 : i64} : memref<4096x4096xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// Assumptions (issue N, item 1): a lower bound, an upper bound, a range, a divisor, a range
// with a divisor, of index and integer values; a loop's induction variable in its body.
builtin.module {
  // CHECK-LABEL: func.func @assumptions(
  func.func @assumptions(%n: index, %k: index, %m: i32, %flag: i1) {
    // CHECK: copy.assume %{{.*}} ge 1 : index
    // CHECK-GENERIC: "copy.assume"(%{{.*}}) <{lower = 1 : i64}> : (index) -> ()
    copy.assume %n ge 1 : index
    // CHECK: copy.assume %{{.*}} le -1 : i32
    // CHECK-GENERIC: "copy.assume"(%{{.*}}) <{upper = -1 : i64}> : (i32) -> ()
    copy.assume %m le -1 : i32
    // CHECK: copy.assume %{{.*}} in [64, 4096] multiple_of 64 : index
    // CHECK-GENERIC: "copy.assume"(%{{.*}}) <{lower = 64 : i64, upper = 4096 : i64, divisor = 64 : i64}> : (index) -> ()
    copy.assume %k in [64, 4096] multiple_of 64 : index
    // CHECK: copy.assume %{{.*}} in [1, 1] : i1
    copy.assume %flag in [1, 1] : i1
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    scf.for %i = %c0 to %k step %c8 {
      // CHECK: copy.assume %{{.*}} multiple_of 8 : index
      // CHECK-GENERIC: "copy.assume"(%{{.*}}) <{divisor = 8 : i64}> : (index) -> ()
      copy.assume %i multiple_of 8 : index
    }
    func.return
  }
}
