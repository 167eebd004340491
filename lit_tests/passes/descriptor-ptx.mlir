// copy.matrix_descriptor through the whole pipeline to PTX: the slot's SMEM address in
// 16-byte units (& 0x3FFFF, >> 4) or-ed with the fields of the buffer's type.

// RUN: copy-opt %s --split-input-file -p convert-copy-to-nvvm | filecheck %s --check-prefix=NVVM
// RUN: copy-opt %s --split-input-file -t ptx | filecheck %s

// K-major 128B: LBO 16 (1), SBO 1024 (64 << 32), layout 1 << 62: 0x4000004000010000.
// MN-major 64B, two atoms of 32 bf16 along N over 64 K rows: LBO 64 * 64 = 4096 (256 << 16),
// SBO 8 * 64 = 512 (32 << 32), layout 2 << 62: 0x8000002001000000.
// K-major unswizzled, two 16-byte blocks of K over 64 rows: LBO 64 * 16 = 1024 (64 << 16),
// SBO 128 (8 << 32): 0x0000000800400000.
// NVVM-LABEL: func.func @descriptors
// NVVM: llvm.ptrtoint
// NVVM: llvm.and {{.*}} : i64
// NVVM: llvm.lshr {{.*}} : i64
// NVVM: llvm.mlir.constant(4611686293305360384) : i64
// NVVM: llvm.or
// NVVM: llvm.mlir.constant(-9223371899399045120) : i64
// NVVM: llvm.mlir.constant(34363932672) : i64
// CHECK: .target sm_90a
// CHECK: .entry descriptors(
// The and and the shift are one bit-field extract of bits 4..17.
// CHECK: bfe.u64 {{.*}}, 4, 14;
// CHECK: or.b64 {{.*}}, 4611686293305360384;
// CHECK: or.b64 {{.*}}, -9223371899399045120;
// CHECK: or.b64 {{.*}}, 34363932672;
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @descriptors(%out: memref<3xi64>, %slot: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %b = copy.alloc_smem : memref<2x2x64x32xbf16, #copy.smem<swizzle = 64>>
    %u = copy.alloc_smem : memref<2x64x8xf16, #copy.smem>
    %da = copy.matrix_descriptor %a[%slot] major k : memref<4x128x64xf16, #copy.smem<swizzle = 128>> -> i64
    %db = copy.matrix_descriptor %b[%slot] major mn : memref<2x2x64x32xbf16, #copy.smem<swizzle = 64>> -> i64
    %du = copy.matrix_descriptor %u[] major k : memref<2x64x8xf16, #copy.smem> -> i64
    memref.store %da, %out[%c0] : memref<3xi64>
    memref.store %db, %out[%c1] : memref<3xi64>
    memref.store %du, %out[%c2] : memref<3xi64>
    func.return
  }
}

// -----

// The sm_100a form (tcgen05): K-major 128B, LBO 16 (1 << 16), SBO 1024 (64 << 32), version
// 1 << 46, layout 2 << 61: 0x4000404000010000.
// NVVM-LABEL: func.func @tcgen05_descriptor
// NVVM: llvm.mlir.constant(4611756662049538048) : i64
// CHECK: .target sm_100a
// CHECK: .entry tcgen05_descriptor(
// CHECK: bfe.u64 {{.*}}, 4, 14;
// CHECK: or.b64 {{.*}}, 4611756662049538048;
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tcgen05_descriptor(%out: memref<1xi64>, %slot: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = copy.alloc_smem : memref<4x128x64xbf16, #copy.smem<swizzle = 128>>
    %d = copy.matrix_descriptor %a[%slot] major k tcgen05 : memref<4x128x64xbf16, #copy.smem<swizzle = 128>> -> i64
    memref.store %d, %out[%c0] : memref<1xi64>
    func.return
  }
}
