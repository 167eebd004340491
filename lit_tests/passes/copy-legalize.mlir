// copy-legalize rewrites Hopper (TMA) kernels for sm_80; copy-opt verifies the result (ops,
// dominance and the protocol analysis) after the pass, so each chunk that prints verified.
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_80}' | filecheck %s
// The same holds for sm_86 (a smaller SMEM budget, the same rewrites).
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_86}' | filecheck %s --check-prefix=SM86
// copy-opt's --target names the pass's target (the input is verified for its own target).
// RUN: copy-opt %s --split-input-file --target sm_80 -p copy-legalize | filecheck %s

// A TMA tile copy: the load becomes an mbarrier-tracked cp.async on the same barrier
// (zero-filled, as the TMA load was): each of the 128 threads arrives once when its chunks
// land, so the barrier counts 128 arrivals; the wait is kept; the TMA store becomes thread
// stores of 16 bytes (vectors of 4: the rows of the tile and of the array are multiples of
// 4, and so is the column origin, %bx * 64), through the 16-byte alignment TMA asked of
// %y, clipped to the array; the bulk group is gone.
// CHECK-LABEL: builtin.module attributes {copy.target = #copy.target<"sm_80">}
// CHECK-LABEL: func.func @tile_copy
// CHECK-NEXT: %y_aligned = memref.assume_alignment %y, 16 : memref<1000x1000xf32>
// CHECK: %bar = copy.barrier_init arrivals 128 : !copy.barrier<1>
// CHECK-NEXT: copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] impl cp_async oob zeros : memref<1000x1000xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
// CHECK-NEXT: copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
// CHECK-NEXT: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[STEP:.*]] = arith.constant 128 : index
// CHECK-NEXT: %[[TOTAL:.*]] = arith.constant 1024 : index
// CHECK-NEXT: %[[ROW_VECTORS:.*]] = arith.constant 16 : index
// CHECK-NEXT: %[[WIDTH:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[I:.*]] = %[[TID]] to %[[TOTAL]] step %[[STEP]] {
// CHECK-NEXT: %[[CV:.*]] = arith.remui %[[I]], %[[ROW_VECTORS]] : index
// CHECK-NEXT: %[[R:.*]] = arith.divui %[[I]], %[[ROW_VECTORS]] : index
// CHECK-NEXT: %[[C:.*]] = arith.muli %[[CV]], %[[WIDTH]] : index
// CHECK-NEXT: %[[V:.*]] = vector.load %tile[%[[R]], %[[C]]] : memref<64x64xf32, #copy.smem>, vector<4xf32>
// CHECK-NEXT: %[[GR:.*]] = arith.addi %row, %[[R]] : index
// CHECK-NEXT: %[[GC:.*]] = arith.addi %col, %[[C]] : index
// CHECK-NEXT: %[[OK0:.*]] = arith.cmpi ult, %[[GR]], %{{.*}} : index
// CHECK-NEXT: %[[OK1:.*]] = arith.cmpi ult, %[[GC]], %{{.*}} : index
// CHECK-NEXT: %[[OK:.*]] = arith.andi %[[OK0]], %[[OK1]] : i1
// CHECK-NEXT: scf.if %[[OK]] {
// CHECK-NEXT: vector.store %[[V]], %y_aligned[%[[GR]], %[[GC]]] : memref<1000x1000xf32>, vector<4xf32>
// CHECK-NOT: copy.commit_group bulk
// CHECK-NOT: copy.wait_group bulk
// CHECK: func.return
// SM86-LABEL: builtin.module attributes {copy.target = #copy.target<"sm_86">}
// SM86: copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] impl cp_async oob zeros
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @tile_copy(%x: memref<1000x1000xf32>, %y: memref<1000x1000xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %col = arith.muli %bx, %c64 : index
    %row = arith.muli %by, %c64 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] oob zeros : memref<1000x1000xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%row, %col] : memref<64x64xf32, #copy.smem> to memref<1000x1000xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// Two loads on two barriers of one group, then their waits in the same block: each wait
// is kept and waits for its own load only (the first read does not wait for the second
// load). Each barrier counts the 128 threads' arrivals.
// CHECK-LABEL: func.func @two_loads
// CHECK: %bars = copy.barrier_init arrivals 128 : !copy.barrier<2>
// CHECK-NEXT: copy.async_copy %x[%c0, %c0] to %a barrier %bars[%c0] impl cp_async oob zeros
// CHECK-NEXT: copy.async_copy %x[%c0, %c64] to %b barrier %bars[%c1] impl cp_async oob zeros
// CHECK-NEXT: copy.barrier_wait %bars[%c0], %phase
// CHECK-NEXT: memref.load %a
// CHECK-NEXT: copy.barrier_wait %bars[%c1], %phase
// CHECK-NEXT: memref.load %b
// SM86-LABEL: func.func @two_loads
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @two_loads(%x: memref<256x256xf32>, %y: memref<256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %a = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %b = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    copy.async_copy %x[%c0, %c0] to %a barrier %bars[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<2>
    copy.async_copy %x[%c0, %c64] to %b barrier %bars[%c1] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<2>
    copy.barrier_wait %bars[%c0], %phase : !copy.barrier<2>
    %va = memref.load %a[%c0, %tid] : memref<64x64xf32, #copy.smem>
    copy.barrier_wait %bars[%c1], %phase : !copy.barrier<2>
    %vb = memref.load %b[%c0, %tid] : memref<64x64xf32, #copy.smem>
    %s = arith.addf %va, %vb : f32
    memref.store %s, %y[%tid] : memref<256xf32>
    func.return
  }
}

// -----

// A ring of two slots refilled in a loop (the shape of kernels.tma_copy_pipelined): the
// loads stay on their slot's barrier (128 arrivals a phase, one per thread), and each
// iteration keeps its wait on the slot's phase, so the refills of the other slot stay in
// flight while a tile is stored (the ring keeps its overlap); the bulk wait before a refill
// (the store has read the slot) becomes the block barrier, since the thread stores read
// the slot synchronously.
// CHECK-LABEL: func.func @ring
// CHECK: %bars = copy.barrier_init arrivals 128 : !copy.barrier<2>
// CHECK: scf.if
// CHECK: copy.async_copy %x[%r0, %c0] to %buf[%c0] barrier %bars[%c0] impl cp_async oob zeros
// CHECK-NOT: copy.commit_group
// CHECK: scf.for %k = %c0 to %count step %c1 {
// CHECK: copy.barrier_wait %bars[%slot], %parity : !copy.barrier<2>
// CHECK-NOT: copy.wait_group
// CHECK: scf.for
// CHECK: vector.load %buf[%slot,
// CHECK: scf.if %refill_ok {
// CHECK-NEXT: gpu.barrier
// CHECK: copy.async_copy %x[%rn, %c0] to %buf[%slot] barrier %bars[%slot] impl cp_async oob zeros
// CHECK-NOT: copy.commit_group
// CHECK-NOT: copy.wait_group
// CHECK: func.return
// SM86-LABEL: func.func @ring
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ring(%x: memref<1024x64xf32>, %y: memref<1024x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %count = arith.constant 16 : index
    %buf = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %t0 = arith.cmpi ult, %c0, %count : index
    scf.if %t0 {
      %r0 = arith.muli %c0, %c64 : index
      copy.async_copy %x[%r0, %c0] to %buf[%c0] barrier %bars[%c0] : memref<1024x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
    }
    %t1 = arith.cmpi ult, %c1, %count : index
    scf.if %t1 {
      %r1 = arith.muli %c1, %c64 : index
      copy.async_copy %x[%r1, %c0] to %buf[%c1] barrier %bars[%c1] : memref<1024x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
    }
    scf.for %k = %c0 to %count step %c1 {
      %slot = arith.remui %k, %c2 : index
      %lap = arith.divui %k, %c2 : index
      %lap2 = arith.remui %lap, %c2 : index
      %parity = arith.cmpi ne, %lap2, %c0 : index
      copy.barrier_wait %bars[%slot], %parity : !copy.barrier<2>
      %row = arith.muli %k, %c64 : index
      copy.async_copy %buf[%slot] to %y[%row, %c0] : memref<2x64x64xf32, #copy.smem> to memref<1024x64xf32>
      copy.commit_group bulk
      %next = arith.addi %k, %c2 : index
      %refill_ok = arith.cmpi ult, %next, %count : index
      scf.if %refill_ok {
        copy.wait_group bulk 0 read_only
        %rn = arith.muli %next, %c64 : index
        copy.async_copy %x[%rn, %c0] to %buf[%slot] barrier %bars[%slot] : memref<1024x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
      }
    }
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// A multicast load across a cluster of 2: each CTA loads the whole tile itself
// (collective dropped), and the kernel loses its cluster (sm_80 has none).
// CHECK-LABEL: func.func @multicast
// CHECK-NOT: copy.cluster
// CHECK: copy.async_copy %x[%c0, %col] to %tile barrier %bar[%c0] impl cp_async oob zeros : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
// CHECK-NOT: collective
// SM86-LABEL: func.func @multicast
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @multicast(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %col = arith.muli %bx, %c64 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %col] to %tile barrier %bar[%c0] {collective = array<i64: 0>} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// A 128-byte swizzled buffer: cp.async has no swizzle, so the buffer takes the plain layout;
// the thread access through memref indices follows the type. The threads' writes before a
// TMA store were fenced (copy.fence_async_shared): the fence becomes the block barrier it
// includes. A TMA prefetch (an L2 hint) is dropped.
// CHECK-LABEL: func.func @swizzled
// CHECK: %tile = copy.alloc_smem : memref<64x32xf32, #copy.smem>
// CHECK-NOT: copy.prefetch
// CHECK: copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] impl cp_async oob zeros : memref<4096x4096xf32> to memref<64x32xf32, #copy.smem>, !copy.barrier<1>
// CHECK: memref.store %{{.*}}, %tile[%c0, %tid] : memref<64x32xf32, #copy.smem>
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: copy.fence_async_shared
// SM86-LABEL: func.func @swizzled
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @swizzled(%x: memref<4096x4096xf32>, %y: memref<4096x4096xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %one = arith.constant 1.0 : f32
    %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %tile = copy.alloc_smem : memref<64x32xf32, #copy.smem<swizzle = 128>>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.prefetch %y[%c0, %c0] {box = array<i64: 64, 32>} : memref<4096x4096xf32>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<4096x4096xf32> to memref<64x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    %v = memref.load %tile[%c0, %tid] : memref<64x32xf32, #copy.smem<swizzle = 128>>
    %w = arith.addf %v, %one : f32
    memref.store %w, %tile[%c0, %tid] : memref<64x32xf32, #copy.smem<swizzle = 128>>
    copy.fence_async_shared
    copy.async_copy %tile to %y[%c0, %c0] : memref<64x32xf32, #copy.smem<swizzle = 128>> to memref<4096x4096xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// IR that already runs on sm_80 (cp.async, thread stores) is kept as it is; only the
// module's target is set.
// CHECK-LABEL: builtin.module attributes {copy.target = #copy.target<"sm_80">}
// CHECK-LABEL: func.func @cp_async
// CHECK: copy.async_copy %x[%c0, %c0] to %tile impl cp_async oob zeros
// CHECK-NEXT: copy.commit_group cp_async
// CHECK-NEXT: copy.wait_group cp_async 0
// SM86-LABEL: func.func @cp_async
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @cp_async(%x: memref<256x256xf32>, %y: memref<256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    copy.async_copy %x[%c0, %c0] to %tile impl cp_async oob zeros : memref<256x256xf32> to memref<64x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    %v = memref.load %tile[%c0, %tid] : memref<64x64xf32, #copy.smem>
    memref.store %v, %y[%tid] : memref<256xf32>
    func.return
  }
}

// -----

// A producer warpgroup of which only the first warp runs the ring (the shape of
// kernels.ws_elementwise with maxnreg): exactly warp 0 passes `%t / 32 == 0` and the other
// warps do nothing else, so the role splits into a role of that warp, which issues the
// cp.async form (32 arrivals a load), and an idle role of three; setmaxnreg goes (sm_90a).
// CHECK-LABEL: func.func @warpgroup_producer
// CHECK: %full = copy.barrier_init arrivals 32 : !copy.barrier<1>
// CHECK: copy.warp_specialize warps [1, 3, 4] {
// CHECK-NEXT: ^{{.*}}(%t: index):
// CHECK: scf.if %first {
// CHECK-NEXT: copy.async_copy %x[%c0, %c0] to %tile barrier %full[%c0] impl cp_async oob zeros
// CHECK: }, {
// CHECK-NEXT: ^{{.*}}(%{{.*}}: index):
// CHECK-NEXT: }, {
// CHECK-NEXT: ^{{.*}}(%{{.*}}: index):
// CHECK-NEXT: copy.barrier_wait %full[%c0], %phase
// SM86-LABEL: func.func @warpgroup_producer
// SM86: copy.warp_specialize warps [1, 3, 4] {
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @warpgroup_producer(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.warp_specialize warps [4, 4] maxnreg [40, 232] {
    ^bb0(%t: index):
      %warp = arith.divui %t, %c32 : index
      %first = arith.cmpi eq, %warp, %c0 : index
      scf.if %first {
        copy.async_copy %x[%c0, %c0] to %tile barrier %full[%c0] oob zeros : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
      }
    }, {
    ^bb0(%t: index):
      copy.barrier_wait %full[%c0], %phase : !copy.barrier<1>
      %v = memref.load %tile[%c0, %t] : memref<64x64xf32, #copy.smem>
      memref.store %v, %y[%c0, %t] : memref<256x256xf32>
    }
    func.return
  }
}

// -----

// A TMA store whose column origin is not known to be a multiple of 4 (%bx * 64 + 2): the
// vector walk runs where the origin is one at run time (it addresses from origin / 4 * 4,
// the same value there), the element-wise walk in the other branch (this origin breaks
// TR12 on the H200 when it is not a multiple of 16 bytes; the sm_80 form stays defined).
// CHECK-LABEL: func.func @shifted_store
// CHECK-NEXT: %y_aligned = memref.assume_alignment %y, 16 : memref<1000x1000xf32>
// CHECK: %[[REM:.*]] = arith.remui %col, %[[W:.*]] : index
// CHECK: %[[ON:.*]] = arith.cmpi eq, %[[REM]], %{{.*}} : index
// CHECK: %[[WHOLE:.*]] = arith.muli %{{.*}}, %[[W]] : index
// CHECK: scf.if %[[ON]] {
// CHECK: vector.load %tile
// CHECK: arith.addi %[[WHOLE]],
// CHECK: vector.store %{{.*}}, %y_aligned[
// CHECK: } else {
// CHECK: memref.load %tile
// CHECK: arith.addi %col,
// CHECK: memref.store %{{.*}}, %y[
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @shifted_store(%x: memref<1000x1000xf32>, %y: memref<1000x1000xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %bcol = arith.muli %bx, %c64 : index
    %col = arith.addi %bcol, %c2 : index
    %row = arith.muli %by, %c64 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] oob zeros : memref<1000x1000xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%row, %col] : memref<64x64xf32, #copy.smem> to memref<1000x1000xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
