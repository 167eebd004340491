// RUN: copy-opt %s -t ptx | filecheck %s

// TMEM data movement through the whole pipeline to PTX (assembled for sm_100a and sm_103a by
// tests/passes/test_tmem_moves.py; never run: the project's GPU is an H200): the elected
// thread copies a tile of UE8M0 scale factors (32x128b, multicast to the four warps' lane
// quarters) and shifts an accumulator's 32 bytes at column 8 one lane down, commits both to
// an mbarrier that every thread waits on, then the block frees its TMEM.
// CHECK: .target sm_100a
// CHECK: tcgen05.cp.cta_group::1.32x128b.warpx4
// CHECK: tcgen05.shift.cta_group::1.down
// CHECK: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// CHECK: tcgen05.fence::after_thread_sync
// CHECK: tcgen05.dealloc.cta_group::1.sync.aligned.b32
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @scales_and_shift() attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %ticks = arith.constant 1000000 : i32
    %t = gpu.thread_id x
    %leader = arith.cmpi eq, %t, %c0 : index
    %tile = copy.alloc_smem : memref<32x16xf8E8M0FNU, #copy.smem>
    %word = copy.alloc_smem : memref<1xi64, #copy.smem>
    %bar = builtin.unrealized_conversion_cast %word : memref<1xi64, #copy.smem> to !llvm.ptr<3>
    scf.if %leader {
      nvvm.mbarrier.init.shared %bar, %c1_i32 : !llvm.ptr<3>, i32
      nvvm.fence.mbarrier.init
    }
    copy.fence_async_shared
    %sfa = copy.tmem_alloc : memref<128x128xf8E8M0FNU, #copy.tmem>
    %acc = copy.tmem_alloc : memref<128x32xf32, #copy.tmem>
    copy.smem_to_tmem %tile to %sfa[%c0] shape shape_32x128b multicast warpx4 scales : memref<32x16xf8E8M0FNU, #copy.smem>, memref<128x128xf8E8M0FNU, #copy.tmem>
    copy.tmem_shift %acc[%c8] : memref<128x32xf32, #copy.tmem>
    scf.if %leader {
      nvvm.tcgen05.commit %bar : !llvm.ptr<3>
    }
    nvvm.mbarrier.try_wait.parity.shared %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32
    nvvm.tcgen05.fence <after>
    copy.tmem_dealloc %acc : memref<128x32xf32, #copy.tmem>
    copy.tmem_dealloc %sfa : memref<128x128xf8E8M0FNU, #copy.tmem>
    func.return
  }
}
