// RUN: copy-opt %s --split-input-file --verify-diagnostics

// TMEM kernels the protocol analysis proves, on tcgen05.shift and TMEM slices
// (analysis/protocol/tmem_order.py, tmem.py): a shift between warp-specialized roles, handed
// over through fenced syncs and completed by a tcgen05.commit as a tcgen05.cp is; two
// accumulators as slices of one allocation, each MMA committed to its own barrier and read
// after it (accesses keyed by allocation and the slice's columns); an MMA into one slice whose
// issuer does not fence after a hand-off of the other slice (disjoint columns: nothing to
// order); a store through one slice and a load of a disjoint one before the store's wait
// (P12 keyed by columns); the block's thread 0 shifting what the block stored, committed, the
// block's warps reading after the commit's wait (the proof's two classes of the block).
// invalid-protocol-tmem-views.mlir removes one op from each to make
// each finding; tests/interpreter/test_tmem_views_order.py runs them all.

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @role_shift(%x: memref<128x32xi32>, %y: memref<128x32xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %false = arith.constant false
    %ready = copy.barrier_init arrivals 4 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %acc = copy.tmem_alloc : memref<128x32xi32, #copy.tmem>
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      %lead = arith.cmpi eq, %t, %c0 : index
      copy.barrier_wait %ready[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      copy.tmem_shift %acc[%c8] : memref<128x32xi32, #copy.tmem>
      scf.if %lead {
        nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
      }
    }, {
    ^bb0(%t: index):
      %v = vector.load %x[%t, %c0] : memref<128x32xi32>, vector<32xi32>
      copy.tmem_store %v, %acc[%c0] shape shape_32x32b num 32 : vector<32xi32>, memref<128x32xi32, #copy.tmem>
      copy.tmem_wait store
      nvvm.tcgen05.fence <before>
      copy.barrier_arrive %ready[%c0] issuer warps : !copy.barrier<1>
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 32 : memref<128x32xi32, #copy.tmem> -> vector<32xi32>
      copy.tmem_wait load
      vector.store %w, %y[%t, %c0] : memref<128x32xi32>, vector<32xi32>
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %acc : memref<128x32xi32, #copy.tmem>
    func.return
  }
}

// -----

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @two_accumulators(%A: memref<128x64xf16>, %B: memref<128x64xf16>, %C: memref<128x16xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %false = arith.constant false
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %acc0 = copy.tmem_slice %acc[0] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %acc1 = copy.tmem_slice %acc[64] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<1>
    %done0 = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done1 = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %d0 = builtin.unrealized_conversion_cast %acc0 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %d1 = builtin.unrealized_conversion_cast %acc1 : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %done0_ptr = builtin.unrealized_conversion_cast %done0 : !copy.barrier<1> to !llvm.ptr<3>
    %done1_ptr = builtin.unrealized_conversion_cast %done1 : !copy.barrier<1> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 : i32
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %B[%c0, %c0] to %smem_b[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      %da = copy.matrix_descriptor %smem_a[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %db = copy.matrix_descriptor %smem_b[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %lead = arith.cmpi eq, %t, %c0 : index
      scf.if %lead {
        nvvm.tcgen05.mma %d0, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        nvvm.tcgen05.commit %done0_ptr : !llvm.ptr<3>
        nvvm.tcgen05.mma %d1, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        nvvm.tcgen05.commit %done1_ptr : !llvm.ptr<3>
      }
    }, {
    ^bb0(%t: index):
      copy.barrier_wait %done0[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %v0 = copy.tmem_load %acc0[%c0] shape shape_32x32b num 8 : memref<128x64xf32, #copy.tmem> -> vector<8xf32>
      copy.tmem_wait load
      vector.store %v0, %C[%t, %c0] : memref<128x16xf32>, vector<8xf32>
      copy.barrier_wait %done1[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %v1 = copy.tmem_load %acc1[%c0] shape shape_32x32b num 8 : memref<128x64xf32, #copy.tmem> -> vector<8xf32>
      copy.tmem_wait load
      vector.store %v1, %C[%t, %c8] : memref<128x16xf32>, vector<8xf32>
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}

// -----

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @disjoint_handoff(%A: memref<128x64xf16>, %B: memref<128x64xf16>, %C: memref<128x8xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %bias = copy.tmem_slice %acc[0] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %out = copy.tmem_slice %acc[64] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %smem_a = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<1x128x64xf16, #copy.smem<swizzle = 128>>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<1>
    %ready = copy.barrier_init arrivals 4 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %d = builtin.unrealized_conversion_cast %out : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 : i32
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      copy.async_copy %A[%c0, %c0] to %smem_a[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.async_copy %B[%c0, %c0] to %smem_b[%c0] barrier %full[%c0] : memref<128x64xf16> to memref<1x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      copy.barrier_wait %ready[%c0], %false : !copy.barrier<1>
      %da = copy.matrix_descriptor %smem_a[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %db = copy.matrix_descriptor %smem_b[%c0] major k tcgen05 : memref<1x128x64xf16, #copy.smem<swizzle = 128>> -> i64
      %lead = arith.cmpi eq, %t, %c0 : index
      scf.if %lead {
        nvvm.tcgen05.mma %d, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
      }
    }, {
    ^bb0(%t: index):
      %f1 = arith.constant 1.0 : f32
      %one = vector.broadcast %f1 : f32 to vector<8xf32>
      copy.tmem_store %one, %bias[%c0] shape shape_32x32b num 8 : vector<8xf32>, memref<128x64xf32, #copy.tmem>
      copy.tmem_wait store
      nvvm.tcgen05.fence <before>
      copy.barrier_arrive %ready[%c0] issuer warps : !copy.barrier<1>
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      %v = copy.tmem_load %out[%c0] shape shape_32x32b num 8 : memref<128x64xf32, #copy.tmem> -> vector<8xf32>
      copy.tmem_wait load
      vector.store %v, %C[%t, %c0] : memref<128x8xf32>, vector<8xf32>
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}

// -----

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @disjoint_store_load(%x: memref<128x32xi32>, %y: memref<128x32xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %acc = copy.tmem_alloc : memref<128x64xi32, #copy.tmem>
    %lo = copy.tmem_slice %acc[0] : memref<128x64xi32, #copy.tmem> -> memref<128x32xi32, #copy.tmem>
    %hi = copy.tmem_slice %acc[32] : memref<128x64xi32, #copy.tmem> -> memref<128x32xi32, #copy.tmem>
    %v = vector.load %x[%t, %c0] : memref<128x32xi32>, vector<32xi32>
    copy.tmem_store %v, %hi[%c0] shape shape_32x32b num 32 : vector<32xi32>, memref<128x32xi32, #copy.tmem>
    copy.tmem_wait store
    copy.tmem_store %v, %lo[%c0] shape shape_32x32b num 32 : vector<32xi32>, memref<128x32xi32, #copy.tmem>
    %w = copy.tmem_load %hi[%c0] shape shape_32x32b num 32 : memref<128x32xi32, #copy.tmem> -> vector<32xi32>
    copy.tmem_wait load
    copy.tmem_wait store
    vector.store %w, %y[%t, %c0] : memref<128x32xi32>, vector<32xi32>
    copy.tmem_dealloc %acc : memref<128x64xi32, #copy.tmem>
    func.return
  }
}

// -----

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @block_shift(%x: memref<128x32xi32>, %y: memref<128x32xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %false = arith.constant false
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %lead = arith.cmpi eq, %t, %c0 : index
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %acc = copy.tmem_alloc : memref<128x32xi32, #copy.tmem>
    %v = vector.load %x[%t, %c0] : memref<128x32xi32>, vector<32xi32>
    copy.tmem_store %v, %acc[%c0] shape shape_32x32b num 32 : vector<32xi32>, memref<128x32xi32, #copy.tmem>
    copy.tmem_wait store
    nvvm.tcgen05.fence <before>
    gpu.barrier
    nvvm.tcgen05.fence <after>
    copy.tmem_shift %acc[%c8] : memref<128x32xi32, #copy.tmem>
    scf.if %lead {
      nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
    }
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    nvvm.tcgen05.fence <after>
    %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 32 : memref<128x32xi32, #copy.tmem> -> vector<32xi32>
    copy.tmem_wait load
    vector.store %w, %y[%t, %c0] : memref<128x32xi32>, vector<32xi32>
    nvvm.tcgen05.fence <before>
    gpu.barrier
    copy.tmem_dealloc %acc : memref<128x32xi32, #copy.tmem>
    func.return
  }
}
