// A TMA load through a tensor map rewritten in the kernel (copy.tensormap_global and
// copy.tensormap_replace: a grouped copy) legalized for sm_80: the map's value at the load
// is derived from the rewrites before it in its block, the fields not rewritten being the
// host-encoded map's (its source's base, sizes and row-major pitch), and the load becomes
// an mbarrier-tracked cp.async copy from a view of the array the map points at
// (memref.reinterpret_cast: the rewritten base's offset, sizes and pitch in elements). The
// map, its rewrites and its fences go.
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_80}' | filecheck %s

// The first load reads the host-encoded map (a view of %x itself); the second the map
// rewritten to %pool[1024], %rows x %cols, %pitch bytes apart.
// CHECK-LABEL: func.func @load_rewrite_load(
// CHECK-NOT: copy.tensormap
// CHECK: %[[ROWS0:.*]] = memref.dim %x, %{{.*}} : memref<?x?xf32>
// CHECK: %[[COLS0:.*]] = memref.dim %x, %{{.*}} : memref<?x?xf32>
// CHECK: %[[V0:.*]] = memref.reinterpret_cast %x to offset: [%{{.*}}], sizes: [%[[ROWS0]], %[[COLS0]]], strides: [%[[COLS0]], 1] : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-NEXT: copy.async_copy %[[V0]][%c0, %c0] to %buf barrier %bar[%c0] impl cp_async oob zeros
// CHECK: %[[R:.*]] = arith.index_cast %rows : i32 to index
// CHECK-NEXT: %[[C:.*]] = arith.index_cast %cols : i32 to index
// CHECK-NEXT: %[[B:.*]] = arith.index_cast %pitch : i64 to index
// CHECK-NEXT: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[P:.*]] = arith.divui %[[B]], %[[FOUR]] : index
// CHECK-NEXT: %[[V1:.*]] = memref.reinterpret_cast %pool to offset: [%c1024], sizes: [%[[R]], %[[C]]], strides: [%[[P]], 1] : memref<4096xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-NEXT: copy.async_copy %[[V1]][%c0, %c0] to %buf barrier %bar[%c0] impl cp_async oob zeros
// CHECK-NOT: copy.tensormap
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @load_rewrite_load(%x: memref<?x?xf32>, %pool: memref<4096xf32>, %rows: i32, %cols: i32, %pitch: i64) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
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

// A loop over groups that rewrites only the rows before each load: the columns and the
// pitch are the source's (%x's size 1).
// CHECK-LABEL: func.func @loop_over_groups(
// CHECK: scf.for
// CHECK: %[[R:.*]] = arith.index_cast %rows : i32 to index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[COLS:.*]] = memref.dim %x, %[[ONE]] : memref<?x?xf32>
// CHECK: memref.reinterpret_cast %x to offset: [%{{.*}}], sizes: [%[[R]], %[[COLS]]], strides: [%{{.*}}, 1]
// CHECK-NOT: copy.tensormap
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @loop_over_groups(%x: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
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
