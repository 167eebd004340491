// RUN: copy-opt %s -t ptx --target sm_90a | filecheck %s
// RUN: copy-opt %s -t ptx --target sm_90a -p 'lower-copy-to-llvm{prefetch-tensormaps=false}' | filecheck %s --check-prefix=OFF

// The tensor-map prefetch (issue I, item 4): at the kernel's entry the elected thread
// prefetches each of the kernel's tensor maps (two here: the load's and the store's) with
// `prefetch.param.tensormap`, before the first TMA instruction; a kernel with
// `copy.prefetch_tensormaps = false` does not, nor does any kernel with the pass option
// `prefetch-tensormaps=false` (OFF).

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @two_maps(%x: memref<4096x4096xf32>, %y: memref<4096x4096xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %col = arith.muli %bx, %c64 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %col] to %tile barrier %bar[%c0] : memref<4096x4096xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<4096x4096xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }

  func.func @opted_out(%x: memref<4096x4096xf32>, %y: memref<4096x4096xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.prefetch_tensormaps = false} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<4096x4096xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<4096x4096xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// The maps are the kernel's last two parameters; the elected thread (thread 0) branches
// around the prefetches.
// CHECK-LABEL: .entry two_maps(
// CHECK:       .param .align 64 .b8 two_maps_param_2[128],
// CHECK-NEXT:  .param .align 64 .b8 two_maps_param_3[128]
// CHECK-DAG:   mov.b64 [[MAP2:%rd[0-9]+]], two_maps_param_2;
// CHECK-DAG:   mov.b64 [[MAP3:%rd[0-9]+]], two_maps_param_3;
// CHECK:       @%p{{[0-9]+}} bra
// CHECK-NEXT:  prefetch.param.tensormap [[[MAP2]]];
// CHECK-NEXT:  prefetch.param.tensormap [[[MAP3]]];
// CHECK-NOT:   prefetch
// CHECK:       cp.async.bulk.tensor.2d.shared::cta.global
// CHECK-NOT:   prefetch
// CHECK:       cp.async.bulk.tensor.2d.global.shared::cta
// CHECK-LABEL: .entry opted_out(
// CHECK-NOT:   prefetch
// CHECK:       ret;

// OFF-LABEL:   .entry two_maps(
// OFF-NOT:     prefetch
// OFF:         cp.async.bulk.tensor.2d.shared::cta.global
// OFF-LABEL:   .entry opted_out(
// OFF-NOT:     prefetch
// OFF:         ret;
