// RUN: copy-opt %s --split-input-file --verify-diagnostics

// Kernels that rewrite a tensor map in global memory wrongly, one mistake per chunk, named
// after the rule it breaks (`// rule:` gives the id in copy_dialect/rules.toml): a rewrite
// while a copy through the map may still be in flight (cutlass#3165's class of bug), a
// copy through a rewritten map without the release/acquire pair or whose issuing thread
// did not run the acquire (the fence is per thread), an acquire with no
// release. The error is at the op, the copy or rewrite it concerns is a note. The checks:
// analysis/protocol/tensormaps.py. `// fix: s|OLD|NEW|` lines give
// the edit the note describes; tests/tools/test_fix_notes.py applies them and checks that the
// result verifies, protocol included.

// rule: TU10
// fix: s|copy.tensormap_replace %m global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32|XX|
// fix: s|copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>|copy.tensormap_replace %m global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32|
// fix: s|XX|copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>|
func.func @tu10_rewrite_while_load_in_flight(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %rows: i32) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %false = arith.constant false
  %true = arith.constant true
  %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %m = copy.tensormap_global %x slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
  // expected-note@+1 {{the load through the map}}
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
  // expected-error@+2 {{Expected the copies through the map %m to be complete before it is rewritten, got a load through it that may still be in flight (its barrier 0 of %bar phase not observed)}}
  // expected-note@+1 {{wait on barrier 0 of %bar (copy.barrier_wait) before the copy.tensormap_replace, or on a barrier its consumers arrive on after they waited for it}}
  copy.tensormap_replace %m global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  copy.tensormap_fence_release %m : !copy.tensormap<8x64xf32>
  copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32>
  copy.async_copy %x[%c8, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
  func.return
}

// -----

// rule: TU10
// fix: s|  copy.commit_group bulk|  copy.commit_group bulk copy.wait_group bulk 0|
func.func @tu10_rewrite_while_store_in_flight(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %rows: i32) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %false = arith.constant false
  %true = arith.constant true
  %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %m = copy.tensormap_global %x slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
  %my = copy.tensormap_global %y slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-note@+1 {{the store through the map}}
  copy.async_copy %buf to %y[%c0, %c0] map(%my : !copy.tensormap<8x64xf32>) : memref<8x64xf32, #copy.smem> to memref<?x?xf32>
  copy.commit_group bulk
  // expected-error@+2 {{Expected the copies through the map %my to be complete before it is rewritten, got a store through it that may still be in flight (its bulk group not waited)}}
  // expected-note@+1 {{commit the store (copy.commit_group bulk) and wait for it (copy.wait_group bulk 0) before the copy.tensormap_replace}}
  copy.tensormap_replace %my global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32
  copy.wait_group bulk 0
  func.return
}

// -----

// rule: TU11
// fix: s|  copy.async_copy %x[%c8|  copy.tensormap_fence_release %m : !copy.tensormap<8x64xf32> copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32> copy.async_copy %x[%c8|
func.func @tu11_copy_through_unfenced_map(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %rows: i32) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %false = arith.constant false
  %true = arith.constant true
  %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %m = copy.tensormap_global %x slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-note@+1 {{the map is rewritten here}}
  copy.tensormap_replace %m global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32
  // expected-error@+2 {{Expected the map %m to be acquired after it was rewritten, got a copy through it with neither tensormap_fence_release nor tensormap_fence_acquire since: the TMA unit may read the old map}}
  // expected-note@+1 {{add copy.tensormap_fence_release after the rewrites and copy.tensormap_fence_acquire %m before the copy}}
  copy.async_copy %x[%c8, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
  func.return
}

// -----

// rule: TU11
// fix: s|  copy.async_copy %x[%c8|  copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32> copy.async_copy %x[%c8|
func.func @tu11_copy_through_released_not_acquired_map(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %rows: i32) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %false = arith.constant false
  %true = arith.constant true
  %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %m = copy.tensormap_global %x slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-note@+1 {{the map is rewritten here}}
  copy.tensormap_replace %m global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32
  copy.tensormap_fence_release %m : !copy.tensormap<8x64xf32>
  // expected-error@+2 {{Expected the map %m to be acquired after it was rewritten, got a copy through it after tensormap_fence_release but with no tensormap_fence_acquire since: the TMA unit may read the old map}}
  // expected-note@+1 {{add copy.tensormap_fence_release after the rewrites and copy.tensormap_fence_acquire %m before the copy}}
  copy.async_copy %x[%c8, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
  func.return
}

// -----

// rule: TU12
// fix: s|  copy.tensormap_fence_acquire|  copy.tensormap_fence_release %m : !copy.tensormap<8x64xf32> copy.tensormap_fence_acquire|
func.func @tu12_acquire_without_release(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %rows: i32) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %false = arith.constant false
  %true = arith.constant true
  %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %m = copy.tensormap_global %x slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
  copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-note@+1 {{the map is rewritten here}}
  copy.tensormap_replace %m global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32
  // expected-error@+2 {{Expected a tensormap_fence_release of %m between its rewrite and this acquire, got none: the acquire orders nothing}}
  // expected-note@+1 {{add copy.tensormap_fence_release after the copy.tensormap_replace ops and before the acquire}}
  copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32>
  copy.async_copy %x[%c8, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
  func.return
}

// -----

// rule: TU10
// fix: s|        %off = arith.muli %k, %c512 : index|        %again = arith.cmpi uge, %k, %c1 : index scf.if %again { %prev = arith.subi %k, %c1 : index %pm = arith.remui %prev, %c2 : index %pp = arith.cmpi ne, %pm, %c0 : index copy.barrier_wait %empty[%c0], %pp : !copy.barrier<1> } %off = arith.muli %k, %c512 : index|
// The producer warp re-points the map before the storer released the slot: the load
// through the map's previous address may still be in flight.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @tu10_producer_rewrites_before_the_slot_is_released(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %pool: memref<65536xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c512 = arith.constant 512 : index
    %ring = copy.alloc_smem : memref<1x8x64xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %mx = copy.tensormap_global %x slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    %my = copy.tensormap_global %y slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      scf.for %k = %c0 to %c4 step %c1 {
        %off = arith.muli %k, %c512 : index
        // expected-error@+2 {{Expected the copies through the map %mx to be complete before it is rewritten, got a load through it that may still be in flight (its barrier 0 of %full phase not observed)}}
        // expected-note@+1 {{wait on barrier 0 of %full (copy.barrier_wait) before the copy.tensormap_replace, or on a barrier its consumers arrive on after they waited for it}}
        copy.tensormap_replace %mx global_address to %pool[%off] : !copy.tensormap<8x64xf32>, memref<65536xf32>
        copy.tensormap_fence_release %mx : !copy.tensormap<8x64xf32>
        copy.tensormap_fence_acquire %mx : !copy.tensormap<8x64xf32>
        // expected-note@+1 {{the load through the map}}
        copy.async_copy %x[%c0, %c0] to %ring[%c0] barrier %full[%c0] map(%mx : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<1x8x64xf32, #copy.smem>, !copy.barrier<1>
      }
    }, {
    ^bb0(%t: index):
      scf.for %k = %c0 to %c4 step %c1 {
        %km = arith.remui %k, %c2 : index
        %kp = arith.cmpi ne, %km, %c0 : index
        copy.barrier_wait %full[%c0], %kp : !copy.barrier<1>
        %row = arith.muli %k, %c2 : index
        copy.async_copy %ring[%c0] to %y[%row, %c0] map(%my : !copy.tensormap<8x64xf32>) : memref<1x8x64xf32, #copy.smem> to memref<?x?xf32>
        copy.commit_group bulk
        copy.wait_group bulk 0 read_only
        copy.barrier_arrive %empty[%c0] issuer elected : !copy.barrier<1>
      }
      copy.wait_group bulk 0
    }
    func.return
  }
}

// -----

// rule: TU11
// fix: s|      copy.async_copy %x|      copy.tensormap_fence_acquire %mx : !copy.tensormap<8x64xf32> copy.async_copy %x|
// The block's thread 0 re-points the map and acquires it, but the producer role's elected
// thread issues the load: the acquire fence is per thread, so that thread may still use the
// map as the TMA unit saw it before the rewrite.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @tu11_map_acquired_by_another_thread(%x: memref<?x?xf32>, %pool: memref<65536xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c512 = arith.constant 512 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %mx = copy.tensormap_global %x slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    // expected-note@+1 {{the map is rewritten here}}
    copy.tensormap_replace %mx global_address to %pool[%c512] : !copy.tensormap<8x64xf32>, memref<65536xf32>
    copy.tensormap_fence_release %mx : !copy.tensormap<8x64xf32>
    // expected-note@+1 {{the map is acquired here, by thread 0 of the block}}
    copy.tensormap_fence_acquire %mx : !copy.tensormap<8x64xf32>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      // expected-error@+2 {{Expected the thread that issues this copy (the elected thread of role 0) to acquire the map %mx after its rewrite, got an acquire by thread 0 of the block only: the acquire fence orders the copies of the thread that runs it, and the TMA unit may read the old map for this one}}
      // expected-note@+1 {{add copy.tensormap_fence_acquire %mx just before the copy, in the same block or role, so that the elected thread of role 0 runs it}}
      copy.async_copy %x[%c0, %c0] to %buf barrier %full[%c0] map(%mx : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
    }, {
    ^bb0(%t: index):
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      %v = memref.load %buf[%c0, %c0] : memref<8x64xf32, #copy.smem>
    }
    func.return
  }
}

// -----

// rule: TU11
// fix: s|      copy.async_copy %ring|      copy.tensormap_fence_acquire %my : !copy.tensormap<8x64xf32> copy.async_copy %ring|
// The loader role re-points the store map %my and acquires it; the storer role, whose
// elected thread issues the store through it, does not.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @tu11_store_map_acquired_by_the_other_role(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %pool: memref<65536xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c512 = arith.constant 512 : index
    %false = arith.constant false
    %ring = copy.alloc_smem : memref<8x64xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %my = copy.tensormap_global %y slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      // expected-note@+1 {{the map is rewritten here}}
      copy.tensormap_replace %my global_address to %pool[%c512] : !copy.tensormap<8x64xf32>, memref<65536xf32>
      copy.tensormap_fence_release %my : !copy.tensormap<8x64xf32>
      // expected-note@+1 {{the map is acquired here, by the elected thread of role 0}}
      copy.tensormap_fence_acquire %my : !copy.tensormap<8x64xf32>
      copy.async_copy %x[%c0, %c0] to %ring barrier %full[%c0] : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
    }, {
    ^bb0(%t: index):
      copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
      // expected-error@+2 {{Expected the thread that issues this copy (the elected thread of role 1) to acquire the map %my after its rewrite, got an acquire by the elected thread of role 0 only: the acquire fence orders the copies of the thread that runs it, and the TMA unit may read the old map for this one}}
      // expected-note@+1 {{add copy.tensormap_fence_acquire %my just before the copy, in the same block or role, so that the elected thread of role 1 runs it}}
      copy.async_copy %ring to %y[%c0, %c0] map(%my : !copy.tensormap<8x64xf32>) : memref<8x64xf32, #copy.smem> to memref<?x?xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0
    }
    func.return
  }
}
