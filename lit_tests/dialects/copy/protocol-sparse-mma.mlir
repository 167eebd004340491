// RUN: copy-opt %s --verify-diagnostics

// A structured-sparse MMA whose metadata another role writes into TMEM (sm_100a), proven by
// the protocol analysis with no finding: the epilogue warps (role 1) store the metadata, each
// thread its lane's 4 words (tcgen05.st 32x32b; warp w of the role reaches the lanes of its
// quarter, (w + 1) mod 4), wait for the stores, fence (nvvm.tcgen05.fence <before>) and
// arrive on %ready; the MMA warp (role 0) loads A's kept elements and B, waits on %ready,
// fences (<after>) and issues four tcgen05.mma.sp of 32 elements of K (the metadata column
// the pointer's plus the selector: 0, 1, then the slice 2 columns on), committing them to
// %done; the epilogue waits on %done, fences and loads its rows of D. The sparse MMA reads the
// metadata as an MMA reads an A in TMEM (P14, analysis/protocol/tmem_order.py);
// invalid-protocol-sparse-mma.mlir has this kernel without each fence, and
// tests/interpreter/test_sparse_mma.py runs both under the interpreter.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @sparse_handoff(%A: memref<128x64xf16>, %B: memref<64x128xf16>, %M: memref<128x4xi32>, %C: memref<128x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %true = arith.constant true
    %acc = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
    %meta = copy.tmem_alloc : memref<128x32xi32, #copy.tmem>
    %meta2 = copy.tmem_slice %meta[2] : memref<128x32xi32, #copy.tmem> -> memref<128x30xi32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 3 : !copy.barrier<1>
    %ready = copy.barrier_init arrivals 4 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %d = builtin.unrealized_conversion_cast %acc : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %mp0 = builtin.unrealized_conversion_cast %meta : memref<128x32xi32, #copy.tmem> to !llvm.ptr<6>
    %mp2 = builtin.unrealized_conversion_cast %meta2 : memref<128x30xi32, #copy.tmem> to !llvm.ptr<6>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %idesc0 = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 sparse selector 0 : i32
    %idesc1 = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 sparse selector 1 : i32
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %B[%c0, %c0] to %smem_b[%c0] barrier %full[%c0] : memref<64x128xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %B[%c0, %c64] to %smem_b[%c1] barrier %full[%c0] : memref<64x128xf16> to memref<2x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      copy.barrier_wait %ready[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %da = copy.matrix_descriptor %smem_a[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %db0 = copy.matrix_descriptor %smem_b[%c0] major k tcgen05 : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
      %db1 = copy.matrix_descriptor %smem_b[%c1] major k tcgen05 : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
      %lead = arith.cmpi eq, %t, %c0 : index
      scf.if %lead {
        %q2 = arith.constant 2 : i64
        %q4 = arith.constant 4 : i64
        %q6 = arith.constant 6 : i64
        nvvm.tcgen05.mma.sp %d, %da, %db0, %idesc0, %false, %mp0 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
        %da2 = arith.addi %da, %q2 : i64
        %db04 = arith.addi %db0, %q4 : i64
        nvvm.tcgen05.mma.sp %d, %da2, %db04, %idesc1, %true, %mp0 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
        %da4 = arith.addi %da, %q4 : i64
        nvvm.tcgen05.mma.sp %d, %da4, %db1, %idesc0, %true, %mp2 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
        %da6 = arith.addi %da, %q6 : i64
        %db14 = arith.addi %db1, %q4 : i64
        nvvm.tcgen05.mma.sp %d, %da6, %db14, %idesc1, %true, %mp2 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
        nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
      }
    }, {
    ^bb0(%t: index):
      // thread t of the role is in block warp 1 + t / 32, which reaches lanes 32 ((1 + t / 32) mod 4) on
      %w = arith.divui %t, %c32 : index
      %w1 = arith.addi %w, %c1 : index
      %q = arith.remui %w1, %c4 : index
      %base = arith.muli %q, %c32 : index
      %r = arith.remui %t, %c32 : index
      %lane = arith.addi %base, %r : index
      %words = vector.load %M[%lane, %c0] : memref<128x4xi32>, vector<4xi32>
      copy.tmem_store %words, %meta[%c0] shape shape_32x32b num 4 : vector<4xi32>, memref<128x32xi32, #copy.tmem>
      copy.tmem_wait store
      nvvm.tcgen05.fence <before>
      copy.barrier_arrive %ready[%c0] issuer warps : !copy.barrier<1>
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %v = copy.tmem_load %acc[%c0] shape shape_32x32b num 64 : memref<128x64xf32, #copy.tmem> -> vector<64xf32>
      copy.tmem_wait load
      vector.store %v, %C[%lane, %c0] : memref<128x64xf32>, vector<64xf32>
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %meta : memref<128x32xi32, #copy.tmem>
    copy.tmem_dealloc %acc : memref<128x64xf32, #copy.tmem>
    func.return
  }
}
