// RUN: copy-opt %s --allow-unregistered-dialect --split-input-file --verify-diagnostics

// SMEM effects of ops the protocol analysis does not own (an unregistered op, llvm.inline_asm,
// an upstream op): one per chunk. An op that takes SMEM, or a value computed from it (a view,
// a pointer, a descriptor), and whose effects nothing declares is a warning (FX1); what it
// declares (`copy.effects`, analysis/kernel/effects.py) or its xDSL traits say is checked as
// the analysis' own ops are: a read or write as the threads' loads and stores (P1-P3), an
// async_read as a TMA store's read (P1, P2, P4). The checks: analysis/protocol/foreign.py.
// `// fix: s|OLD|NEW|` lines give the edit the note describes (tests/tools/test_fix_notes.py).

// An mma stand-in reads a ring slot through a view, and says nothing of what it does.
// rule: FX1
func.func @fx1_unregistered_op_reads_a_slot(%x: memref<256x256xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %ring = copy.alloc_smem : memref<2x64x64xf16, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  copy.async_copy %x[%c0, %c0] to %ring[%c0] barrier %bars[%c0] : memref<256x256xf16> to memref<2x64x64xf16, #copy.smem>, !copy.barrier<2>
  copy.barrier_wait %bars[%c0], %false : !copy.barrier<2>
  %slot = memref.subview %ring[%c0, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #copy.smem> to memref<64x64xf16, strided<[64, 1], offset: ?>, #copy.smem>
  // expected-warning@+2 {{cannot prove what this op does with %ring[0] (operand 0): the protocol analysis does not know the SMEM effects of nv.mma}}
  // expected-note@+1 {{declare its effects: {copy.effects = [#copy.effect<read 0>]} for a read before it returns}}
  "nv.mma"(%slot) : (memref<64x64xf16, strided<[64, 1], offset: ?>, #copy.smem>) -> ()
  func.return
}

// -----

// ldmatrix in inline asm, on a pointer taken from the tile, says nothing of what it does.
// rule: FX1
func.func @fx1_inline_asm_takes_an_smem_pointer(%x: memref<256x256xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  %base = "memref.extract_aligned_pointer_as_index"(%tile) : (memref<64x64xf16, #copy.smem>) -> index
  %addr = arith.index_cast %base : index to i32
  // expected-warning@+2 {{cannot prove what this op does with %tile (operand 0): the protocol analysis does not know the SMEM effects of llvm.inline_asm}}
  // expected-note@+1 {{declare its effects: {copy.effects = [#copy.effect<read 0>]} for a read before it returns}}
  %frag = llvm.inline_asm has_side_effects "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {$0}, [$1];", "=r,r" %addr : (i32) -> i32
  func.return
}

// -----

// The declared read of the slot comes before the wait that completes its load.
// rule: P1
// fix: s|  "nv.mma"(%slot)|  copy.barrier_wait %bars[%c0], %false : !copy.barrier<2> "nv.mma"(%slot)|
func.func @p1_declared_read_before_the_wait(%x: memref<256x256xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %ring = copy.alloc_smem : memref<2x64x64xf16, #copy.smem>
  %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
  // expected-note@+1 {{the copy that fills it}}
  copy.async_copy %x[%c0, %c0] to %ring[%c0] barrier %bars[%c0] : memref<256x256xf16> to memref<2x64x64xf16, #copy.smem>, !copy.barrier<2>
  %slot = memref.subview %ring[%c0, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #copy.smem> to memref<64x64xf16, strided<[64, 1], offset: ?>, #copy.smem>
  // expected-error@+2 {{reads %ring[0] before the copy that fills it completes}}
  // expected-note@+1 {{wait on barrier 0 of %bars for phase 0 (copy.barrier_wait with parity 0) before the read}}
  "nv.mma"(%slot) {copy.effects = [#copy.effect<read 0>]} : (memref<64x64xf16, strided<[64, 1], offset: ?>, #copy.smem>) -> ()
  copy.barrier_wait %bars[%c0], %false : !copy.barrier<2>
  func.return
}

// -----

// A wgmma stand-in reads its slot asynchronously until the consumer's bulk wait; the
// consumer releases the slot (arrives on empty) before that wait, so the producer may
// refill the slot while the read goes on.
// rule: P2
// fix: s|        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<2>||
// fix: s|copy.wait_group bulk 0 read_only|copy.wait_group bulk 0 read_only copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<2>|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @p2_async_read_released_before_its_wait(%x: memref<1024x1024xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
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
        // expected-error@+2 {{the TMA load writes %ring[0] while 'nv.wgmma' (an async read) may still be reading it}}
        // expected-note@+1 {{the read is another role's: in that role, release the slot (the copy.barrier_arrive on the barrier this write waits on) only after a copy.wait_group bulk}}
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
        // expected-note@+1 {{the op that reads it}}
        "nv.wgmma"(%slot) {copy.effects = [#copy.effect<async_read 0 until wait_group>]} : (memref<64x64xf16, strided<[64, 1], offset: ?>, #copy.smem>) -> ()
        copy.commit_group bulk
        copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<2>
        copy.wait_group bulk 0 read_only
      }
    }
    func.return
  }
}

// -----

// The threads write the tile, then an async read of it (the async proxy) follows with no
// fence between.
// rule: P4
// fix: s|  "nv.wgmma"(%tile)|  copy.fence_async_shared "nv.wgmma"(%tile)|
func.func @p4_async_read_of_unfenced_thread_writes() attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f16
  %tile = copy.alloc_smem : memref<64x128xf16, #copy.smem>
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  // expected-note@+1 {{the threads write it here}}
  memref.store %v, %tile[%c0, %tid] : memref<64x128xf16, #copy.smem>
  // expected-error@+2 {{reads %tile, which threads wrote with no copy.fence_async_shared since}}
  // expected-note@+1 {{add copy.fence_async_shared after the threads' writes and before the copy}}
  "nv.wgmma"(%tile) {copy.effects = [#copy.effect<async_read 0 until wait_group>]} : (memref<64x128xf16, #copy.smem>) -> ()
  copy.commit_group bulk
  copy.wait_group bulk 0 read_only
  func.return
}

// -----

// memref.copy has xDSL's read and write effect traits: it reads the tile before the wait.
// rule: P1
// fix: s|  "memref.copy"|  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> "memref.copy"|
func.func @p1_upstream_op_with_effect_traits(%x: memref<256x256xf16>, %y: memref<64x64xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-note@+1 {{the copy that fills it}}
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  // expected-error@+2 {{reads %tile before the copy that fills it completes}}
  // expected-note@+1 {{wait on barrier 0 of %bar for phase 0 (copy.barrier_wait with parity 0) before the read}}
  "memref.copy"(%tile, %y) : (memref<64x64xf16, #copy.smem>, memref<64x64xf16>) -> ()
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  func.return
}

// -----

// The declaration names the op's register operand, not its SMEM pointer.
// rule: FX1
// fix: s|#copy.effect<read 1>|#copy.effect<read 0>|
func.func @fx1_declared_effect_on_an_operand_not_in_smem(%x: memref<256x256xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : i32
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-error@+2 {{copy.effects declares a read of operand 1 of nv.ld, which is not SMEM (a copy.alloc_smem buffer, or a view, pointer or descriptor computed from one): its SMEM operand is 0}}
  // expected-note@+1 {{declare the effects on SMEM operands only (operand 0)}}
  "nv.ld"(%tile, %c7) {copy.effects = [#copy.effect<read 1>]} : (memref<64x64xf16, #copy.smem>, i32) -> ()
  func.return
}

// -----

// rule: FX1
// fix: s|#copy.effect<read 2>|#copy.effect<read 0>|
func.func @fx1_declared_effect_on_an_operand_the_op_lacks(%x: memref<256x256xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-error@+2 {{copy.effects declares a read of operand 2, but nv.ld has 1 operand}}
  // expected-note@+1 {{name an operand by its position, from 0}}
  "nv.ld"(%tile) {copy.effects = [#copy.effect<read 2>]} : (memref<64x64xf16, #copy.smem>) -> ()
  func.return
}

// -----

// rule: FX1
// fix: s| {copy.effects = [#copy.effect<read 0>]}||
func.func @fx1_declared_effects_on_a_load_the_analysis_knows(%x: memref<256x256xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-error@+2 {{the protocol analysis knows the SMEM effects of memref.load: it takes no copy.effects}}
  // expected-note@+1 {{drop copy.effects}}
  %v = memref.load %tile[%c0, %c0] {copy.effects = [#copy.effect<read 0>]} : memref<64x64xf16, #copy.smem>
  func.return
}

// -----

// rule: FX1
// fix: s|#copy.effect<read 0 until wait_group>|#copy.effect<async_read 0 until wait_group>|
func.func @fx1_a_synchronous_read_that_names_a_wait(%x: memref<256x256xf16>) attributes {gpu.known_block_size = array<i32: 128, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %tile = copy.alloc_smem : memref<64x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf16> to memref<64x64xf16, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
  // expected-error@+2 {{a read ends when the op returns: it takes no 'until'}}
  // expected-note@+1 {{or #copy.effect<async_read 0 until wait_group> for a read that goes on after the op}}
  "nv.wgmma"(%tile) {copy.effects = [#copy.effect<read 0 until wait_group>]} : (memref<64x64xf16, #copy.smem>) -> ()
  copy.commit_group bulk
  copy.wait_group bulk 0 read_only
  func.return
}
