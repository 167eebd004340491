// The data movement of an Ampere (sm_80) multistage GEMM, as CUTLASS's sm80 mainloop
// (MmaMultistage) and Triton's software-pipelined loops on A100 write it: C = A * B^T, A M x K
// and B N x K (K-major), f16 in, f32 out, 128x128x64 tiles, K known only at run time.
//
// Protocol: 128 threads, one CTA per tile. A ring of 3 SMEM stages filled by cp.async (every
// thread copies its 16-byte chunks of the A and B boxes): the prologue issues k-blocks 0 and 1
// (each a commit group, empty past the last k-block), then iteration k waits until at most
// one group is in flight (its own k-block has landed: cp.async.wait_group 1) and meets the
// block (the block barrier a cp.async wait_group ends with, CUTLASS's __syncthreads: every
// thread's chunks of k-block k are visible, and every thread has finished reading the stage
// of k-block k - 1), refills that stage with k-block k + 2 (a group, empty past the end) and
// reads stage k mod 3. The loop ends with cp.async.wait_group 0 (CUTLASS's drain; the groups
// still in flight then are empty), and each thread stores its row of C from registers.
//
// The math stand-in (as the corpus's other mainloops before wgmma): thread t reads, of each
// k-block, one element of each 16-byte unit of A row t and of B row t (columns 8q + t mod 8)
// and sums them in f32; its sum fills row t of the tile (tests/corpus/__init__.py,
// whole_row_tile).
//
// Launch: grid (N / 128, M / 128), 128 threads.
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @gemm_cp_async_multistage(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %zero = arith.constant 0.0 : f32
    %K = memref.dim %A, %c1 : memref<?x?xf16>
    %k_tiles = arith.divui %K, %c64 : index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %lane8 = arith.remui %t, %c8 : index
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    %smem_a = copy.alloc_smem : memref<3x128x64xf16, #copy.smem>
    %smem_b = copy.alloc_smem : memref<3x128x64xf16, #copy.smem>
    // The prologue: k-blocks 0 and 1.
    scf.for %p = %c0 to %c2 step %c1 {
      %in = arith.cmpi ult, %p, %k_tiles : index
      scf.if %in {
        %k0 = arith.muli %p, %c64 : index
        copy.async_copy %A[%m0, %k0] to %smem_a[%p] impl cp_async : memref<?x?xf16> to memref<3x128x64xf16, #copy.smem>
        copy.async_copy %B[%n0, %k0] to %smem_b[%p] impl cp_async : memref<?x?xf16> to memref<3x128x64xf16, #copy.smem>
      }
      copy.commit_group cp_async
    }
    %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%sum = %zero) -> (f32) {
      // cp.async.wait_group 1, then the block barrier the dialect's wait_group ends with
      copy.wait_group cp_async 1
      %kn = arith.addi %k, %c2 : index
      %more = arith.cmpi ult, %kn, %k_tiles : index
      scf.if %more {
        %sn = arith.remui %kn, %c3 : index
        %k0 = arith.muli %kn, %c64 : index
        copy.async_copy %A[%m0, %k0] to %smem_a[%sn] impl cp_async : memref<?x?xf16> to memref<3x128x64xf16, #copy.smem>
        copy.async_copy %B[%n0, %k0] to %smem_b[%sn] impl cp_async : memref<?x?xf16> to memref<3x128x64xf16, #copy.smem>
      }
      copy.commit_group cp_async
      %s = arith.remui %k, %c3 : index
      %sa = scf.for %q = %c0 to %c8 step %c1 iter_args(%x = %sum) -> (f32) {
        %col = arith.muli %q, %c8 : index
        %colx = arith.addi %col, %lane8 : index
        %v = memref.load %smem_a[%s, %t, %colx] : memref<3x128x64xf16, #copy.smem>
        %w = arith.extf %v : f16 to f32
        %y = arith.addf %x, %w : f32
        scf.yield %y : f32
      }
      %sb = scf.for %q = %c0 to %c8 step %c1 iter_args(%x = %sa) -> (f32) {
        %col = arith.muli %q, %c8 : index
        %colx = arith.addi %col, %lane8 : index
        %v = memref.load %smem_b[%s, %t, %colx] : memref<3x128x64xf16, #copy.smem>
        %w = arith.extf %v : f16 to f32
        %y = arith.addf %x, %w : f32
        scf.yield %y : f32
      }
      scf.yield %sb : f32
    }
    copy.wait_group cp_async 0
    // The epilogue: row t of the tile from registers.
    %r = arith.addi %m0, %t : index
    %accv = vector.broadcast %acc : f32 to vector<8xf32>
    scf.for %c = %c0 to %c16 step %c1 {
      %c8c = arith.muli %c, %c8 : index
      %col = arith.addi %n0, %c8c : index
      vector.store %accv, %C[%r, %col] : memref<?x?xf32>, vector<8xf32>
    }
    func.return
  }
}
