// RUN: copy-opt %s --split-input-file --verify-diagnostics

// Clusters of every shape the hardware launches, modelled CTA by CTA (analysis/protocol/
// cluster.py): a multicast ring whose rank is x + 2y + 4z in a 2x2x2 cluster, and one in the
// largest cluster, 16 CTAs (4x4, a non-portable size on sm_90 and sm_100). Each CTA's
// producer multicasts its share of an A tile along one dimension of the cluster; the
// consumers of every receiving CTA release the slot in the sender (an arrival each on its
// empty barrier), and the producer's load_tail waits for the last releases before the CTA
// returns. Both verify; their mistakes are in invalid-protocol-cluster.mlir.

// The CTAs of each z pair share an A tile (collective dim 2): each releases its slot in
// itself and in its z peer (rank ^ 4).
func.func @multicast_along_z_of_a_2x2x2_cluster(%A: memref<1024x512xf16>) attributes {gpu.known_block_size = array<i32: 256, 1, 1>, copy.cluster = array<i32: 2, 2, 2>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %true = arith.constant true
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
  %bz = "gpu.block_id"() <{dimension = #gpu<dim z>}> : () -> index
  %rx = arith.remui %bx, %c2 : index
  %ry = arith.remui %by, %c2 : index
  %rz = arith.remui %bz, %c2 : index
  %ry2 = arith.muli %ry, %c2 : index
  %rz4 = arith.muli %rz, %c4 : index
  %rxy = arith.addi %rx, %ry2 : index
  %rank = arith.addi %rxy, %rz4 : index
  %z_peer = arith.xori %rank, %c4 : index
  %y_peer = arith.xori %rank, %c2 : index
  %m0 = arith.muli %by, %c128 : index
  %smem = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  %empty = copy.barrier_init arrivals 2 : !copy.barrier<2>
  copy.warp_specialize warps [4, 4] {
  ^bb0(%t: index):
    %warp = arith.divui %t, %c32 : index
    %is_dma = arith.cmpi eq, %warp, %c0 : index
    scf.if %is_dma {
      scf.for %k = %c0 to %c8 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
        copy.barrier_arrive_expect_tx %full[%s], 16384 : !copy.barrier<2>
        %k0 = arith.muli %k, %c64 : index
        copy.async_copy %A[%m0, %k0] to %smem[%s] barrier %full[%s] {arrive = false, collective = array<i64: 2>} : memref<1024x512xf16> to memref<2x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
      }
      // load_tail: every peer has released every slot before this CTA returns
      scf.for %k = %c8 to %c10 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
      }
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %c8 step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lp = arith.remui %lap, %c2 : index
      %phase = arith.cmpi ne, %lp, %c0 : index
      copy.barrier_wait %full[%s], %phase : !copy.barrier<2>
      %v = memref.load %smem[%s, %t, %c0] : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
      copy.named_barrier_sync 3, 128
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
      copy.peer_arrive %empty[%s] peer %z_peer : !copy.barrier<2>
    }
  }
  func.return
}

// -----

// The 4 CTAs of each cluster row share an A tile (collective dim 0): each releases its slot
// in itself and in its three x peers (rank ^ 1, ^ 2, ^ 3), so the empty barrier counts 4.
func.func @multicast_along_x_of_a_4x4_cluster_of_16(%A: memref<1024x512xf16>) attributes {gpu.known_block_size = array<i32: 256, 1, 1>, copy.cluster = array<i32: 4, 4, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %true = arith.constant true
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
  %bz = "gpu.block_id"() <{dimension = #gpu<dim z>}> : () -> index
  %rx = arith.remui %bx, %c4 : index
  %ry = arith.remui %by, %c4 : index
  %ry4 = arith.muli %ry, %c4 : index
  %rank = arith.addi %rx, %ry4 : index
  %x_peer1 = arith.xori %rank, %c1 : index
  %x_peer2 = arith.xori %rank, %c2 : index
  %x_peer3 = arith.xori %rank, %c3 : index
  %m0 = arith.muli %by, %c128 : index
  %smem = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
  %empty = copy.barrier_init arrivals 4 : !copy.barrier<2>
  copy.warp_specialize warps [4, 4] {
  ^bb0(%t: index):
    %warp = arith.divui %t, %c32 : index
    %is_dma = arith.cmpi eq, %warp, %c0 : index
    scf.if %is_dma {
      scf.for %k = %c0 to %c8 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
        copy.barrier_arrive_expect_tx %full[%s], 16384 : !copy.barrier<2>
        %k0 = arith.muli %k, %c64 : index
        copy.async_copy %A[%m0, %k0] to %smem[%s] barrier %full[%s] {arrive = false, collective = array<i64: 0>} : memref<1024x512xf16> to memref<2x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<2>
      }
      // load_tail: every peer has released every slot before this CTA returns
      scf.for %k = %c8 to %c10 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        %acquire = arith.xori %phase, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
      }
    }
  }, {
  ^bb0(%t: index):
    scf.for %k = %c0 to %c8 step %c1 {
      %s = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lp = arith.remui %lap, %c2 : index
      %phase = arith.cmpi ne, %lp, %c0 : index
      copy.barrier_wait %full[%s], %phase : !copy.barrier<2>
      %v = memref.load %smem[%s, %t, %c0] : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
      copy.named_barrier_sync 3, 128
      copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
      copy.peer_arrive %empty[%s] peer %x_peer1 : !copy.barrier<2>
      copy.peer_arrive %empty[%s] peer %x_peer2 : !copy.barrier<2>
      copy.peer_arrive %empty[%s] peer %x_peer3 : !copy.barrier<2>
    }
  }
  func.return
}
