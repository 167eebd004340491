// RUN: copy-opt %s -t ptx | filecheck %s

// `cta_group 2` through the whole pipeline to PTX (assembled for sm_100a, sm_100f and sm_103a
// by tests/passes/test_tmem_pair.py; never run: the project's GPU is an H200). Warp 0 of each
// CTA of the 2x1x1 cluster's pair allocates, relinquishes and frees with .cta_group::2; the
// even CTA's elected thread's tcgen05.cp of the scale tile (32x128b, multicast to the 4 warps)
// lands in both CTAs' TMEM, and its tcgen05.commit (multicast to both CTAs' mbarriers) tells
// each CTA when the copy is done.
// CHECK: .target sm_100a
// CHECK: tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32
// CHECK: tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned
// CHECK: tcgen05.cp.cta_group::2.32x128b.warpx4
// CHECK: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64
// CHECK: tcgen05.dealloc.cta_group::2.sync.aligned.b32
// CHECK-NOT: cta_group::1
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tmem_pair() attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %false = arith.constant false
    %both = arith.constant 3 : i16
    %b = gpu.block_id x
    %tid = gpu.thread_id x
    %rank = arith.remui %b, %c2 : index
    %even = arith.cmpi eq, %rank, %c0 : index
    %first = arith.cmpi eq, %tid, %c0 : index
    %t = copy.tmem_alloc cta_group 2 : memref<128x128xf8E8M0FNU, #copy.tmem>
    copy.tmem_relinquish cta_group 2
    %s = copy.alloc_smem : memref<32x16xf8E8M0FNU, #copy.smem>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    // The even CTA copies into the pair's TMEM and commits the copy to both CTAs' %done:
    // it reads SMEM and writes TMEM until then (P2, P7, P14).
    scf.if %even {
      copy.smem_to_tmem %s to %t[%c0] shape shape_32x128b multicast warpx4 cta_group 2 : memref<32x16xf8E8M0FNU, #copy.smem>, memref<128x128xf8E8M0FNU, #copy.tmem>
      scf.if %first {
        nvvm.tcgen05.commit %done_ptr, multicast_mask = %both {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
      }
    }
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    nvvm.tcgen05.fence <before>
    copy.cluster_sync
    copy.tmem_dealloc %t cta_group 2 : memref<128x128xf8E8M0FNU, #copy.tmem>
    func.return
  }
}
