// The data movement of a software-pipelined TMA GEMM as Triton generates it for Hopper
// without warp specialization (`for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=4)`
// over TMA descriptors: the pipeliner's prologue, steady state and drain, with the Membar
// pass's barrier before a slot is refilled), with K known only at run time: C = A * B^T,
// A M x K and B N x K (K-major), f16 in, f32 out, 128x128x64 tiles, one tile per CTA.
//
// Protocol: one warpgroup (128 threads, num_warps = 4), no roles. The K loop runs
// ceil(K / 64) times (K = memref.dim of A; the last box reaches past K and TMA fills it with
// zeros). Prologue: thread 0 issues the loads of the first 4 k-blocks that exist, each
// slot's A and B loads arriving on full[s] (arrivals 2, each expecting its own bytes). Step
// k: every thread waits on full[k mod 4] (parity (k / 4) mod 2) and reads both slots (the
// wgmma operands; memref loads here); a block barrier (gpu.barrier) then orders every
// thread's reads before thread 0 refills the slot with k-block k + 4, if it exists. The
// epilogue writes the 128x128 tile to SMEM, fences, stores it with TMA and waits for the
// store to have read SMEM.
//
// The math stand-in (no wgmma in the dialect yet): thread t reads, of each k-block, one
// element of each 16-byte unit of A row t and of B row t (columns 8q + t mod 8, memref.load
// of the swizzled slots), sums them
// in f32 and writes the sum to the whole row t of the tile. tests/corpus/__init__.py holds
// the numpy model.
//
// Launch: grid (N / 128, M / 128), 128 threads.
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @gemm_dynamic_k(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c63 = arith.constant 63 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %zero = arith.constant 0.0 : f32
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %lane8 = arith.remui %t, %c8 : index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    %K = memref.dim %A, %c1 : memref<?x?xf16>
    %kr = arith.addi %K, %c63 : index
    %k_tiles = arith.divui %kr, %c64 : index
    %smem_a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_b = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %smem_c = copy.alloc_smem : memref<128x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<4>
    // Prologue: the first 4 k-blocks.
    scf.for %k = %c0 to %c4 step %c1 {
      %exists = arith.cmpi ult, %k, %k_tiles : index
      scf.if %exists {
        %k0 = arith.muli %k, %c64 : index
        copy.async_copy %A[%m0, %k0] to %smem_a[%k] barrier %full[%k] : memref<?x?xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
        copy.async_copy %B[%n0, %k0] to %smem_b[%k] barrier %full[%k] : memref<?x?xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
      }
    }
    %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%sum = %zero) -> (f32) {
      %s = arith.remui %k, %c4 : index
      %lap = arith.divui %k, %c4 : index
      %lp = arith.remui %lap, %c2 : index
      %phase = arith.cmpi ne, %lp, %c0 : index
      copy.barrier_wait %full[%s], %phase : !copy.barrier<4>
      %sa = scf.for %q = %c0 to %c8 step %c1 iter_args(%x = %sum) -> (f32) {
        %col = arith.muli %q, %c8 : index
        %colx = arith.addi %col, %lane8 : index
        %v = memref.load %smem_a[%s, %t, %colx] : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
        %w = arith.extf %v : f16 to f32
        %y = arith.addf %x, %w : f32
        scf.yield %y : f32
      }
      %sb = scf.for %q = %c0 to %c8 step %c1 iter_args(%x = %sa) -> (f32) {
        %col = arith.muli %q, %c8 : index
        %colx = arith.addi %col, %lane8 : index
        %v = memref.load %smem_b[%s, %t, %colx] : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
        %w = arith.extf %v : f16 to f32
        %y = arith.addf %x, %w : f32
        scf.yield %y : f32
      }
      // Every thread has read slot s: refill it with k-block k + 4.
      "gpu.barrier"() : () -> ()
      %kn = arith.addi %k, %c4 : index
      %more = arith.cmpi ult, %kn, %k_tiles : index
      scf.if %more {
        %k0 = arith.muli %kn, %c64 : index
        copy.async_copy %A[%m0, %k0] to %smem_a[%s] barrier %full[%s] : memref<?x?xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
        copy.async_copy %B[%n0, %k0] to %smem_b[%s] barrier %full[%s] : memref<?x?xf16> to memref<4x128x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<4>
      }
      scf.yield %sb : f32
    }
    scf.for %c = %c0 to %c16 step %c1 {
      %col = arith.muli %c, %c8 : index
      %accv = vector.broadcast %acc : f32 to vector<8xf32>
      vector.store %accv, %smem_c[%t, %col] : memref<128x128xf32, #copy.smem>, vector<8xf32>
    }
    copy.fence_async_shared
    copy.async_copy %smem_c to %C[%m0, %n0] : memref<128x128xf32, #copy.smem> to memref<?x?xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0 read_only
    func.return
  }
}
