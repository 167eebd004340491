// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// Upstream MLIR's nvgpu data-movement ops (copy_dialect/upstream_nvgpu.py) in the custom
// syntax upstream's tests print, back after a trip through the generic form (CHECK), and in
// the generic form itself (CHECK-GENERIC); the last function is written in upstream's
// generic form.

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!tmap = !nvgpu.tensormap.descriptor<tensor = memref<64x32xf32,3>, swizzle=swizzle_128b, l2promo = l2promo_256b, oob = nan, interleave = none>

// CHECK-LABEL: func.func @ops(
func.func @ops(%src: memref<128x128xf32>, %dst: memref<3x16x128xf32, 3>, %i: index, %d: !tmap, %buf: memref<64x32xf32, #gpu.address_space<workgroup>>, %u: memref<*xf32>, %p: i1, %mask: i16) {
  // CHECK: %{{.*}} = nvgpu.device_async_copy %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}], 4 : memref<128x128xf32> to memref<3x16x128xf32, 3 : i64>
  // CHECK-GENERIC: "nvgpu.device_async_copy"(%{{.*}}) <{dstElements = 4 : index, operandSegmentSizes = array<i32: 1, 3, 1, 2, 0>}>
  %0 = nvgpu.device_async_copy %src[%i, %i], %dst[%i, %i, %i], 4 : memref<128x128xf32> to memref<3x16x128xf32, 3>
  // CHECK: %{{.*}} = nvgpu.device_async_copy %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}], 4, %{{.*}} bypassL1 : memref<128x128xf32> to memref<3x16x128xf32, 3 : i64>
  %1 = nvgpu.device_async_copy %src[%i, %i], %dst[%i, %i, %i], 4, %i bypassL1 : memref<128x128xf32> to memref<3x16x128xf32, 3>
  // CHECK: %[[G:.*]] = nvgpu.device_async_create_group %{{.*}}, %{{.*}}
  // CHECK-GENERIC: "nvgpu.device_async_create_group"(%{{.*}}, %{{.*}}) : (!nvgpu.device.async.token, !nvgpu.device.async.token) -> !nvgpu.device.async.token
  %g = nvgpu.device_async_create_group %0, %1
  // CHECK: nvgpu.device_async_wait %[[G]] {numGroups = 1 : i32}
  nvgpu.device_async_wait %g { numGroups = 1 : i32 }
  // CHECK: nvgpu.device_async_wait {numGroups = 0 : i32}
  // CHECK-GENERIC: "nvgpu.device_async_wait"() <{numGroups = 0 : i32}> : () -> ()
  nvgpu.device_async_wait {numGroups = 0 : i32}
  // CHECK: %[[B:.*]] = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
  %b = nvgpu.mbarrier.create -> !bars
  // CHECK: nvgpu.mbarrier.init %[[B]][%{{.*}}], %{{.*}}, predicate = %{{.*}} : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
  nvgpu.mbarrier.init %b[%i], %i, predicate = %p : !bars
  // CHECK: %[[T:.*]] = nvgpu.mbarrier.arrive %[[B]][%{{.*}}] : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2> -> !nvgpu.mbarrier.token
  %t = nvgpu.mbarrier.arrive %b[%i] : !bars -> !nvgpu.mbarrier.token
  // CHECK: nvgpu.mbarrier.arrive.nocomplete %[[B]][%{{.*}}], %{{.*}} : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2> -> !nvgpu.mbarrier.token
  %t2 = nvgpu.mbarrier.arrive.nocomplete %b[%i], %i : !bars -> !nvgpu.mbarrier.token
  // CHECK: nvgpu.mbarrier.test.wait %[[B]][%{{.*}}], %[[T]] : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>, !nvgpu.mbarrier.token
  %done = nvgpu.mbarrier.test.wait %b[%i], %t : !bars, !nvgpu.mbarrier.token
  // CHECK: nvgpu.mbarrier.arrive.expect_tx %[[B]][%{{.*}}], %{{.*}}, predicate = %{{.*}} : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
  nvgpu.mbarrier.arrive.expect_tx %b[%i], %i, predicate = %p : !bars
  // CHECK: nvgpu.mbarrier.try_wait.parity %[[B]][%{{.*}}], %{{.*}}, %{{.*}} : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
  nvgpu.mbarrier.try_wait.parity %b[%i], %done, %i : !bars
  // CHECK: nvgpu.tma.prefetch.descriptor %{{.*}}, predicate = %{{.*}} : !nvgpu.tensormap.descriptor<tensor = memref<64x32xf32, 3 : i64>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = nan, interleave = none>
  nvgpu.tma.prefetch.descriptor %d, predicate = %p : !tmap
  // CHECK: nvgpu.tma.fence.descriptor %{{.*}} : !nvgpu.tensormap.descriptor
  nvgpu.tma.fence.descriptor %d : !tmap
  // CHECK: nvgpu.tma.async.load %{{.*}}[%{{.*}}, %{{.*}}], %[[B]][%{{.*}}] to %{{.*}} multicast_mask = %{{.*}}, predicate = %{{.*}} : !nvgpu.tensormap.descriptor
  // CHECK-GENERIC: "nvgpu.tma.async.load"(%{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 2, 1, 1, 1>}>
  nvgpu.tma.async.load %d[%i, %i], %b[%i] to %buf multicast_mask = %mask, predicate = %p : !tmap, !bars -> memref<64x32xf32, #gpu.address_space<workgroup>>
  // CHECK: nvgpu.tma.async.store %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x32xf32, #gpu.address_space<workgroup>> -> !nvgpu.tensormap.descriptor
  nvgpu.tma.async.store %buf to %d[%i, %i] : memref<64x32xf32, #gpu.address_space<workgroup>> -> !tmap
  // CHECK: %{{.*}} = nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}] : memref<*xf32> -> !nvgpu.tensormap.descriptor
  %d2 = nvgpu.tma.create.descriptor %u box[%i, %i] : memref<*xf32> -> !tmap
  return
}

// CHECK-LABEL: func.func @generic(
// CHECK: nvgpu.device_async_copy %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}], 4 : memref<16xf32> to memref<16xf32, 3 : i64>
// CHECK: nvgpu.mbarrier.try_wait.parity %{{.*}}[%{{.*}}], %{{.*}}, %{{.*}} : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
"func.func"() <{function_type = (memref<16xf32>, memref<16xf32, 3>, index, i1) -> (), sym_name = "generic"}> ({
^bb0(%src: memref<16xf32>, %dst: memref<16xf32, 3>, %i: index, %p: i1):
  %0 = "nvgpu.device_async_copy"(%dst, %i, %src, %i) <{dstElements = 4 : index, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}> : (memref<16xf32, 3>, index, memref<16xf32>, index) -> !nvgpu.device.async.token
  %b = "nvgpu.mbarrier.create"() : () -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
  "nvgpu.mbarrier.try_wait.parity"(%b, %p, %i, %i) : (!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>, i1, index, index) -> ()
  "func.return"() : () -> ()
}) : () -> ()
