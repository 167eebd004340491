// RUN: copy-opt %s --allow-unregistered-dialect --split-input-file --verify-diagnostics
// RUN: copy-opt %s --allow-unregistered-dialect --split-input-file | copy-opt --allow-unregistered-dialect --split-input-file | filecheck %s

// Ops the protocol analysis does not own, with their SMEM effects declared (`copy.effects`),
// in kernels whose protocol is correct: the fixed kernels of invalid-protocol-foreign.mlir,
// with no finding at all (no error, no warning). The declarations print as they are written.

// An mma stand-in reads a ring slot, after the wait that completes it.
// CHECK-LABEL: @unregistered_op_declares_a_read
// CHECK: "nv.mma"(%{{.*}}) {copy.effects = [#copy.effect<read 0>]}
func.func @unregistered_op_declares_a_read(%x: memref<256x256xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %ring = copy.alloc_smem : memref<2x64x64xf16, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  copy.async_copy %x[%c0, %c0] to %ring[%c0] barrier %bars[%c0] : memref<256x256xf16> to memref<2x64x64xf16, #copy.smem>, !copy.barrier<2>
  copy.barrier_wait %bars[%c0], %false : !copy.barrier<2>
  %slot = memref.subview %ring[%c0, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #copy.smem> to memref<64x64xf16, strided<[64, 1], offset: ?>, #copy.smem>
  "nv.mma"(%slot) {copy.effects = [#copy.effect<read 0>]} : (memref<64x64xf16, strided<[64, 1], offset: ?>, #copy.smem>) -> ()
  func.return
}

// -----

// ldmatrix in inline asm on a pointer taken from the tile, declared a read.
// CHECK-LABEL: @inline_asm_declares_a_read
// CHECK: llvm.inline_asm has_side_effects "ldmatrix{{.*}} {copy.effects = [#copy.effect<read 0>]} : (i32) -> i32
func.func @inline_asm_declares_a_read(%x: memref<256x256xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  %base = "memref.extract_aligned_pointer_as_index"(%tile) : (memref<64x64xf16, #copy.smem>) -> index
  %addr = arith.index_cast %base : index to i32
  %frag = llvm.inline_asm has_side_effects "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {$0}, [$1];", "=r,r" %addr {copy.effects = [#copy.effect<read 0>]} : (i32) -> i32
  func.return
}

// -----

// A wgmma stand-in reads its slot asynchronously; the consumer releases the slot only after
// the bulk wait that ends the read. Its descriptor comes from an op that declares it
// accesses nothing (`copy.effects = []`): the descriptor points into the slot.
// CHECK-LABEL: @async_read_released_after_its_wait
// CHECK: "nv.make_desc"(%{{.*}}) {copy.effects = []}
// CHECK: "nv.wgmma"(%{{.*}}) {copy.effects = [#copy.effect<async_read 0 until wait_group>]}
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @async_read_released_after_its_wait(%x: memref<1024x1024xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %ring = copy.alloc_smem : memref<2x64x64xf16, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<2>
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      scf.for %k = %c0 to %c8 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %again = arith.cmpi uge, %k, %c2 : index
        scf.if %again {
          %prev = arith.subi %lap, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%s], %pp : !copy.barrier<2>
        }
        %col = arith.muli %k, %c8 : index
        copy.async_copy %x[%c0, %col] to %ring[%s] barrier %full[%s] : memref<1024x1024xf16> to memref<2x64x64xf16, #copy.smem>, !copy.barrier<2>
      }
    }, {
    ^bb0(%t: index):
      scf.for %k = %c0 to %c8 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
        %slot = memref.subview %ring[%s, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #copy.smem> to memref<64x64xf16, strided<[64, 1], offset: ?>, #copy.smem>
        %desc = "nv.make_desc"(%slot) {copy.effects = []} : (memref<64x64xf16, strided<[64, 1], offset: ?>, #copy.smem>) -> i64
        "nv.wgmma"(%desc) {copy.effects = [#copy.effect<async_read 0 until wait_group>]} : (i64) -> ()
        copy.commit_group bulk
        copy.wait_group bulk 0 read_only
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<2>
      }
    }
    func.return
  }
}

// -----

// The threads' writes are fenced before the async read.
// CHECK-LABEL: @async_read_of_fenced_thread_writes
func.func @async_read_of_fenced_thread_writes() attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f16
  %tile = copy.alloc_smem : memref<64x128xf16, #copy.smem>
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  memref.store %v, %tile[%c0, %tid] : memref<64x128xf16, #copy.smem>
  copy.fence_async_shared
  "nv.wgmma"(%tile) {copy.effects = [#copy.effect<async_read 0 until wait_group>]} : (memref<64x128xf16, #copy.smem>) -> ()
  copy.commit_group bulk
  copy.wait_group bulk 0 read_only
  func.return
}

// -----

// memref.copy (xDSL's read and write traits) after the wait.
// CHECK-LABEL: @upstream_op_with_effect_traits
func.func @upstream_op_with_effect_traits(%x: memref<256x256xf16>, %y: memref<64x64xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  "memref.copy"(%tile, %y) : (memref<64x64xf16, #copy.smem>, memref<64x64xf16>) -> ()
  func.return
}
