// RUN: copy-opt %s --split-input-file --verify-diagnostics

// The kernels of protocol-tmem-views.mlir with one op removed each: findings of the protocol
// analysis on tcgen05.shift (P14: an asynchronous TMEM write that only a tcgen05.commit ends
// and fences, as tcgen05.cp) and on TMEM slices (P12 and P14 keyed by allocation and the
// slice's columns, so a slice meets its parent and the slices that overlap it). `// fix:`
// lines give the edit the note describes (tests/tools/test_fix_notes.py). The interpreter
// reports the same rule at the same op (tests/interpreter/test_tmem_views_order.py).

// The shift's end signalled by a plain arrival instead of tcgen05.commit: the epilogue's
// tcgen05.ld may read the columns before the shift is done.
// rule: P14
// fix: s|      copy.barrier_arrive %done[%c0] issuer elected : !copy.barrier<1>|      scf.if %lead { nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3> }|

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
      // expected-note@+1 {{the access not fenced before the sync}}
      copy.tmem_shift %acc[%c8] : memref<128x32xi32, #copy.tmem>
      copy.barrier_arrive %done[%c0] issuer elected : !copy.barrier<1>
    }, {
    ^bb0(%t: index):
      %v = vector.load %x[%t, %c0] : memref<128x32xi32>, vector<32xi32>
      copy.tmem_store %v, %acc[%c0] shape shape_32x32b num 32 : vector<32xi32>, memref<128x32xi32, #copy.tmem>
      copy.tmem_wait store
      nvvm.tcgen05.fence <before>
      copy.barrier_arrive %ready[%c0] issuer warps : !copy.barrier<1>
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
      nvvm.tcgen05.fence <after>
      // expected-error@+2 {{role 0's copy.tmem_shift of this TMEM is handed to the first warp of role 1 through a thread synchronisation that no tcgen05.fence::before_thread_sync orders it before: the TMEM access may still be in flight}}
      // expected-note@+1 {{in role 0, nvvm.tcgen05.commit (a tcgen05.shift ends only through a commit, which fences before the sync itself) on the barrier this side waits on}}
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

// The epilogue loads the shifted columns after the commit's arrival with no after fence.
// rule: P14
// fix: s|      %w = copy.tmem_load|      nvvm.tcgen05.fence <after> %w = copy.tmem_load|

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
      // expected-note@+1 {{the other thread's access}}
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
      // expected-error@+2 {{the first warp of role 1 accesses TMEM that role 0's copy.tmem_shift touched, after a thread synchronisation but with no tcgen05.fence::after_thread_sync between them: the access may be issued before the other's is ordered}}
      // expected-note@+1 {{add nvvm.tcgen05.fence <after> after the wait or barrier and before this op}}
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

// The MMA warp shifts the columns the epilogue stored, after the barrier that hands them
// over but with no after fence.
// rule: P14
// fix: s|      copy.tmem_shift|      nvvm.tcgen05.fence <after> copy.tmem_shift|

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
      // expected-error@+2 {{role 0 accesses TMEM that the first warp of role 1's copy.tmem_store touched, after a thread synchronisation but with no tcgen05.fence::after_thread_sync between them: the access may be issued before the other's is ordered}}
      // expected-note@+1 {{add nvvm.tcgen05.fence <after> after the wait or barrier and before this op}}
      copy.tmem_shift %acc[%c8] : memref<128x32xi32, #copy.tmem>
      scf.if %lead {
        nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
      }
    }, {
    ^bb0(%t: index):
      %v = vector.load %x[%t, %c0] : memref<128x32xi32>, vector<32xi32>
      // expected-note@+1 {{the other thread's access}}
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

// Two accumulators as slices of one allocation: the first is read after its commit's
// arrival with no after fence (the second MMA, into the other slice, does not hide the first).
// rule: P14
// fix: s|      %v0 = copy.tmem_load|      nvvm.tcgen05.fence <after> %v0 = copy.tmem_load|

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
        // expected-note@+1 {{the other thread's access}}
        nvvm.tcgen05.mma %d0, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        nvvm.tcgen05.commit %done0_ptr : !llvm.ptr<3>
        nvvm.tcgen05.mma %d1, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        nvvm.tcgen05.commit %done1_ptr : !llvm.ptr<3>
      }
    }, {
    ^bb0(%t: index):
      copy.barrier_wait %done0[%c0], %false : !copy.barrier<1>
      // expected-error@+2 {{the first warp of role 1 accesses TMEM that role 0's nvvm.tcgen05.mma touched, after a thread synchronisation but with no tcgen05.fence::after_thread_sync between them: the access may be issued before the other's is ordered}}
      // expected-note@+1 {{add nvvm.tcgen05.fence <after> after the wait or barrier and before this op}}
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

// A store through a slice, then a load of its parent's overlapping columns before the
// store's wait.
// rule: P12
// fix: s|    %w = copy.tmem_load|    copy.tmem_wait store %w = copy.tmem_load|

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @disjoint_store_load(%x: memref<128x32xi32>, %y: memref<128x32xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %acc = copy.tmem_alloc : memref<128x64xi32, #copy.tmem>
    %lo = copy.tmem_slice %acc[0] : memref<128x64xi32, #copy.tmem> -> memref<128x32xi32, #copy.tmem>
    %hi = copy.tmem_slice %acc[32] : memref<128x64xi32, #copy.tmem> -> memref<128x32xi32, #copy.tmem>
    %v = vector.load %x[%t, %c0] : memref<128x32xi32>, vector<32xi32>
    // expected-note@+1 {{the store}}
    copy.tmem_store %v, %lo[%c0] shape shape_32x32b num 32 : vector<32xi32>, memref<128x32xi32, #copy.tmem>
    // expected-error@+2 {{this op reads TMEM that a tcgen05.st may still be writing}}
    // expected-note@+1 {{wait for the store first: copy.tmem_wait store}}
    %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 32 : memref<128x64xi32, #copy.tmem> -> vector<32xi32>
    copy.tmem_wait load
    vector.store %w, %y[%t, %c0] : memref<128x32xi32>, vector<32xi32>
    copy.tmem_dealloc %acc : memref<128x64xi32, #copy.tmem>
    func.return
  }
}

// -----

// A store through one slice, then a load through another that overlaps it (columns 16-47
// of 0-31) before the store's wait.
// rule: P12
// fix: s|    %w = copy.tmem_load|    copy.tmem_wait store %w = copy.tmem_load|

builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @disjoint_store_load(%x: memref<128x32xi32>, %y: memref<128x32xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %acc = copy.tmem_alloc : memref<128x64xi32, #copy.tmem>
    %lo = copy.tmem_slice %acc[0] : memref<128x64xi32, #copy.tmem> -> memref<128x32xi32, #copy.tmem>
    %mid = copy.tmem_slice %acc[16] : memref<128x64xi32, #copy.tmem> -> memref<128x32xi32, #copy.tmem>
    %hi = copy.tmem_slice %acc[32] : memref<128x64xi32, #copy.tmem> -> memref<128x32xi32, #copy.tmem>
    %v = vector.load %x[%t, %c0] : memref<128x32xi32>, vector<32xi32>
    copy.tmem_store %v, %hi[%c0] shape shape_32x32b num 32 : vector<32xi32>, memref<128x32xi32, #copy.tmem>
    copy.tmem_wait store
    // expected-note@+1 {{the store}}
    copy.tmem_store %v, %lo[%c0] shape shape_32x32b num 32 : vector<32xi32>, memref<128x32xi32, #copy.tmem>
    // expected-error@+2 {{this op reads TMEM that a tcgen05.st may still be writing}}
    // expected-note@+1 {{wait for the store first: copy.tmem_wait store}}
    %w = copy.tmem_load %mid[%c0] shape shape_32x32b num 32 : memref<128x32xi32, #copy.tmem> -> vector<32xi32>
    copy.tmem_wait load
    vector.store %w, %y[%t, %c0] : memref<128x32xi32>, vector<32xi32>
    copy.tmem_dealloc %acc : memref<128x64xi32, #copy.tmem>
    func.return
  }
}

// -----

// The block's thread 0 shifts and signals the shift's end with a plain arrival instead of
// tcgen05.commit: the block's other threads load the columns before the shift is done.
// rule: P14
// fix: s|    copy.barrier_arrive %done[%c0] issuer elected : !copy.barrier<1>|    scf.if %lead { nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3> }|

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
    // expected-note@+1 {{the access not fenced before the sync}}
    copy.tmem_shift %acc[%c8] : memref<128x32xi32, #copy.tmem>
    copy.barrier_arrive %done[%c0] issuer elected : !copy.barrier<1>
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    nvvm.tcgen05.fence <after>
    // expected-error@+2 {{thread 0 of the block's copy.tmem_shift of this TMEM is handed to the block's other threads through a thread synchronisation that no tcgen05.fence::before_thread_sync orders it before: the TMEM access may still be in flight}}
    // expected-note@+1 {{in thread 0 of the block, nvvm.tcgen05.commit (a tcgen05.shift ends only through a commit, which fences before the sync itself) on the barrier this side waits on}}
    %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 32 : memref<128x32xi32, #copy.tmem> -> vector<32xi32>
    copy.tmem_wait load
    vector.store %w, %y[%t, %c0] : memref<128x32xi32>, vector<32xi32>
    nvvm.tcgen05.fence <before>
    gpu.barrier
    copy.tmem_dealloc %acc : memref<128x32xi32, #copy.tmem>
    func.return
  }
}

// -----

// The epilogue loads the shifted columns without waiting for the commit's arrival: nothing
// orders the load after the shift.
// rule: P14
// fix: s|      copy.barrier_arrive %ready[%c0] issuer warps : !copy.barrier<1>|      copy.barrier_arrive %ready[%c0] issuer warps : !copy.barrier<1> copy.barrier_wait %done[%c0], %false : !copy.barrier<1>|

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
      // expected-note@+1 {{the access not waited for}}
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
      nvvm.tcgen05.fence <after>
      // expected-error@+2 {{the first warp of role 1 accesses TMEM that role 0's copy.tmem_shift may still be accessing: no synchronisation orders this op after it (a tcgen05.mma, tcgen05.cp or tcgen05.shift ends only when a wait observes the arrival of a tcgen05.commit issued after it)}}
      // expected-note@+1 {{in role 0, nvvm.tcgen05.commit after it on a copy.barrier_init barrier; in the first warp of role 1, copy.barrier_wait on that barrier's phase, then nvvm.tcgen05.fence <after>, before this op}}
      %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 32 : memref<128x32xi32, #copy.tmem> -> vector<32xi32>
      copy.tmem_wait load
      vector.store %w, %y[%t, %c0] : memref<128x32xi32>, vector<32xi32>
      nvvm.tcgen05.fence <before>
    }
    copy.tmem_dealloc %acc : memref<128x32xi32, #copy.tmem>
    func.return
  }
}
