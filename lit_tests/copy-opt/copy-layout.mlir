// copy-layout: an SMEM buffer's 16-byte chunks under its swizzle, its bank conflicts, a
// multi-buffer's slot, the TMEM map of a tcgen05.ld shape, and bad input (exit code 2).
// This file holds no IR: each RUN line passes copy-layout a type or a shape.

// RUN: copy-layout 'memref<8x32xf32, #copy.smem<swizzle = 128>>' | filecheck %s --check-prefix=SW128
// SW128: memref<8x32xf32, #copy.smem<swizzle = 128>>: 8 rows of 128 bytes, row pitch 128 bytes, swizzle 128 B
// SW128-NEXT: 8 chunks of 16 bytes per row (4 elements of f32 each); the slot starts at byte 0
// SW128:       row |   0   1   2   3   4   5   6   7
// SW128:      0 |   0   1   2   3   4   5   6   7
// SW128-NEXT: 1 |   1   0   3   2   5   4   7   6
// SW128-NEXT: 2 |   2   3   0   1   6   7   4   5
// SW128:      7 |   7   6   5   4   3   2   1   0

// RUN: copy-layout 'memref<8x32xf32, #copy.smem<swizzle = 128>>' --swizzle 64 --show bank | filecheck %s --check-prefix=SW64
// SW64: swizzle 64 B
// SW64:      0 |   0   4   8  12  16  20  24  28
// SW64-NEXT: 1 |   4   0  12   8  20  16  28  24
// SW64-NEXT: 2 |   8  12   0   4  24  28  16  20

// RUN: copy-layout 'memref<32x32xf32, #copy.smem>' --conflicts | filecheck %s --check-prefix=NONE
// NONE: swizzle none
// NONE:      1 |   0   1   2   3   4   5   6   7
// NONE: bank conflicts: one warp reads a column, thread t reading row t (rows 0-31)
// NONE: 0  0-3        32 wavefronts (32-way conflict)      32 wavefronts (8-way conflict)
// NONE: worst: 32-way for element reads, 8-way for 16-byte reads

// RUN: copy-layout 'memref<32x32xf32, #copy.smem<swizzle = 128>>' --conflicts | filecheck %s --check-prefix=CONFLICTS
// CONFLICTS: worst: 4-way for element reads, 1-way for 16-byte reads

// RUN: copy-layout 'memref<4x16x64xbf16, #copy.smem<swizzle = 128>>' --slot 3 --rows 2 | filecheck %s --check-prefix=SLOT
// SLOT: slot [3]: 16 rows of 128 bytes
// SLOT: the slot starts at byte 6144
// SLOT:      1 |   1   0   3   2   5   4   7   6
// SLOT-NEXT: ... (14 more rows)

// RUN: copy-layout --tmem 16x256b --warp 1 | filecheck %s --check-prefix=TMEM
// TMEM: tcgen05.ld/st .16x256b.x1: 4 registers per thread, 16 lanes x 8 columns (32-bit) per warp
// TMEM: warp 1 reads lanes 32-47 (quarter 1)
// TMEM:      32 |  t0.r0  t0.r1  t1.r0  t1.r1  t2.r0  t2.r1  t3.r0  t3.r1
// TMEM:      40 |  t0.r2  t0.r3  t1.r2  t1.r3  t2.r2  t2.r3  t3.r2  t3.r3
// TMEM-NOT:  48 |

// RUN: copy-layout --tmem 16x32bx2 --num 1 --offset 2 | filecheck %s --check-prefix=HALVES
// HALVES:  0 |  t0.r0      . t16.r0

// RUN: copy-layout 'memref<8x8xf32, #copy.smem<swizzle = 128>>' --svg %t.svg --no-text
// RUN: filecheck %s --check-prefix=SVG < %t.svg
// SVG: <svg xmlns="http://www.w3.org/2000/svg"
// SVG: <rect class="chunk" {{.*}}><title>row 0, elements 0-3 (GMEM chunk 0): SMEM chunk 0, bank 0, byte 0</title></rect>
// SVG: <rect class="pad"
// SVG: </svg>

// RUN: not copy-layout 'memref<8x8xf32>' 2>&1 | filecheck %s --check-prefix=GMEM
// GMEM: copy-layout: error: expected a memref in shared memory (#copy.smem), got one in GMEM: memref<8x8xf32>
// GMEM-NOT: Traceback

// RUN: not copy-layout 'memref<8x8xf32, #copy.smem<swizzle = 96>>' 2>&1 | filecheck %s --check-prefix=SWIZZLE
// SWIZZLE: copy-layout: error: the type 'memref<8x8xf32, #copy.smem<swizzle = 96>>' does not verify: Unsupported swizzle: 96 (the swizzle is 16 (none), 32, 64 or 128 bytes)

// RUN: not copy-layout 'vector<4xf32>' 2>&1 | filecheck %s --check-prefix=NOT-MEMREF
// NOT-MEMREF: copy-layout: error: expected a memref type, got vector<4xf32>
