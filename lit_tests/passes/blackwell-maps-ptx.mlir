// RUN: copy-opt %s --split-input-file | copy-opt --split-input-file | filecheck %s --check-prefix=ROUND
// RUN: copy-opt %s --split-input-file -p convert-copy-to-nvvm | filecheck %s --check-prefix=ABI
// RUN: copy-opt %s --split-input-file -t ptx --target sm_100a | filecheck %s --check-prefix=PTX
// RUN: copy-opt %s --split-input-file --interpret | filecheck %s --check-prefix=INTERP

// Under the interpreter (random inputs) every kernel runs clean: no race, no broken rule.
// INTERP: @fp4_tile: {{.*}}: clean
// INTERP: @atom_swizzles: {{.*}}: clean
// INTERP: @atom_threads: {{.*}}: clean
// INTERP: @align16_tiles: {{.*}}: clean
// INTERP: @base32b_descriptor: {{.*}}: clean
// INTERP: @fp4_prefetch: {{.*}}: clean
// INTERP: @im2col_atom: {{.*}}: clean

// The Blackwell tensor-map forms (copy_dialect/blackwell_maps.py): an FP4 tile load and
// store through a 16U4_ALIGN8B map (SMEM packed two elements a byte: 64 x 128 f4 = 4096
// bytes, the transaction count), and a load into each 128B_ATOM swizzle, whose map records
// the atom and the flip (the runtime encodes CU_TENSOR_MAP_SWIZZLE_128B_ATOM_*). The PTX of
// a TMA copy does not depend on the map's form. tests/dialect/test_blackwell_maps.py
// assembles these kernels for sm_100a, sm_103a and sm_120a. Not run: no Blackwell GPU here.

// ROUND-LABEL: func.func @fp4_tile
// ABI-LABEL: func.func @fp4_tile
// ABI: dtype = "16U4_ALIGN8B", written = false, l2_promotion = 128 : i64}, {kind = "tensor_map", arg = 1 : i64, box = array<i64: 64, 128>, swizzle = 16 : i64, oob = "zeros", dtype = "16U4_ALIGN8B", written = true, l2_promotion = 128 : i64}]
// PTX-LABEL: .entry fp4_tile
// PTX: mov.b32 {{%r[0-9]+}}, 4096;
// PTX: mbarrier.arrive.expect_tx.shared.b64
// PTX: cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes
// PTX: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @fp4_tile(%x: memref<256x256xf4E2M1FN>, %y: memref<256x256xf4E2M1FN>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // ROUND: copy.alloc_smem : memref<64x128xf4E2M1FN, #copy.smem>
    %buf = copy.alloc_smem : memref<64x128xf4E2M1FN, #copy.smem>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] : memref<256x256xf4E2M1FN> to memref<64x128xf4E2M1FN, #copy.smem>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    copy.async_copy %buf to %y[%c0, %c0] : memref<64x128xf4E2M1FN, #copy.smem> to memref<256x256xf4E2M1FN>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// ROUND-LABEL: func.func @atom_swizzles
// ABI-LABEL: func.func @atom_swizzles
// ABI-DAG: dtype = "BFLOAT16", written = false, l2_promotion = 128 : i64, swizzle_atom = 32 : i64}
// ABI-DAG: dtype = "BFLOAT16", written = false, l2_promotion = 128 : i64, swizzle_atom = 32 : i64, swizzle_flip = true}
// ABI-DAG: dtype = "UINT8", written = false, l2_promotion = 128 : i64, swizzle_atom = 64 : i64}
// PTX-LABEL: .entry atom_swizzles
// PTX-COUNT-3: cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @atom_swizzles(%x: memref<256x256xbf16>, %z: memref<256x256xi8>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<3>
    // ROUND: copy.alloc_smem : memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 32>>
    %a = copy.alloc_smem : memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 32>>
    // ROUND: copy.alloc_smem : memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 32, flip>>
    %b = copy.alloc_smem : memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 32, flip>>
    // ROUND: copy.alloc_smem : memref<64x128xi8, #copy.smem<swizzle = 128, atom = 64>>
    %c = copy.alloc_smem : memref<64x128xi8, #copy.smem<swizzle = 128, atom = 64>>
    copy.async_copy %x[%c0, %c0] to %a barrier %bar[%c0] : memref<256x256xbf16> to memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 32>>, !copy.barrier<3>
    copy.async_copy %x[%c0, %c0] to %b barrier %bar[%c1] : memref<256x256xbf16> to memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 32, flip>>, !copy.barrier<3>
    copy.async_copy %z[%c0, %c0] to %c barrier %bar[%c2] : memref<256x256xi8> to memref<64x128xi8, #copy.smem<swizzle = 128, atom = 64>>, !copy.barrier<3>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<3>
    copy.barrier_wait %bar[%c1], %f : !copy.barrier<3>
    copy.barrier_wait %bar[%c2], %f : !copy.barrier<3>
    func.return
  }
}

// -----

// Threads read a TMA-filled flip buffer (copy_dialect.layout: the 32-byte unit number, bits
// 5..6, XOR bits 7..8, and bit 3 XOR bit 7): the masks of the two XORs.
// ROUND-LABEL: func.func @atom_threads
// ROUND: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 32, flip>>
// PTX-LABEL: .entry atom_threads
// PTX-DAG: and.b64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, 8;
// PTX-DAG: and.b64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, 96;
// PTX: ld.shared.b16
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @atom_threads(%src: memref<64x64xbf16>, %out: memref<64x64xbf16>, %back: memref<64x64xbf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cols = arith.constant 64 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 32, flip>>
    copy.async_copy %src[%c0, %c0] to %buf barrier %bar[%c0] : memref<64x64xbf16> to memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 32, flip>>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    scf.for %j = %c0 to %cols step %c1 {
      %x = memref.load %buf[%tid, %j] : memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 32, flip>>
      memref.store %x, %out[%tid, %j] : memref<64x64xbf16>
    }
    copy.async_copy %buf to %back[%c0, %c0] : memref<64x64xbf16, #copy.smem<swizzle = 128, atom = 32, flip>> to memref<64x64xbf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// Packed values 16 to a 16-byte unit (#copy.smem<align16>): an FP4 load through a
// 16U4_ALIGN16B map into slot 1 of a ring (each slot 32 x 128 bytes: a byte a value, 4096
// bytes), an FP6 load through a 16U6_ALIGN16B map with the 32-byte atom, and an FP6 store with
// the 64-byte atom (a store-only mode of 16U6_ALIGN16B). The transaction bytes are the packed
// data's (32 x 128 x 4 / 8 = 2048, x 6 / 8 = 3072), as CUTLASS's TmaTransactionBytes count
// them; the SMEM, a byte a value.
// ROUND-LABEL: func.func @align16_tiles
// ROUND: copy.alloc_smem : memref<2x32x128xf4E2M1FN, #copy.smem<swizzle = 128, align16>>
// ABI-LABEL: func.func @align16_tiles
// ABI-DAG: dtype = "16U4_ALIGN16B", written = false, l2_promotion = 128 : i64}
// ABI-DAG: dtype = "16U6_ALIGN16B", written = false, l2_promotion = 128 : i64, swizzle_atom = 32 : i64}
// ABI-DAG: dtype = "16U6_ALIGN16B", written = true, l2_promotion = 128 : i64, swizzle_atom = 64 : i64}
// ABI-DAG: smem_bytes = 18432
// PTX-LABEL: .entry align16_tiles
// PTX-DAG: mov.b32 {{%r[0-9]+}}, 2048;
// PTX-DAG: mov.b32 {{%r[0-9]+}}, 3072;
// PTX-DAG: cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [{{%rd[0-9]+}}+5120]
// PTX-DAG: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}+13312]
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @align16_tiles(%a: memref<256x256xf4E2M1FN>, %b: memref<256x256xf6E2M3FN>, %c: memref<256x256xf6E3M2FN>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %fa = copy.alloc_smem : memref<2x32x128xf4E2M1FN, #copy.smem<swizzle = 128, align16>>
    %fb = copy.alloc_smem : memref<32x128xf6E2M3FN, #copy.smem<swizzle = 128, atom = 32, align16>>
    copy.async_copy %a[%c0, %c0] to %fa[%c1] barrier %bar[%c0] : memref<256x256xf4E2M1FN> to memref<2x32x128xf4E2M1FN, #copy.smem<swizzle = 128, align16>>, !copy.barrier<2>
    copy.async_copy %b[%c0, %c0] to %fb barrier %bar[%c1] : memref<256x256xf6E2M3FN> to memref<32x128xf6E2M3FN, #copy.smem<swizzle = 128, atom = 32, align16>>, !copy.barrier<2>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<2>
    copy.barrier_wait %bar[%c1], %f : !copy.barrier<2>
    %fc = copy.alloc_smem : memref<32x128xf6E3M2FN, #copy.smem<swizzle = 128, atom = 64, align16>>
    copy.async_copy %fc to %c[%c0, %c0] : memref<32x128xf6E3M2FN, #copy.smem<swizzle = 128, atom = 64, align16>> to memref<256x256xf6E3M2FN>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// tcgen05's descriptor of an MN-major tile of 32-byte swizzle atoms: layout type 1
// (SWIZZLE_128B_BASE32B, bits 61-63), the version 0b001 (bits 46-48), LBO the next atom of
// MN (32 K rows x 128 bytes = 4096 >> 4 = 256 at bit 16), SBO the atom's 4 K rows (512 >> 4
// = 32 at bit 32): (1 << 61) | (1 << 46) | (32 << 32) | (256 << 16), OR-ed with the address.
// ROUND-LABEL: func.func @base32b_descriptor
// ROUND: copy.matrix_descriptor %{{.*}}[%{{.*}}] major mn tcgen05 : memref<2x32x32xf32, #copy.smem<swizzle = 128, atom = 32>> -> i64
// PTX-LABEL: .entry base32b_descriptor
// PTX: or.b64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, 2305913515413602304;
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @base32b_descriptor(%x: memref<256x256xf32>, %out: memref<1xi64>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %b = copy.alloc_smem : memref<2x32x32xf32, #copy.smem<swizzle = 128, atom = 32>>
    copy.async_copy %x[%c0, %c0] to %b[%c1] barrier %bar[%c0] : memref<256x256xf32> to memref<2x32x32xf32, #copy.smem<swizzle = 128, atom = 32>>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>
    %d = copy.matrix_descriptor %b[%c1] major mn tcgen05 : memref<2x32x32xf32, #copy.smem<swizzle = 128, atom = 32>> -> i64
    memref.store %d, %out[%c0] : memref<1xi64>
    func.return
  }
}

// -----

// TMA prefetches of packed boxes: FP4 through a 16U4_ALIGN8B map, FP6 through 16U6_ALIGN16B
// (a prefetch has no SMEM: the 6-bit map type is the only one, its box 128 values wide).
// ABI-LABEL: func.func @fp4_prefetch
// ABI-DAG: dtype = "16U4_ALIGN8B", written = false
// ABI-DAG: dtype = "16U6_ALIGN16B", written = false
// PTX-LABEL: .entry fp4_prefetch
// PTX-COUNT-2: cp.async.bulk.prefetch.tensor.2d.L2.global
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @fp4_prefetch(%x: memref<256x256xf4E2M1FN>, %z: memref<256x256xf6E3M2FN>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    copy.prefetch %x[%c0, %c0] {box = array<i64: 64, 128>} : memref<256x256xf4E2M1FN>
    copy.prefetch %z[%c0, %c0] {box = array<i64: 32, 128>} : memref<256x256xf6E3M2FN>
    func.return
  }
}

// -----

// An im2col load into a 32-byte-atom buffer: its im2col map records the atom too.
// ABI-LABEL: func.func @im2col_atom
// ABI: {kind = "im2col_map", {{.*}}, swizzle = 128 : i64, {{.*}}, swizzle_atom = 32 : i64,
// PTX-LABEL: .entry im2col_atom
// PTX: cp.async.bulk.tensor.4d.shared::cta.global.im2col.mbarrier::complete_tx::bytes
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @im2col_atom(%x4: memref<2x9x9x64xf16>, %r: i16, %s: i16) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %m1 = arith.constant -1 : index
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %b4 = copy.alloc_smem : memref<128x64xf16, #copy.smem<swizzle = 128, atom = 32>>
    copy.im2col_load %x4[%c1, %m1, %c2, %c8] offsets [%r, %s] to %b4 barrier %bars[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -2, -2>, strides = array<i64: 2, 2>} : memref<2x9x9x64xf16> to memref<128x64xf16, #copy.smem<swizzle = 128, atom = 32>>, !copy.barrier<1>
    %f = arith.constant false
    copy.barrier_wait %bars[%c0], %f : !copy.barrier<1>
    func.return
  }
}
