// RUN: copy-opt %s --split-input-file --verify-diagnostics

// tcgen05.cp reads its SMEM tile through the async proxy until the tcgen05.commit after it
// lands, as a tcgen05.mma does (P1, P2, P4 at the copy.smem_to_tmem), one mistake per chunk:
// a sparse MMA's metadata copied to TMEM before the bulk copy that brings them completes
// (lit_tests/passes/sparse-metadata-ptx.mlir without its wait); a tile the threads rewrite
// before the commit's barrier phase completes; a tile the threads wrote with no
// fence_async_shared before the copy; two copies into one buffer with nothing between (P14).
// The interpreter catches the same kernels at run time
// (tests/interpreter/test_sparse_metadata.py, test_tcgen05_cp_reads.py).

// rule: P1
// fix: s|    %meta = copy.tmem_alloc|    copy.barrier_wait %full[%c0], %false : !copy.barrier<1> %meta = copy.tmem_alloc|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @p1_metadata_before_it_lands(%x: memref<128x64xi2>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %false = arith.constant false
    %t = gpu.thread_id x
    %leader = arith.cmpi eq, %t, %c0 : index
    %tile = copy.alloc_smem : memref<128x64xi2, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    // expected-note@+1 {{the copy that fills it}}
    copy.async_copy %x[%c0, %c0] to %tile barrier %full[%c0] impl bulk oob promise_in_bounds : memref<128x64xi2> to memref<128x64xi2, #copy.smem>, !copy.barrier<1>
    %meta = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
    // expected-error@+2 {{the tcgen05.cp (copy.smem_to_tmem) reads %tile before the copy that fills it completes}}
    // expected-note@+1 {{wait on barrier 0 of %full for phase 0 (copy.barrier_wait with parity 0) before the read}}
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

// -----

// rule: P2
// fix: s|    vector.store %zero|    copy.barrier_wait %done[%c0], %false : !copy.barrier<1> vector.store %zero|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @p2_tile_rewritten_before_the_commit_lands(%x: memref<128x4xi32>, %y: memref<128x4xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %t = gpu.thread_id x
    %leader = arith.cmpi eq, %t, %c0 : index
    %tile = copy.alloc_smem : memref<128x4xi32, #copy.smem>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %v = vector.load %x[%t, %c0] : memref<128x4xi32>, vector<4xi32>
    %zero = vector.load %y[%t, %c0] : memref<128x4xi32>, vector<4xi32>
    vector.store %v, %tile[%t, %c0] : memref<128x4xi32, #copy.smem>, vector<4xi32>
    copy.fence_async_shared
    %acc = copy.tmem_alloc : memref<128x32xi32, #copy.tmem>
    // expected-note@+1 {{the tensor-core read of it}}
    copy.smem_to_tmem %tile to %acc[%c0] shape shape_128x128b : memref<128x4xi32, #copy.smem>, memref<128x32xi32, #copy.tmem>
    scf.if %leader {
      nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
    }
    // expected-error@+2 {{threads' store writes %tile[?, 0] while the tcgen05.cp (copy.smem_to_tmem) may still be reading it}}
    // expected-note@+1 {{wait on the barrier the nvvm.tcgen05.commit arrives on (copy.barrier_wait on its phase) before the write}}
    vector.store %zero, %tile[%t, %c0] : memref<128x4xi32, #copy.smem>, vector<4xi32>
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    nvvm.tcgen05.fence <after>
    %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 4 : memref<128x32xi32, #copy.tmem> -> vector<4xi32>
    copy.tmem_wait load
    vector.store %w, %y[%t, %c0] : memref<128x4xi32>, vector<4xi32>
    copy.tmem_dealloc %acc : memref<128x32xi32, #copy.tmem>
    func.return
  }
}

// -----

// rule: P4
// fix: s|    %acc = copy.tmem_alloc|    copy.fence_async_shared %acc = copy.tmem_alloc|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @p4_tile_written_unfenced(%x: memref<128x4xi32>, %y: memref<128x4xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %t = gpu.thread_id x
    %leader = arith.cmpi eq, %t, %c0 : index
    %tile = copy.alloc_smem : memref<128x4xi32, #copy.smem>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    %v = vector.load %x[%t, %c0] : memref<128x4xi32>, vector<4xi32>
    %zero = vector.load %y[%t, %c0] : memref<128x4xi32>, vector<4xi32>
    // expected-note@+1 {{the threads write it here}}
    vector.store %v, %tile[%t, %c0] : memref<128x4xi32, #copy.smem>, vector<4xi32>
    %acc = copy.tmem_alloc : memref<128x32xi32, #copy.tmem>
    // expected-error@+2 {{the tcgen05.cp (copy.smem_to_tmem) reads %tile, which threads wrote with no copy.fence_async_shared since}}
    // expected-note@+1 {{add copy.fence_async_shared after the threads' writes and before the copy}}
    copy.smem_to_tmem %tile to %acc[%c0] shape shape_128x128b : memref<128x4xi32, #copy.smem>, memref<128x32xi32, #copy.tmem>
    scf.if %leader {
      nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
    }
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    nvvm.tcgen05.fence <after>
    %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 4 : memref<128x32xi32, #copy.tmem> -> vector<4xi32>
    copy.tmem_wait load
    vector.store %w, %y[%t, %c0] : memref<128x4xi32>, vector<4xi32>
    copy.tmem_dealloc %acc : memref<128x32xi32, #copy.tmem>
    func.return
  }
}

// -----

// Two tcgen05.cp of one thread into the same TMEM columns: a copy after a copy is no
// tcgen05 pipeline (PTX ISA 9.7.16.6.2), so the two may land in either order (P14 at the
// second; its fix: a commit, a wait on its phase and the after fence before the second).
// rule: P14
// fix: s|    copy.barrier_wait %done[%c0], %false|    copy.barrier_wait %done[%c0], %true|
// fix: s|    copy.smem_to_tmem %tile to %lo[%z]|    scf.if %leader { nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3> } copy.barrier_wait %done[%c0], %false : !copy.barrier<1> nvvm.tcgen05.fence <after> copy.smem_to_tmem %tile to %lo[%z]|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @two_copies_one_buffer(%x: memref<128x64xi2>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %z = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %t = gpu.thread_id x
    %leader = arith.cmpi eq, %t, %c0 : index
    %tile = copy.alloc_smem : memref<128x64xi2, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>
    copy.async_copy %x[%c0, %c0] to %tile barrier %full[%c0] impl bulk oob promise_in_bounds : memref<128x64xi2> to memref<128x64xi2, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
    %meta = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>
    %lo = copy.tmem_slice %meta[0] : memref<128x512xi2, #copy.tmem> -> memref<128x64xi2, #copy.tmem>
    // expected-note@+1 {{the earlier access}}
    copy.smem_to_tmem %tile to %lo[%c0] shape shape_128x128b metadata : memref<128x64xi2, #copy.smem>, memref<128x64xi2, #copy.tmem>
    // expected-error@+2 {{thread 0 of the block's own copy.smem_to_tmem may still be accessing this TMEM: copy.smem_to_tmem after copy.smem_to_tmem is not one of the ISA's tcgen05 pipelines (PTX ISA 9.7.16.6.2: mma -> mma of one accumulator, cp -> mma, shift -> mma, shift -> cp 4x256b, mma -> shift), so the two may execute in either order}}
    // expected-note@+1 {{in thread 0 of the block, nvvm.tcgen05.commit after the copy.smem_to_tmem on a copy.barrier_init barrier, copy.barrier_wait on that phase, then nvvm.tcgen05.fence <after> before this op; or give this op other TMEM columns (a buffer per stage, each reused after its commit's phase)}}
    copy.smem_to_tmem %tile to %lo[%z] shape shape_128x128b metadata : memref<128x64xi2, #copy.smem>, memref<128x64xi2, #copy.tmem>
    scf.if %leader {
      nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>
    }
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    nvvm.tcgen05.fence <after>
    copy.tmem_dealloc %meta : memref<128x512xi2, #copy.tmem>
    func.return
  }
}
