// The data movement of CUTLASS's sm90 implicit-GEMM convolution (fprop,
// KernelImplicitTmaWarpSpecializedSm90: the activations through TMA's im2col mode, the
// filter through a tiled map): a 3x3 convolution, stride 1, padding 1, of an NHWC input
// 2x8x8x64 (f16) with 64 filters (KRSC, as a 64 x 576 matrix), the 128 output pixels
// (N x P x Q) x 64 channels as one tile.
//
// Protocol: 2 warpgroups (256 threads). The producer warp walks the 9 filter taps (r, s),
// one k-block each (the 64 channels), through a 3-stage ring (slot kb mod 3, its phase
// starting at 1): it acquires the slot (empty[s], one arrival per consumer warp), expects
// 24576 bytes on full[s] and issues the im2col load of the activations (128 pixels x 64
// channels from the tap's offsets; lower and upper corners -1: the padding reads zeros) and
// the filter's 64 x 64 tile of the tap. The consumer warpgroup waits on full[s], reads both
// slots (memref loads here: the stand-in for the wgmma) and releases the slot (4 warp
// arrivals). The epilogue writes the tile to SMEM, fences and stores it with TMA.
//
// The math stand-in: thread t reads, of each tap, one element of each 16-byte unit of its
// pixel's row of the im2col tile and of filter row t mod 64 (columns 8q + t mod 8), and sums
// them into the whole row t of the output. tests/corpus/__init__.py holds the numpy model
// (tests/interpreter/test_im2col.py's model of the im2col mode).
//
// Launch: grid (1), 256 threads.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @conv_fprop_im2col(%X: memref<2x8x8x64xf16>, %W: memref<64x576xf16>, %Y: memref<128x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c8 = arith.constant 8 : index
    %c9 = arith.constant 9 : index
    %c12 = arith.constant 12 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %m1 = arith.constant -1 : index
    %true = arith.constant true
    %zero = arith.constant 0.0 : f32
    %smem_a = copy.alloc_smem : memref<3x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<3x64x64xf16, #copy.smem<swizzle = 128>>
    %smem_c = copy.alloc_smem : memref<128x64xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<3>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<3>
    copy.warp_specialize warps [4, 4] maxnreg [40, 232] {
    ^bb0(%t: index):
      // The producer warp: per filter tap (r, s), the activations' im2col tile (128 output
      // pixels x 64 channels, zeros where the tap falls in the padding) and the filter's.
      %warp = arith.divui %t, %c32 : index
      %is_dma = arith.cmpi eq, %warp, %c0 : index
      scf.if %is_dma {
        scf.for %kb = %c0 to %c9 step %c1 {
          %s = arith.remui %kb, %c3 : index
          %lap = arith.divui %kb, %c3 : index
          %lp = arith.remui %lap, %c2 : index
          %phase = arith.cmpi ne, %lp, %c0 : index
          %acquire = arith.xori %phase, %true : i1
          %r = arith.divui %kb, %c3 : index
          %q = arith.remui %kb, %c3 : index
          %r16 = arith.index_cast %r : index to i16
          %q16 = arith.index_cast %q : index to i16
          %k0 = arith.muli %kb, %c64 : index
          copy.barrier_wait %empty[%s], %acquire : !copy.barrier<3>
          copy.barrier_arrive_expect_tx %full[%s], 24576 : !copy.barrier<3>
          copy.im2col_load %X[%c0, %m1, %m1, %c0] offsets [%r16, %q16] to %smem_a[%s] barrier %full[%s] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>, arrive = false} : memref<2x8x8x64xf16> to memref<3x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<3>
          copy.async_copy %W[%c0, %k0] to %smem_b[%s] barrier %full[%s] {arrive = false} : memref<64x576xf16> to memref<3x64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<3>
        }
      }
    }, {
    ^bb0(%t: index):
      // The consumer warpgroup: thread t holds output pixel t.
      %lane8 = arith.remui %t, %c8 : index
      %kr = arith.remui %t, %c64 : index
      %acc = scf.for %kb = %c0 to %c9 step %c1 iter_args(%sum = %zero) -> (f32) {
        %s = arith.remui %kb, %c3 : index
        %lap = arith.divui %kb, %c3 : index
        %lp = arith.remui %lap, %c2 : index
        %phase = arith.cmpi ne, %lp, %c0 : index
        copy.barrier_wait %full[%s], %phase : !copy.barrier<3>
        %sa = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %sum) -> (f32) {
          %col = arith.muli %j, %c8 : index
          %colx = arith.addi %col, %lane8 : index
          %v = memref.load %smem_a[%s, %t, %colx] : memref<3x128x64xf16, #copy.smem<swizzle = 128>>
          %w = arith.extf %v : f16 to f32
          %y = arith.addf %x, %w : f32
          scf.yield %y : f32
        }
        %sb = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %sa) -> (f32) {
          %col = arith.muli %j, %c8 : index
          %colx = arith.addi %col, %lane8 : index
          %v = memref.load %smem_b[%s, %kr, %colx] : memref<3x64x64xf16, #copy.smem<swizzle = 128>>
          %w = arith.extf %v : f16 to f32
          %y = arith.addf %x, %w : f32
          scf.yield %y : f32
        }
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<3>
        scf.yield %sb : f32
      }
      scf.for %c = %c0 to %c8 step %c1 {
        %col = arith.muli %c, %c8 : index
        %accv = vector.broadcast %acc : f32 to vector<8xf32>
        vector.store %accv, %smem_c[%t, %col] : memref<128x64xf32, #copy.smem>, vector<8xf32>
      }
      copy.fence_async_shared
      copy.async_copy %smem_c to %Y[%c0, %c0] : memref<128x64xf32, #copy.smem> to memref<128x64xf32>
      copy.commit_group bulk
      copy.wait_group bulk 0 read_only
    }
    func.return
  }
}
