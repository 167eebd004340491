// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// copy.gather4, copy.scatter4 and copy.gather4_prefetch: each form in its custom syntax,
// printed back after a trip through the generic form (CHECK), and the generic form itself
// (CHECK-GENERIC). tests/dialect/test_gather4.py compiles and assembles every kernel here
// for each target it verifies for.

// Four rows of a bf16 array into one slot of a ring of two 4-row tiles, their bytes on the
// slot's barrier; the tile back to four other rows; a prefetch of four rows into L2.
// CHECK-LABEL: func.func @gather_scatter
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "gather_scatter"
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @gather_scatter(%x: memref<1024x256xbf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %tiles = copy.alloc_smem : memref<2x4x64xbf16, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    // CHECK: copy.gather4_prefetch %{{.*}} rows[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] column[%{{.*}}] l2 evict_last {width = 64 : i64} : memref<1024x256xbf16>
    // CHECK-GENERIC: "copy.gather4_prefetch"(%{{.*}}) <{l2 = #copy<l2 evict_last>, width = 64 : i64, operandSegmentSizes = array<i32: 1, 4, 1>}> : (memref<1024x256xbf16>, index, index, index, index, index) -> ()
    copy.gather4_prefetch %x rows [%r0, %r1, %r2, %r3] column [%c64] l2 evict_last {width = 64} : memref<1024x256xbf16>
    // CHECK: copy.gather4 %{{.*}} rows[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] column[%{{.*}}] to %{{.*}}[%{{.*}}] barrier %{{.*}}[%{{.*}}] : memref<1024x256xbf16> to memref<2x4x64xbf16, #copy.smem>, !copy.barrier<2>
    // CHECK-GENERIC: "copy.gather4"(%{{.*}}) <{operandSegmentSizes = array<i32: 1, 4, 1, 1, 1, 1, 1, 0, 0>}>
    copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tiles[%c1] barrier %bars[%c1] : memref<1024x256xbf16> to memref<2x4x64xbf16, #copy.smem>, !copy.barrier<2>
    copy.barrier_wait %bars[%c1], %phase : !copy.barrier<2>
    // CHECK: copy.scatter4 %{{.*}}[%{{.*}}] to %{{.*}} rows[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] column[%{{.*}}] l2 evict_first : memref<2x4x64xbf16, #copy.smem> to memref<1024x256xbf16>
    // CHECK-GENERIC: "copy.scatter4"(%{{.*}}) <{l2 = #copy<l2 evict_first>, operandSegmentSizes = array<i32: 1, 1, 1, 4, 1, 0>}>
    copy.scatter4 %tiles[%c1] to %x rows [%r3, %r2, %r1, %r0] column [%c0] l2 evict_first : memref<2x4x64xbf16, #copy.smem> to memref<1024x256xbf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// An f32 array through a 128-byte swizzled tile of 32 columns (one swizzle span), a load
// that leaves its arrival to the kernel (arrive = false), on sm_120a (gather4 into the
// CTA's own SMEM is there from sm_100 on; scatter4 is not).
// CHECK-LABEL: func.func @swizzled_arrive_false
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "swizzled_arrive_false"
builtin.module attributes {copy.target = #copy.target<"sm_120a">} {
  func.func @swizzled_arrive_false(%x: memref<512x96xf32>, %r: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c7 = arith.constant 7 : index
    %c32 = arith.constant 32 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<4x32xf32, #copy.smem<swizzle = 128>>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    // CHECK: copy.gather4 %{{.*}} rows[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] column[%{{.*}}] to %{{.*}} barrier %{{.*}}[%{{.*}}] {arrive = false} : memref<512x96xf32> to memref<4x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    // CHECK-GENERIC: "copy.gather4"(%{{.*}}) <{arrive = false, operandSegmentSizes = array<i32: 1, 4, 1, 1, 0, 1, 1, 0, 0>}>
    copy.gather4 %x rows [%r, %c7, %c0, %r] column [%c32] to %tile barrier %bar[%c0] {arrive = false} : memref<512x96xf32> to memref<4x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    func.return
  }
}

// -----

// CTA 0 of a cluster of 2 gathers four rows into the tile of both CTAs (multicast %both,
// bits 0 and 1), arriving on its own barrier expecting the tile's bytes; CTA 1 arms its
// barrier with the same bytes; each waits and stores its copy of the tile.
// CHECK-LABEL: func.func @gather4_multicast
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "gather4_multicast"
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @gather4_multicast(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %both = arith.constant 3 : i16
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    scf.if %leader {
      // CHECK: copy.gather4 %{{.*}} rows[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] column[%{{.*}}] to %{{.*}} barrier %{{.*}}[%{{.*}}] multicast %{{.*}} : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
      // CHECK-GENERIC: "copy.gather4"(%{{.*}}) <{operandSegmentSizes = array<i32: 1, 4, 1, 1, 0, 1, 1, 0, 1>}> : (memref<64x128xf16>, index, index, index, index, index, memref<4x64xf16, #copy.smem>, !copy.barrier<1>, index, i16) -> ()
      copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] multicast %both : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    } else {
      copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    }
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// A CTA pair's gather4 (leader_tracked, `.cta_group::2`): each CTA of a cluster of 2
// gathers its own four rows into its tile, both tiles' bytes on the leader's barrier; the
// leader waits and tells its peer (copy.peer_arrive on %done).
// CHECK-LABEL: func.func @gather4_pair
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "gather4_pair"
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @gather4_pair(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    // Each CTA gathers its own rows (the peer's shifted by one), both complete on the leader's barrier.
    %s0 = arith.addi %r0, %rank : index
    // CHECK: copy.gather4 %{{.*}} rows[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] column[%{{.*}}] to %{{.*}} barrier %{{.*}}[%{{.*}}] leader_tracked : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    // CHECK-GENERIC: "copy.gather4"(%{{.*}}) <{leader_tracked, operandSegmentSizes = array<i32: 1, 4, 1, 1, 0, 1, 1, 0, 0>}>
    copy.gather4 %x rows [%s0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] leader_tracked : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    scf.if %leader {
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
      copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    } else {
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    }
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
