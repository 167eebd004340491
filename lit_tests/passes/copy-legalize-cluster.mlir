// copy-legalize on a kernel whose CTAs write each other's SMEM (DSMEM): a target without
// clusters runs each cluster as one block, each CTA of the cluster a role of it
// (passes/legalize_cluster.py). Every buffer and barrier group is taken once per rank; role
// r runs the body as CTA r (its block id is the cluster's first block's plus r; the other
// blocks of the cluster return); a peer write goes to the peer rank's buffer, and the bytes
// it completed on the peer's barrier become one arrival of the role's elected thread once
// the role has met at its barrier; the receiver's arrive_expect_tx becomes a plain arrival.
// copy-opt verifies the result after the pass (the protocol analysis included).
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_80}' | filecheck %s
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_86}' | filecheck %s
// In the PTX, no cluster instruction is left; a reduction into the peer's SMEM is red.shared.
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_80},lower-copy-to-llvm' -t ptx | filecheck %s --check-prefix=PTX

// A pair exchanges tiles by st.async, the peer `rank ^ 1`: rank 0 stores into rank 1's
// %recv and arrives on rank 1's %full after the loop, and the other way round.
// CHECK-LABEL: func.func @exchange_by_st_async
// CHECK-SAME: gpu.known_block_size = array<i32: 256, 1, 1>
// CHECK-NOT: copy.cluster
// CHECK: %mine = copy.alloc_smem
// CHECK-NEXT: %recv = copy.alloc_smem
// CHECK-NEXT: %loaded = copy.barrier_init arrivals 128
// CHECK-NEXT: %full = copy.barrier_init arrivals 2
// CHECK-NEXT: %mine_1 = copy.alloc_smem
// CHECK-NEXT: %recv_1 = copy.alloc_smem
// CHECK-NEXT: %loaded_1 = copy.barrier_init arrivals 128
// CHECK-NEXT: %full_1 = copy.barrier_init arrivals 2
// CHECK-NEXT: copy.warp_specialize warps [4, 4] {
// CHECK-NEXT: ^bb0(%tid: index):
// CHECK-NEXT: %[[BX:.*]] = gpu.block_id x
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[R:.*]] = arith.remui %[[BX]], %[[C2]] : index
// CHECK-NEXT: %[[LEAD:.*]] = arith.cmpi eq, %[[R]], %[[C0]] : index
// CHECK-NEXT: scf.if %[[LEAD]] {
// CHECK: copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] impl cp_async oob zeros
// CHECK: copy.barrier_arrive %full[%c0] issuer elected
// CHECK: scf.for
// CHECK: vector.store %v, %recv_1[%r, %c]
// CHECK: }
// CHECK-NEXT: copy.wait_group cp_async 0
// CHECK-NEXT: copy.barrier_arrive %full_1[%c0] issuer elected
// CHECK-NEXT: copy.barrier_wait %full[%c0], %false
// CHECK: ^bb0(%tid_1: index):
// CHECK: %false_1 = arith.constant false
// CHECK-NEXT: %[[BX1:.*]] = gpu.block_id x
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %bx_1 = arith.addi %[[BX1]], %[[ONE]] : index
// CHECK: copy.async_copy %x[%c0_1, %col_1] to %mine_1 barrier %loaded_1
// CHECK: vector.store %v_1, %recv[%r_1, %c_1]
// CHECK: copy.barrier_arrive %full[%c0_1] issuer elected
// CHECK-NEXT: copy.barrier_wait %full_1[%c0_1], %false_1
// PTX-LABEL: .entry exchange_by_st_async
// PTX-NOT: cluster
// PTX: .reqntid 256, 1, 1
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
func.func @exchange_by_st_async(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %col = arith.muli %bx, %c16 : index
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %mine = copy.alloc_smem : memref<64x16xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x16xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x16xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 4096 : !copy.barrier<1>
  scf.for %k = %c0 to %c2 step %c1 {
    %step = arith.muli %k, %c128 : index
    %e = arith.addi %tid, %step : index
    %r = arith.divui %e, %c4 : index
    %q = arith.remui %e, %c4 : index
    %c = arith.muli %q, %c4 : index
    %v = vector.load %mine[%r, %c] : memref<64x16xf32, #copy.smem>, vector<4xf32>
    copy.peer_store %v, %recv[%r, %c] peer %peer, %full[%c0] : vector<4xf32>, memref<64x16xf32, #copy.smem>, !copy.barrier<1>
  }
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  copy.fence_async_shared
  copy.async_copy %recv to %y[%c0, %col] : memref<64x16xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}
}

// -----

// A ring of 4 reduces by red.async: rank r adds into rank (r + 1) % 4's %acc once that rank
// has said (an arrival on rank r's %ready) that its copy has landed; the folded adds are
// thread atomics into the peer rank's buffer (red.shared), one rank's %full counting the
// sender's arrival besides its own.
// CHECK-LABEL: func.func @ring_reduce_by_red_async
// CHECK-SAME: gpu.known_block_size = array<i32: 512, 1, 1>
// CHECK: %full = copy.barrier_init arrivals 2
// CHECK: copy.warp_specialize warps [4, 4, 4, 4] {
// CHECK: copy.barrier_arrive %ready_3[%c0] issuer elected
// CHECK: "memref.atomic_rmw"(%v, %acc_1, %r, %c) <{kind = 1 : i64}>
// CHECK-NEXT: copy.wait_group cp_async 0
// CHECK-NEXT: copy.barrier_arrive %full_1[%c0] issuer elected
// CHECK: "memref.atomic_rmw"(%v_3, %acc, %r_3, %c_3) <{kind = 1 : i64}>
// CHECK-NEXT: copy.wait_group cp_async 0
// CHECK-NEXT: copy.barrier_arrive %full[%c0_3] issuer elected
// PTX-LABEL: .entry ring_reduce_by_red_async
// PTX-NOT: cluster
// PTX-NOT: red.async
// PTX: red.shared.add.u32
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
func.func @ring_reduce_by_red_async(%x: memref<256x256xi32>, %y: memref<256x256xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 4, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c4 : index
  %next = arith.addi %rank, %c1 : index
  %peer = arith.remui %next, %c4 : index
  %prev = arith.addi %rank, %c3 : index
  %source = arith.remui %prev, %c4 : index
  %col = arith.muli %bx, %c16 : index
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %mine = copy.alloc_smem : memref<8x16xi32, #copy.smem>
  %acc = copy.alloc_smem : memref<8x16xi32, #copy.smem>
  %loaded = copy.barrier_init arrivals 2 : !copy.barrier<1>
  %ready = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xi32> to memref<8x16xi32, #copy.smem>, !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %acc barrier %loaded[%c0] : memref<256x256xi32> to memref<8x16xi32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  copy.peer_arrive %ready[%c0] peer %source : !copy.barrier<1>
  copy.barrier_wait %ready[%c0], %false : !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 512 : !copy.barrier<1>
  %r = arith.divui %tid, %c16 : index
  %c = arith.remui %tid, %c16 : index
  %v = memref.load %mine[%r, %c] : memref<8x16xi32, #copy.smem>
  copy.peer_store reduce add %v, %acc[%r, %c] peer %peer, %full[%c0] : i32, memref<8x16xi32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  copy.fence_async_shared
  copy.async_copy %acc to %y[%c0, %col] : memref<8x16xi32, #copy.smem> to memref<256x256xi32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}
}

// -----

// A pair exchanges tiles by one bulk SMEM -> SMEM copy: the folded copy is the role's
// threads moving 16 bytes at a time into the peer rank's buffer.
// CHECK-LABEL: func.func @exchange_by_bulk_copy
// CHECK: copy.warp_specialize warps [4, 4] {
// CHECK: ^bb0(%[[T:.*]]: index):
// CHECK: scf.for %{{.*}} = %[[T]] to %{{.*}} step %{{.*}} {
// CHECK: vector.load %mine[
// CHECK-NEXT: vector.store %{{.*}}, %recv_1[
// CHECK: copy.wait_group cp_async 0
// CHECK-NEXT: copy.barrier_arrive %full_1[%c0] issuer elected
// PTX-LABEL: .entry exchange_by_bulk_copy
// PTX-NOT: cluster
// PTX-NOT: cp.async.bulk
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
func.func @exchange_by_bulk_copy(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %col = arith.muli %bx, %c64 : index
  %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 16384 : !copy.barrier<1>
  copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
  copy.async_copy %recv to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
  func.return
}
}

// -----
// The bulk exchange ended by the cluster's barrier instead of the receiver's arrival (the
// sender's source outlives the copy): in the folded block the cluster's CTAs are the roles,
// and the cluster barrier is named barrier 3 of all 256 threads (the roles take 1 and 2).
// CHECK-LABEL: func.func @exchange_then_every_cta_meets
// CHECK: copy.warp_specialize warps [4, 4] {
// CHECK: copy.named_barrier_sync 3, 256
// CHECK: copy.named_barrier_sync 3, 256
// CHECK-NOT: copy.cluster_sync
// PTX-LABEL: .entry exchange_then_every_cta_meets
// PTX-NOT: cluster
// PTX: barrier.sync 3, 256;
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
func.func @exchange_then_every_cta_meets(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %col = arith.muli %bx, %c64 : index
  %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 16384 : !copy.barrier<1>
  copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  copy.async_copy %recv to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  copy.cluster_sync
  func.return
}
}

// -----

// A cluster along y (1 x 2): the blocks whose y is a multiple of 2 run the cluster, and role
// 1's block id y is the first block's + 1.
// CHECK-LABEL: func.func @exchange_along_y
// CHECK: copy.warp_specialize warps [4, 4] {
// CHECK-NEXT: ^bb0(%tid: index):
// CHECK-NEXT: %[[BY:.*]] = gpu.block_id y
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[R:.*]] = arith.remui %[[BY]], %[[C2]] : index
// CHECK-NEXT: %[[LEAD:.*]] = arith.cmpi eq, %[[R]], %[[C0]] : index
// CHECK-NEXT: scf.if %[[LEAD]] {
// CHECK: ^bb0(%tid_1: index):
// CHECK: %false_1 = arith.constant false
// CHECK-NEXT: %[[BY1:.*]] = gpu.block_id y
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %bx_1 = arith.addi %[[BY1]], %[[ONE]] : index
// CHECK: vector.store %v_1, %recv[%r_1, %c_1]
// PTX-LABEL: .entry exchange_along_y
// PTX-NOT: cluster
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
func.func @exchange_along_y(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 1, 2, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %col = arith.muli %bx, %c16 : index
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %mine = copy.alloc_smem : memref<64x16xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x16xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x16xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 4096 : !copy.barrier<1>
  scf.for %k = %c0 to %c2 step %c1 {
    %step = arith.muli %k, %c128 : index
    %e = arith.addi %tid, %step : index
    %r = arith.divui %e, %c4 : index
    %q = arith.remui %e, %c4 : index
    %c = arith.muli %q, %c4 : index
    %v = vector.load %mine[%r, %c] : memref<64x16xf32, #copy.smem>, vector<4xf32>
    copy.peer_store %v, %recv[%r, %c] peer %peer, %full[%c0] : vector<4xf32>, memref<64x16xf32, #copy.smem>, !copy.barrier<1>
  }
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  copy.fence_async_shared
  copy.async_copy %recv to %y[%c0, %col] : memref<64x16xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}
}

// -----

// Two phases of a pair's exchange in one loop: the sender's arrival goes after the loop over
// the tile's pieces, inside the loop over phases (which also waits), once per phase.
// CHECK-LABEL: func.func @exchange_twice
// CHECK: scf.for %it = %c0 to %c2 step %c1 {
// CHECK: copy.barrier_arrive %full[%c0] issuer elected
// CHECK-NEXT: scf.for %k = %c0 to %c2 step %c1 {
// CHECK: vector.store %v, %recv_1[%r, %c]
// CHECK-NEXT: }
// CHECK-NEXT: copy.wait_group cp_async 0
// CHECK-NEXT: copy.barrier_arrive %full_1[%c0] issuer elected
// CHECK-NEXT: copy.barrier_wait %full[%c0], %p
// CHECK: copy.barrier_arrive %done_1[%c0] issuer elected
// CHECK-NEXT: copy.barrier_wait %done[%c0], %p
// PTX-LABEL: .entry exchange_twice
// PTX-NOT: cluster
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
func.func @exchange_twice(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %col = arith.muli %bx, %c16 : index
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %mine = copy.alloc_smem : memref<64x16xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x16xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
  scf.for %it = %c0 to %c2 step %c1 {
    %odd = arith.remui %it, %c2 : index
    %p = arith.index_cast %odd : index to i1
    %row = arith.muli %it, %c64 : index
    copy.async_copy %x[%row, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x16xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %loaded[%c0], %p : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %full[%c0], 4096 : !copy.barrier<1>
    scf.for %k = %c0 to %c2 step %c1 {
      %step = arith.muli %k, %c128 : index
      %e = arith.addi %tid, %step : index
      %r = arith.divui %e, %c4 : index
      %q = arith.remui %e, %c4 : index
      %c = arith.muli %q, %c4 : index
      %v = vector.load %mine[%r, %c] : memref<64x16xf32, #copy.smem>, vector<4xf32>
      copy.peer_store %v, %recv[%r, %c] peer %peer, %full[%c0] : vector<4xf32>, memref<64x16xf32, #copy.smem>, !copy.barrier<1>
    }
    copy.barrier_wait %full[%c0], %p : !copy.barrier<1>
    copy.fence_async_shared
    copy.async_copy %recv to %y[%row, %col] : memref<64x16xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    copy.barrier_wait %done[%c0], %p : !copy.barrier<1>
  }
  func.return
}
}
