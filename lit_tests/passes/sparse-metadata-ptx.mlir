// RUN: copy-opt %s -t ptx | filecheck %s

// A sparse MMA's metadata through the whole pipeline to PTX (assembled for every tcgen05
// target and run under the interpreter by tests/interpreter/test_sparse_metadata.py; never
// run on a GPU: the project's is an H200): a bulk copy brings 128 rows of 64 i2 values
// (2 KiB) into an unswizzled SMEM tile, every thread waits for it, then the elected thread
// copies the tile into TMEM at column 4 (tcgen05.cp 128x128b: row r to lane r, 4 columns),
// commits the copy to an mbarrier every thread waits on, and the block frees its TMEM. The
// SMEM descriptor is unswizzled, Blackwell's version 1, its 8-row core matrices 128 bytes
// apart (bits 32-45: 8).
// CHECK: .target sm_100a
// CHECK: cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes
// CHECK: or.b64 {{.*}}, 70403104440320;
// CHECK-NEXT: tcgen05.cp.cta_group::1.128x128b
// CHECK: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// CHECK: tcgen05.dealloc.cta_group::1.sync.aligned.b32
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @sparse_metadata(%x: memref<128x64xi2>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %false = arith.constant false
    %t = gpu.thread_id x
    %leader = arith.cmpi eq, %t, %c0 : index
    %tile = copy.alloc_smem : memref<128x64xi2, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    copy.async_copy %x[%c0, %c0] to %tile barrier %full[%c0] impl bulk oob promise_in_bounds : memref<128x64xi2> to memref<128x64xi2, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
    %meta = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
    copy.smem_to_tmem %tile to %meta[%c4] shape shape_128x128b metadata : memref<128x64xi2, #copy.smem>, memref<128x512xi2, #copy.tmem>
    scf.if %leader {
      nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
    }
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    nvvm.tcgen05.fence <after>
    copy.tmem_dealloc %meta : memref<128x512xi2, #copy.tmem>
    func.return
  }
}
