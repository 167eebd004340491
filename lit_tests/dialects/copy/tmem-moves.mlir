// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// TMEM data movement: a block-scaled MMA's scale factors copied with `scales`
// (tcgen05.cp 32x128b.warpx4 of UE8M0 bytes, 64x128b.warpx2 of UE4M3 bytes) and
// `copy.tmem_shift` (tcgen05.shift.down: the 32 bytes at a column of each lane but the last
// move one lane down).
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  // CHECK-LABEL: func.func @scales_and_shift(
  func.func @scales_and_shift(%col: index) {
    %commit_c0 = arith.constant 0 : index
    %commit_false = arith.constant false
    %commit_t = gpu.thread_id x
    %commit_leader = arith.cmpi eq, %commit_t, %commit_c0 : index
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %sfa = copy.tmem_alloc : memref<128x128xf8E8M0FNU, #copy.tmem>
    %tile = copy.alloc_smem : memref<32x16xf8E8M0FNU, #copy.smem>
    // CHECK: copy.smem_to_tmem %{{.*}} to %{{.*}}[%{{.*}}] shape shape_32x128b multicast warpx4 scales : memref<32x16xf8E8M0FNU, #copy.smem>, memref<128x128xf8E8M0FNU, #copy.tmem>
    // CHECK-GENERIC: "copy.smem_to_tmem"(%{{.*}}, %{{.*}}, %{{.*}}) <{shape = #copy<tmem_copy_shape shape_32x128b>, multicast = #copy<tmem_copy_multicast warpx4>, scales}> : (memref<32x16xf8E8M0FNU, #copy.smem>, memref<128x128xf8E8M0FNU, #copy.tmem>, index) -> ()
    copy.smem_to_tmem %tile to %sfa[%col] shape shape_32x128b multicast warpx4 scales : memref<32x16xf8E8M0FNU, #copy.smem>, memref<128x128xf8E8M0FNU, #copy.tmem>
    %sfb = copy.tmem_alloc : memref<128x128xf8E4M3FN, #copy.tmem>
    %wide = copy.alloc_smem : memref<64x16xf8E4M3FN, #copy.smem>
    // CHECK: copy.smem_to_tmem %{{.*}} to %{{.*}}[%{{.*}}] shape shape_64x128b multicast warpx2_01_23 scales : memref<64x16xf8E4M3FN, #copy.smem>, memref<128x128xf8E4M3FN, #copy.tmem>
    copy.smem_to_tmem %wide to %sfb[%col] shape shape_64x128b multicast warpx2_01_23 scales : memref<64x16xf8E4M3FN, #copy.smem>, memref<128x128xf8E4M3FN, #copy.tmem>
    %acc = copy.tmem_alloc : memref<128x32xf32, #copy.tmem>
    // CHECK: copy.tmem_shift %{{.*}}[%{{.*}}] : memref<128x32xf32, #copy.tmem>
    // CHECK-GENERIC: "copy.tmem_shift"(%{{.*}}, %{{.*}}) : (memref<128x32xf32, #copy.tmem>, index) -> ()
    copy.tmem_shift %acc[%col] : memref<128x32xf32, #copy.tmem>
    // The copies read SMEM until the tcgen05.commit after them lands (P2, P7).
    scf.if %commit_leader {
      nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
    }
    copy.barrier_wait %done[%commit_c0], %commit_false : !copy.barrier<1>
    copy.tmem_dealloc %acc : memref<128x32xf32, #copy.tmem>
    copy.tmem_dealloc %sfb : memref<128x128xf8E4M3FN, #copy.tmem>
    copy.tmem_dealloc %sfa : memref<128x128xf8E8M0FNU, #copy.tmem>
    func.return
  }

  // A sparse MMA's metadata (i2, 2-bit indices of A's kept elements): 128 rows of 64 values,
  // one to each lane (tcgen05.cp 128x128b, 4 columns), as Mosaic's
  // async_copy_sparse_metadata_smem_to_tmem copies each 64 values of K.
  // CHECK-LABEL: func.func @sparse_metadata(
  func.func @sparse_metadata(%col: index) {
    %commit_c0 = arith.constant 0 : index
    %commit_false = arith.constant false
    %commit_t = gpu.thread_id x
    %commit_leader = arith.cmpi eq, %commit_t, %commit_c0 : index
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %meta = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
    %tile = copy.alloc_smem : memref<128x64xi2, #copy.smem>
    // CHECK: copy.smem_to_tmem %{{.*}} to %{{.*}}[%{{.*}}] shape shape_128x128b metadata : memref<128x64xi2, #copy.smem>, memref<128x512xi2, #copy.tmem>
    // CHECK-GENERIC: "copy.smem_to_tmem"(%{{.*}}, %{{.*}}, %{{.*}}) <{shape = #copy<tmem_copy_shape shape_128x128b>, metadata}> : (memref<128x64xi2, #copy.smem>, memref<128x512xi2, #copy.tmem>, index) -> ()
    copy.smem_to_tmem %tile to %meta[%col] shape shape_128x128b metadata : memref<128x64xi2, #copy.smem>, memref<128x512xi2, #copy.tmem>
    // The copies read SMEM until the tcgen05.commit after them lands (P2, P7).
    scf.if %commit_leader {
      nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
    }
    copy.barrier_wait %done[%commit_c0], %commit_false : !copy.barrier<1>
    copy.tmem_dealloc %meta : memref<128x512xi2, #copy.tmem>
    func.return
  }

  // The metadata of a ring's stage: the copy reads the slot %ring[%s] (the tile is the
  // dims after the index), as a CUTLASS-style pipeline copies each k-block's metadata.
  // CHECK-LABEL: func.func @metadata_of_a_ring_slot(
  func.func @metadata_of_a_ring_slot(%s: index) {
    %commit_c0 = arith.constant 0 : index
    %commit_false = arith.constant false
    %commit_t = gpu.thread_id x
    %commit_leader = arith.cmpi eq, %commit_t, %commit_c0 : index
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %meta = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
    %ring = copy.alloc_smem : memref<4x128x64xi2, #copy.smem>
    // CHECK: copy.smem_to_tmem %{{.*}}[%{{.*}}] to %{{.*}}[%{{.*}}] shape shape_128x128b metadata : memref<4x128x64xi2, #copy.smem>, memref<128x512xi2, #copy.tmem>
    // CHECK-GENERIC: "copy.smem_to_tmem"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{shape = #copy<tmem_copy_shape shape_128x128b>, metadata}> : (memref<4x128x64xi2, #copy.smem>, index, memref<128x512xi2, #copy.tmem>, index) -> ()
    copy.smem_to_tmem %ring[%s] to %meta[%commit_c0] shape shape_128x128b metadata : memref<4x128x64xi2, #copy.smem>, memref<128x512xi2, #copy.tmem>
    scf.if %commit_leader {
      nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
    }
    copy.barrier_wait %done[%commit_c0], %commit_false : !copy.barrier<1>
    copy.tmem_dealloc %meta : memref<128x512xi2, #copy.tmem>
    func.return
  }

  // CHECK-LABEL: func.func @pair_shift(
  func.func @pair_shift(%col: index) attributes {copy.cluster = array<i32: 2, 1, 1>} {
    %acc = copy.tmem_alloc cta_group 2 : memref<128x32xf32, #copy.tmem>
    // CHECK: copy.tmem_shift %{{.*}}[%{{.*}}] cta_group 2 : memref<128x32xf32, #copy.tmem>
    // CHECK-GENERIC: "copy.tmem_shift"(%{{.*}}, %{{.*}}) <{cta_group = 2 : i32}> : (memref<128x32xf32, #copy.tmem>, index) -> ()
    copy.tmem_shift %acc[%col] cta_group 2 : memref<128x32xf32, #copy.tmem>
    copy.tmem_dealloc %acc cta_group 2 : memref<128x32xf32, #copy.tmem>
    func.return
  }
}
