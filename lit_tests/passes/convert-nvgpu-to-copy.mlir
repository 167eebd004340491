// RUN: copy-opt %s --split-input-file -p 'convert-nvgpu-to-copy{fragments=true block-size=128}' | filecheck %s

// convert-nvgpu-to-copy: upstream's nvgpu TMA, mbarrier and device_async ops in, copy ops
// out (passes/convert_nvgpu_to_copy.py); each output verifies, op by op and by the protocol
// analysis. A TMA op's coordinates are reversed (nvgpu's are innermost first), a swizzled
// map's SMEM buffer takes the swizzle in its type, and a descriptor argument becomes the
// GMEM tensor it describes.

!tmap = !nvgpu.tensormap.descriptor<tensor = memref<64x32xf32, 3>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = nan, interleave = none>
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // A fragment (no gpu.kernel): its TMA store is still in flight at the return.
  // CHECK-LABEL: func.func @tma(
  // CHECK-SAME: %[[IN:[a-z]+]]: memref<?x?xf32>, %[[OUT:[a-z]+]]: memref<?x?xf32>, %[[BUF:[a-z]+]]: memref<64x32xf32, #copy.smem<swizzle = 128>>) attributes {copy.fragment, gpu.known_block_size = array<i32: 128, 1, 1>}
  func.func @tma(%in: !tmap, %out: !tmap, %buf: memref<64x32xf32, 3>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c8192 = arith.constant 8192 : index
    %false = arith.constant false
    %ticks = arith.constant 1000 : index
    %tid = gpu.thread_id x
    // CHECK: %[[LEADER:.*]] = arith.cmpi eq
    %leader = arith.cmpi eq, %tid, %c0 : index
    // CHECK-NEXT: %[[B:.*]] = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %b = nvgpu.mbarrier.create -> !bars
    nvgpu.mbarrier.init %b[%c0], %c1 : !bars
    nvgpu.mbarrier.init %b[%c1], %c1 : !bars
    // The copy lowering prefetches each map at the kernel's entry; its maps are never rewritten.
    // CHECK-NOT: nvgpu.tma
    nvgpu.tma.prefetch.descriptor %in : !tmap
    nvgpu.tma.fence.descriptor %in : !tmap
    // CHECK-NEXT: copy.async_copy %[[IN]][%c64, %c0] to %[[BUF]] barrier %[[B]][%c0] if %[[LEADER]] impl tma oob nan {arrive = false, l2_promotion = 256 : i64} : memref<?x?xf32> to memref<64x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<2>
    nvgpu.tma.async.load %in[%c0, %c64], %b[%c0] to %buf, predicate = %leader : !tmap, !bars -> memref<64x32xf32, 3>
    // CHECK-NEXT: scf.if %[[LEADER]] {
    // CHECK-NEXT:   copy.barrier_arrive_expect_tx %[[B]][%c0], 8192 : !copy.barrier<2>
    // CHECK-NEXT: }
    nvgpu.mbarrier.arrive.expect_tx %b[%c0], %c8192, predicate = %leader : !bars
    // CHECK-NEXT: copy.barrier_wait %[[B]][%c0], %false suspend_hint 1000 : !copy.barrier<2>
    nvgpu.mbarrier.try_wait.parity %b[%c0], %false, %ticks : !bars
    // CHECK-NEXT: copy.async_copy %[[BUF]] to %[[OUT]][%c64, %c0] impl tma {l2_promotion = 256 : i64} : memref<64x32xf32, #copy.smem<swizzle = 128>> to memref<?x?xf32>
    nvgpu.tma.async.store %buf to %out[%c0, %c64] : memref<64x32xf32, 3> -> !tmap
    // CHECK-NEXT: func.return
    return
  }

  // The host side: a descriptor made from an unranked tensor is that tensor, ranked.
  // CHECK-LABEL: func.func @create(
  // CHECK: %{{.*}} = "memref.cast"(%{{.*}}) : (memref<*xf32>) -> memref<?x?xf32>
  func.func @create(%x: memref<*xf32>) {
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %d = nvgpu.tma.create.descriptor %x box[%c64, %c32] : memref<*xf32> -> !tmap
    return
  }
}

// -----

builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  // CHECK-LABEL: func.func @cp_async(
  // CHECK-SAME: %[[BUF:[a-z]+]]: memref<2x8x64xf32, 3 : i64>
  func.func @cp_async(%x: memref<256x64xf32>, %buf: memref<2x8x64xf32, #gpu.address_space<workgroup>>, %y: memref<256x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    // A copy of whole slots: %buf[%c0] and %buf[%c1], 8 x 64 elements each.
    // CHECK: copy.async_copy %{{.*}}[%c0, %c0] to %[[BUF]][%c0] impl cp_async : memref<256x64xf32> to memref<2x8x64xf32, 3 : i64>
    %0 = nvgpu.device_async_copy %x[%c0, %c0], %buf[%c0, %c0, %c0], 512 : memref<256x64xf32> to memref<2x8x64xf32, #gpu.address_space<workgroup>>
    // CHECK-NEXT: copy.async_copy %{{.*}}[%c8, %c0] to %[[BUF]][%c1] impl cp_async cache cg : memref<256x64xf32> to memref<2x8x64xf32, 3 : i64>
    %1 = nvgpu.device_async_copy %x[%c8, %c0], %buf[%c1, %c0, %c0], 512 {bypassL1} : memref<256x64xf32> to memref<2x8x64xf32, #gpu.address_space<workgroup>>
    // CHECK-NEXT: copy.commit_group cp_async
    %g = nvgpu.device_async_create_group %0, %1
    // CHECK-NEXT: copy.wait_group cp_async 0
    nvgpu.device_async_wait %g {numGroups = 0 : i32}
    // CHECK-NEXT: %{{.*}} = gpu.thread_id x
    %tidreg = nvvm.read.ptx.sreg.tid.x : i32
    %tid = arith.index_cast %tidreg : i32 to index
    %row = arith.remui %tid, %c8 : index
    %v = memref.load %buf[%c1, %row, %c0] : memref<2x8x64xf32, #gpu.address_space<workgroup>>
    memref.store %v, %y[%row, %c0] : memref<256x64xf32>
    return
  }
}

// -----

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // Each of the 128 threads arrives twice; the tokens are unused.
  // CHECK-LABEL: func.func @arrivals(
  func.func @arrivals() attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %false = arith.constant false
    // CHECK: %[[B:.*]] = copy.barrier_init arrivals 256 : !copy.barrier<1>
    %b = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    nvgpu.mbarrier.init %b[%c0], %c256 : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    // CHECK-NEXT: copy.barrier_arrive %[[B]][%c0] count 1 nocomplete : !copy.barrier<1>
    %t0 = nvgpu.mbarrier.arrive.nocomplete %b[%c0], %c1 : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>> -> !nvgpu.mbarrier.token
    // CHECK-NEXT: copy.barrier_arrive %[[B]][%c0] : !copy.barrier<1>
    %t1 = nvgpu.mbarrier.arrive %b[%c0] : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>> -> !nvgpu.mbarrier.token
    // CHECK-NEXT: copy.barrier_wait %[[B]][%c0], %false suspend_hint 0 : !copy.barrier<1>
    nvgpu.mbarrier.try_wait.parity %b[%c0], %false, %c0 : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    return
  }
}
