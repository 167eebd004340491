// RUN: copy-opt %s -t ptx --target sm_90a | filecheck %s

// A raw cache_hint (one of the encodings createpolicy makes, rule L1) reaches the PTX as the
// `.L2::cache_hint` form and its 64-bit operand on every op that accepts it: a TMA prefetch
// and a bulk prefetch (the prefetches took the attribute and dropped it, issue S), a TMA
// load and a TMA store. 0x12F0000000000000 is evict_first, 0x14F0000000000000 evict_last,
// 0x1000000000000000 evict_normal.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @raw_hints(%x: memref<4096x4096xf32>, %y: memref<4096x4096xf32>, %z: memref<64x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %col = arith.muli %bx, %c64 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.prefetch %x[%c0, %col] {box = array<i64: 64, 64>, cache_hint = 1508705875169116160 : i64} : memref<4096x4096xf32>
    copy.prefetch %z[%c0, %c0] impl bulk {box = array<i64: 4, 256>, cache_hint = 1364590687093260288 : i64} : memref<64x256xf32>
    copy.async_copy %x[%c0, %col] to %tile barrier %bar[%c0] {cache_hint = 1364590687093260288 : i64} : memref<4096x4096xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%c0, %col] {cache_hint = 1152921504606846976 : i64} : memref<64x64xf32, #copy.smem> to memref<4096x4096xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// CHECK-LABEL: .entry raw_hints(
// CHECK:       mov.b64 [[LAST:%rd[0-9]+]], 1508705875169116160;
// CHECK:       cp.async.bulk.prefetch.tensor.2d.L2.global.tile.L2::cache_hint [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [[LAST]];
// CHECK:       mov.b64 [[FIRST:%rd[0-9]+]], 1364590687093260288;
// CHECK:       cp.async.bulk.prefetch.L2.global.L2::cache_hint [{{%rd[0-9]+}}], {{%r[0-9]+}}, [[FIRST]];
// CHECK:       cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}], [[FIRST]];
// CHECK:       mov.b64 [[NORMAL:%rd[0-9]+]], 1152921504606846976;
// CHECK-NEXT:  cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.L2::cache_hint [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}], [[NORMAL]];
