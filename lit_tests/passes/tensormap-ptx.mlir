// RUN: copy-opt %s -t ptx --target sm_90a | filecheck %s

// A tensor map in global memory through the whole pipeline: the map is a slot of the
// workspace parameter the kernel gets last (a plain pointer, not a 128-byte .param map);
// each replace is `tensormap.replace.tile` on the map's global address, its dim counted
// innermost first in PTX (global_dim[0], the rows, is ord 1; global_stride[0] is ord 0);
// the release fence follows the replaces, the acquire names the map and its 128 bytes, and
// the TMA load issues through the same map address. PTX ISA 8.3 (tensormap.replace).
// ptxas -arch=sm_90a accepts this PTX.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @repoint(%x: memref<?x?xf32>, %pool: memref<4096xf32>, %off: index, %rows: i32, %pitch: i64) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %m = copy.tensormap_global %x slot %c3 of 4 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    copy.tensormap_replace %m global_address to %pool[%off] : !copy.tensormap<8x64xf32>, memref<4096xf32>
    copy.tensormap_replace %m global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32
    copy.tensormap_replace %m global_stride[0] to %pitch : !copy.tensormap<8x64xf32>, i64
    copy.tensormap_fence_release %m : !copy.tensormap<8x64xf32>
    copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    func.return
  }
}

// CHECK:       .version 8.6
// CHECK-LABEL: .entry repoint(
// CHECK-NOT:   .param .align 64 .b8
// CHECK:       .param .u64 .ptr .align 1 repoint_param_5
// CHECK:       ld.param.b64 [[WS:%rd[0-9]+]], [repoint_param_5];
// Slot 3 of the workspace: 3 * 128 bytes in.
// CHECK:       add.s64 [[MAP:%rd[0-9]+]], [[WS]], 384;
// CHECK:       cvta.to.global.u64 %tm, [[MAP]]; tensormap.replace.tile.global_address.global.b1024.b64 [%tm], {{%rd[0-9]+}};
// CHECK:       cvta.to.global.u64 %tm, [[MAP]]; tensormap.replace.tile.global_dim.global.b1024.b32 [%tm], 1, {{%r[0-9]+}};
// CHECK:       cvta.to.global.u64 %tm, [[MAP]]; tensormap.replace.tile.global_stride.global.b1024.b64 [%tm], 0, {{%rd[0-9]+}};
// CHECK:       fence.proxy.tensormap::generic.release.gpu;
// CHECK:       fence.proxy.tensormap::generic.acquire.gpu [[[MAP]]], 128;
// CHECK:       cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [{{%rd[0-9]+}}], [[[MAP]], {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}];
