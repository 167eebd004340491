// RUN: copy-opt %s --split-input-file --verify-diagnostics

// Kernels that rewrite a tensor map in global memory correctly: every copy through the map
// has completed (its barrier phase observed, its bulk group waited) before the map is
// rewritten, and tensormap_fence_release then tensormap_fence_acquire come between the
// rewrite and the next copy. The protocol analysis proves each with no finding. The
// checks: analysis/protocol/state.py (`map_*`) and walk.py.
// tests/dialect/test_tensormap_update.py compiles each kernel to a cubin.

// Load a tile, re-point the map at another array of the pool with its own shape and pitch,
// load again.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @tensormap_repoint_between_loads(%x: memref<?x?xf32>, %pool: memref<4096xf32>, %rows: i32, %cols: i32, %pitch: i64) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %false = arith.constant false
    %true = arith.constant true
    %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %m = copy.tensormap_global %x slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.tensormap_replace %m global_address to %pool[%c1024] : !copy.tensormap<8x64xf32>, memref<4096xf32>
    copy.tensormap_replace %m global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32
    copy.tensormap_replace %m global_dim[1] to %cols : !copy.tensormap<8x64xf32>, i32
    copy.tensormap_replace %m global_stride[0] to %pitch : !copy.tensormap<8x64xf32>, i64
    copy.tensormap_fence_release %m : !copy.tensormap<8x64xf32>
    copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
    func.return
  }
}

// -----

// A loop over 4 groups: each iteration re-points the map (its rows), fences, loads through
// it and waits for the load before the next rewrite.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @tensormap_loop_over_groups(%x: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %m = copy.tensormap_global %x slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    scf.for %g = %c0 to %c4 step %c1 {
      %r = arith.muli %g, %c8 : index
      %rows = arith.index_cast %r : index to i32
      copy.tensormap_replace %m global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32
      copy.tensormap_fence_release %m : !copy.tensormap<8x64xf32>
      copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32>
      copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
      %odd = arith.remui %g, %c2 : index
      %parity = arith.cmpi ne, %odd, %c0 : index
      copy.barrier_wait %bar[%c0], %parity : !copy.barrier<1>
    }
    func.return
  }
}

// -----

// Store a tile through a map, wait for the store's bulk group, re-point the map, store
// again.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @tensormap_repoint_between_stores(%x: memref<256x256xf32>, %y: memref<?x?xf32>, %rows: i32) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %my = copy.tensormap_global %y slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %buf to %y[%c0, %c0] map(%my : !copy.tensormap<8x64xf32>) : memref<8x64xf32, #copy.smem> to memref<?x?xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    copy.tensormap_replace %my global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32
    copy.tensormap_fence_release %my : !copy.tensormap<8x64xf32>
    copy.tensormap_fence_acquire %my : !copy.tensormap<8x64xf32>
    copy.async_copy %buf to %y[%c0, %c0] map(%my : !copy.tensormap<8x64xf32>) : memref<8x64xf32, #copy.smem> to memref<?x?xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// Warp-specialized: the producer warp re-points the map at a new row band of %x before each
// load (after the storer released the slot, so every earlier load through the map is known
// complete); the storer warp stores each band through its own map of %y.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @tensormap_roles(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %pool: memref<65536xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
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
        %again = arith.cmpi uge, %k, %c1 : index
        scf.if %again {
          %prev = arith.subi %k, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%c0], %pp : !copy.barrier<1>
        }
        %off = arith.muli %k, %c512 : index
        copy.tensormap_replace %mx global_address to %pool[%off] : !copy.tensormap<8x64xf32>, memref<65536xf32>
        copy.tensormap_fence_release %mx : !copy.tensormap<8x64xf32>
        copy.tensormap_fence_acquire %mx : !copy.tensormap<8x64xf32>
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
