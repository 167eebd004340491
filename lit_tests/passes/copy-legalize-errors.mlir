// What copy-legalize cannot keep on sm_80 is a diagnostic at the op, naming the rule.
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_80}' --verify-diagnostics

// The fifth seed (tmem_load needs TMEM): a TMEM op written for sm_100a has no pre-Blackwell
// form.
// rule: LG1
// fix: none -- a TMEM accumulator has no mechanical rewrite into registers or SMEM
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tmem(%x: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    // expected-error@+2 {{pass 'copy-legalize' failed: 'copy.tmem_alloc' op copy-legalize cannot keep copy.tmem_alloc on sm_80: TMEM (tcgen05) exists only on sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, and the pass has no fallback for it}}
    // expected-note@+1 {{keep the kernel on a target that has it (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f), or rewrite the TMEM accumulation in registers or SMEM by hand}}
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}

// -----

// The first seed (a reduction needs TMA): a TMA reduce-add of bf16 written for sm_90a.
// red.global.add.noftz.bf16 needs sm_90 (an f32 reduce-add legalizes: copy-legalize.mlir).
// rule: LG2
// fix: none -- bf16 has no thread atomic before sm_90: the reduction stays on sm_90 or newer
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @reduce(%x: memref<256x256xbf16>, %o: memref<256x256xbf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xbf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xbf16> to memref<64x64xbf16, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    // expected-error@+2 {{pass 'copy-legalize' failed: 'copy.async_copy' op copy-legalize cannot keep the TMA reduction `add` of bf16 on sm_80: red.global.add of bf16 needs sm_90}}
    // expected-note@+1 {{keep the kernel on a target that has it (sm_90 or newer), or reduce from threads by hand}}
    copy.async_copy %tile to %o[%c0, %c0] reduce add : memref<64x64xbf16, #copy.smem> to memref<256x256xbf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// A TMA copy of a GMEM ref with a dynamic layout stride: cp.async computes its chunks'
// addresses from the strides, and the runtime passes only sizes (H8). (A dynamic size
// alone is kept: copy-legalize.mlir.)
// rule: LG3
// fix: s|memref<?x256xf32, strided<[?, 1]>>|memref<?x256xf32>|
// fix: s|memref<?x256xf32, strided<[?, 1]>>|memref<?x256xf32>|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @dynamic_stride(%x: memref<?x256xf32, strided<[?, 1]>>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // expected-error@+2 {{'copy.async_copy' op copy-legalize cannot keep a TMA copy of a GMEM ref with a dynamic stride (memref<?x256xf32, strided<[?, 1]>>) on sm_80: it has no pre-Hopper form the pass can produce}}
    // expected-note@+1 {{drop the strided layout (a row-major ref, whose strides follow from its sizes: cp.async computes its chunks' addresses from the strides), or keep the kernel on a target that has it (sm_90 or newer), or rewrite this part by hand}}
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<?x256xf32, strided<[?, 1]>> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    func.return
  }
}

// -----

// A barrier group that tracks a TMA load and also counts the threads' arrivals: the pass
// cannot tell which of a phase's arrivals become the copy's per-thread ones.
// rule: LG4
// fix: none -- splitting the group in two changes which barrier each wait observes
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @shared_group(%x: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bars[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<2>
    copy.barrier_wait %bars[%c0], %phase : !copy.barrier<2>
    %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+2 {{'copy.barrier_arrive' op copy-legalize cannot keep copy.barrier_arrive on sm_80: its barrier group tracks TMA loads, whose cp.async form arrives once per issuing thread, and the pass scales the group's arrivals only when every arrival is such a load's, but copy.barrier_arrive also uses it}}
      // expected-note@+1 {{give the TMA loads a barrier group of their own (copy.barrier_init) that only they (arriving themselves), copy.barrier_wait and copy.barrier_test use}}
      copy.barrier_arrive %bars[%c1] : !copy.barrier<2>
    }
    copy.barrier_wait %bars[%c1], %phase : !copy.barrier<2>
    func.return
  }
}

// -----

// A load that leaves its arrival to an explicit arrive_expect_tx: how many of the phase's
// arrivals its threads should make is not the group's count.
// rule: LG4
// fix: none -- the expect_tx's arrival and the load's bytes must be rewritten together
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @expect_tx_arrival(%x: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %bar[%c0], 16384 : !copy.barrier<1>
    // expected-error@+2 {{'copy.async_copy' op copy-legalize cannot keep copy.async_copy on sm_80: its barrier group tracks TMA loads, whose cp.async form arrives once per issuing thread, and the pass scales the group's arrivals only when every arrival is such a load's, but the load leaves its arrival to an explicit arrive_expect_tx (arrive = false)}}
    // expected-note@+1 {{give the TMA loads a barrier group of their own}}
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] {arrive = false} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    func.return
  }
}

// -----

// Warps 0 and 2 of a producer warpgroup load: the pass splits off the first warps of a
// role when exactly they reach the copy (kernels.ws_elementwise with maxnreg), but these
// are not the role's first warps.
// rule: LG3
// fix: none -- the loads' issuing threads need whole warps of a role of their own
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @part_of_a_role(%x: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.warp_specialize warps [4, 4] {
    ^bb0(%t: index):
      %warp = arith.divui %t, %c32 : index
      %even = arith.remui %warp, %c2 : index
      %first = arith.cmpi eq, %even, %c0 : index
      scf.if %first {
        // expected-error@+2 {{'copy.async_copy' op copy-legalize cannot keep a TMA copy that only some threads of role 0 reach (it sits under scf.if, whose condition or bounds depend on the thread): its cp.async or thread-store form is issued by every thread of role 0 on sm_80}}
        // expected-note@+1 {{make the conditions around the copy uniform over the role}}
        copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
      }
    }, {
    ^bb0(%t: index):
      copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    }
    func.return
  }
}

// -----

// rule: LG7
// fix: s|attributes {gpu.kernel}|attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>}|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @load_without_block(%x: memref<256x256xf32>) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // expected-error@+2 {{'copy.async_copy' op copy-legalize cannot count the arrivals of a TMA load's cp.async form on sm_80: the kernel has no 1-D gpu.known_block_size}}
    // expected-note@+1 {{give the kernel gpu.known_block_size = array<i32: 128, 1, 1> (its block shape)}}
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    func.return
  }
}

// -----

// rule: LG5
// fix: s|oob nan|oob zeros|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @nan(%x: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // expected-error@+2 {{'copy.async_copy' op copy-legalize cannot keep oob nan on sm_80: cp.async zero-fills the out-of-bounds bytes and cannot fill NaN}}
    // expected-note@+1 {{use oob zeros (the tile past the array's end is then 0), or keep the kernel on sm_90 or newer}}
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] oob nan : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    func.return
  }
}

// -----

// A TMA load through a TFLOAT32 map rounds each element to tf32; cp.async would copy the
// f32 bits unrounded.
// rule: LG8
// fix: s|memref<256x256xtf32>|memref<256x256xf32>|
// fix: s|memref<64x64xtf32, #copy.smem>|memref<64x64xf32, #copy.smem>|
// fix: s|memref<256x256xtf32>|memref<256x256xf32>|
// fix: s|memref<64x64xtf32, #copy.smem>|memref<64x64xf32, #copy.smem>|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @tf32_load(%x: memref<256x256xtf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xtf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // expected-error@+2 {{'copy.async_copy' op copy-legalize cannot keep a TMA load of tf32 on sm_80: the load rounds each element to tf32 (to nearest even), and its cp.async form copies the f32 bits unrounded}}
    // expected-note@+1 {{load the array as f32 (f32 refs: a FLOAT32 map, no rounding, which legalizes) and let the math read it as tf32, or keep the kernel on sm_90 or newer}}
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xtf32> to memref<64x64xtf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    func.return
  }
}

// -----

// A TMA reduce-add on a TFLOAT32 map is an f32 add, but the thread atomics take no tf32:
// the same reduction on f32 refs legalizes.
// rule: LG2
// fix: s|xtf32|xf32|
// fix: s|1.0 : tf32|1.0 : f32|
// fix: s|xtf32|xf32|
// fix: s|xtf32|xf32|
// fix: s|xtf32|xf32|
// fix: s|xtf32|xf32|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @tf32_reduce(%o: memref<256x256xtf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : tf32
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %tile = copy.alloc_smem : memref<64x64xtf32, #copy.smem>
    memref.store %one, %tile[%c0, %t] : memref<64x64xtf32, #copy.smem>
    copy.fence_async_shared
    // expected-error@+2 {{pass 'copy-legalize' failed: 'copy.async_copy' op copy-legalize cannot keep the TMA reduction `add` of tf32 on sm_80: the thread atomics take no tf32}}
    // expected-note@+1 {{give the reduction's refs f32: a reduce add through a TFLOAT32 map is the f32 add of a FLOAT32 map, which legalizes, or keep the kernel on a target that has it (sm_90 or newer), or reduce from threads by hand}}
    copy.async_copy %tile to %o[%c0, %c0] reduce add : memref<64x64xtf32, #copy.smem> to memref<256x256xtf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// rule: LG6
// fix: s| if %p||
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @predicated(%x: memref<256x256xf32>, %p: i1) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // expected-error@+2 {{'copy.async_copy' op copy-legalize cannot keep a predicated TMA copy on sm_80: the predicate guards the one issuing thread, cp.async is issued by the whole block}}
    // expected-note@+1 {{drop the predicate (if %p) and guard the copy with scf.if on a block-uniform condition}}
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] if %p : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    scf.if %p {
      copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    }
    func.return
  }
}

// -----

// rule: LG7
// fix: s|attributes {gpu.kernel}|attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>}|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @no_block(%y: memref<256x256xf32>) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    // expected-error@+2 {{'copy.async_copy' op copy-legalize cannot split a TMA store over the threads on sm_80: the kernel has no 1-D gpu.known_block_size}}
    // expected-note@+1 {{give the kernel gpu.known_block_size = array<i32: 128, 1, 1> (its block shape)}}
    copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// A TMA reduction inc of ui32 (a UINT32 map, as for i32): red.global.inc.u32 would do it,
// but the thread atomics (memref.generic_atomic_rmw's body, like memref.atomic_rmw) take
// signless integers (an i32 inc legalizes: copy-legalize-reduce-inc-dec.mlir).
// rule: LG2
// fix: s|memref<256x256xui32>, %o: memref<256x256xui32>|memref<256x256xi32>, %o: memref<256x256xi32>|
// fix: s|memref<64x64xui32, #copy.smem>|memref<64x64xi32, #copy.smem>|
// fix: s|memref<256x256xui32> to memref<64x64xui32, #copy.smem>|memref<256x256xi32> to memref<64x64xi32, #copy.smem>|
// fix: s|memref<64x64xui32, #copy.smem> to memref<256x256xui32>|memref<64x64xi32, #copy.smem> to memref<256x256xi32>|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @reduce_inc_unsigned(%x: memref<256x256xui32>, %o: memref<256x256xui32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xui32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xui32> to memref<64x64xui32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    // expected-error@+2 {{pass 'copy-legalize' failed: 'copy.async_copy' op copy-legalize cannot keep the TMA reduction `inc` of ui32 on sm_80: the thread atomics (memref.atomic_rmw, memref.generic_atomic_rmw) take signless integers, not ui32}}
    // expected-note@+1 {{give the refs the signless i32 (the map type stays UINT32: umin/umax or smin/smax say how min/max compare), or keep the kernel on a target that has it (sm_90 or newer), or reduce from threads by hand}}
    copy.async_copy %tile to %o[%c0, %c0] reduce inc : memref<64x64xui32, #copy.smem> to memref<256x256xui32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// An im2col load whose channels start at f16 element 3 (6 bytes into the pixel) had no
// cp.async form (LG3: cp.async copies aligned 4-, 8- or 16-byte chunks); it is no TMA load
// either: the verifier rejects it before the pass runs (IC13, issue S), as TR12 a tiled
// copy's innermost coordinate.
// rule: IC13
// fix: s|%c3 = arith.constant 3 : index|%c3 = arith.constant 8 : index|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @im2col_unaligned_channels(%x: memref<2x9x9x16xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %t = arith.constant 0 : i16
    %phase = arith.constant false
    %buf = copy.alloc_smem : memref<64x8xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // expected-error@+2 {{'copy.im2col_load' op Expected the channel coordinate of a TMA im2col load to be a multiple of 16 bytes, got 3 (6 bytes of f16)}}
    // expected-note@+1 {{start the channel block at a multiple of 8 elements (e.g. 0); a channel block that starts elsewhere is an illegal instruction, as a tiled copy's innermost coordinate (TR12)}}
    copy.im2col_load %x[%c0, %c0, %c0, %c3] offsets [%t, %t] to %buf barrier %bar[%c0] {lower = array<i64: 0, 0>, upper = array<i64: 0, 0>} : memref<2x9x9x16xf16> to memref<64x8xf16, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    func.return
  }
}

// -----

// A tensor map rewritten under a condition before the load: the map's value at the load
// depends on the path, and the pass reads it from the rewrites before the load in its block.
// rule: LG3
// fix: none -- the rewrite must leave the scf.if for the load's block, which no one-line edit does
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @conditional_rewrite(%x: memref<?x?xf32>, %rows: i32, %p: i1) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %m = copy.tensormap_global %x slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    scf.if %p {
      // expected-error@+2 {{pass 'copy-legalize' failed: 'copy.tensormap_replace' op copy-legalize cannot keep a tensor-map rewrite that may run between the rewrites before a load through the map and the load (the pass reads the map's value at a load from the rewrites before it in its block) on sm_80}}
      // expected-note@+1 {{rewrite the map in the block of the loads through it, before them}}
      copy.tensormap_replace %m global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32
    }
    copy.tensormap_fence_release %m : !copy.tensormap<8x64xf32>
    copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>) : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    func.return
  }
}

// -----

// A DSMEM kernel in clusters of 4 CTAs of 512 threads: the pass folds each cluster into one
// block, which cannot hold 2048 threads.
// rule: LG3
// fix: s|array<i32: 512, 1, 1>|array<i32: 256, 1, 1>|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @cluster_too_wide_to_fold(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 512, 1, 1>, copy.cluster = array<i32: 4, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c4 : index
    %peer = arith.xori %rank, %c1 : index
    %col = arith.muli %bx, %c64 : index
    %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %recv = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %full[%c0], 16384 : !copy.barrier<1>
    // expected-error@+2 {{pass 'copy-legalize' failed: 'copy.peer_copy' op copy-legalize cannot keep DSMEM in clusters of 4 CTAs of 512 threads: the pass folds each cluster into one block, and 2048 threads exceed a block's 1024 on sm_80: it has no pre-Hopper form the pass can produce}}
    // expected-note@+1 {{use clusters of at most 2 CTAs, or blocks of at most 256 threads, or keep the kernel on a target that has it (sm_90 or newer), or rewrite this part by hand}}
    copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
    copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    copy.async_copy %recv to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    func.return
  }
}

// -----

// A DSMEM kernel whose CTA takes 128 KiB of SMEM: its cluster of 2, folded into one block,
// would take 256 KiB, over the 163 KiB of a block on sm_80.
// rule: LG3
// fix: none -- the tiles, their loops and their copies shrink together, which no one-line edit does
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @cluster_smem_too_large_to_fold(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c256 = arith.constant 256 : index
    %false = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %row = arith.muli %bx, %c256 : index
    %mine = copy.alloc_smem : memref<64x256xf32, #copy.smem>
    %recv = copy.alloc_smem : memref<64x256xf32, #copy.smem>
    %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x256xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %full[%c0], 65536 : !copy.barrier<1>
    // expected-error@+2 {{pass 'copy-legalize' failed: 'copy.peer_copy' op copy-legalize cannot keep DSMEM in clusters of 2 CTAs: the pass folds each cluster into one block, whose SMEM (262296 bytes: each CTA's buffers and barriers once per rank) exceeds the 166912 bytes a block can use on sm_80: it has no pre-Hopper form the pass can produce}}
    // expected-note@+1 {{use smaller tiles or clusters (at most 166912 bytes of SMEM for the whole cluster), or keep the kernel on a target that has it (sm_90 or newer), or rewrite this part by hand}}
    copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x256xf32, #copy.smem> to memref<64x256xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
    copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    copy.async_copy %recv to %y[%c0, %c0] : memref<64x256xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    func.return
  }
}

// -----

// A DSMEM kernel whose peer is the thread's neighbour's rank: in the folded block the pass
// picks the peer's buffers by the peer's rank, which must be the same in every cluster.
// rule: LG3
// fix: s|%peer = arith.remui %tid, %c2 : index|%peer = arith.xori %rank, %c1 : index|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @peer_rank_from_the_thread(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.remui %tid, %c2 : index
    %col = arith.muli %bx, %c64 : index
    %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %recv = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %full[%c0], 16384 : !copy.barrier<1>
    // The input itself is wrong on sm_90a: the elected thread (thread 0) issues the copy, so
    // every CTA copies into CTA 0. The protocol analysis, which models each CTA of the
    // cluster, cannot tell which CTA a thread-dependent rank names, and warns.
    // expected-warning@+4 {{cannot prove the phases of barrier 0 of %full in the peer CTA: its rank is not known for each CTA of the cluster}}
    // expected-note@+3 {{compute the peer from gpu.block_id with arith ops}}
    // expected-error@+2 {{pass 'copy-legalize' failed: 'copy.peer_copy' op copy-legalize cannot keep a peer op whose peer rank is not the same in every cluster (the pass folds each cluster into one block and needs the peer's rank to pick its buffers) on sm_80: it has no pre-Hopper form the pass can produce}}
    // expected-note@+1 {{compute the peer from the CTA's rank in its cluster and constants (`arith.remui` of the block id by the cluster's size, then arith.xori, arith.addi, arith.remui), or keep the kernel on a target that has it (sm_90 or newer), or rewrite this part by hand}}
    copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
    copy.async_copy %recv to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// A named barrier in a DSMEM kernel: the folded block's roles (one per CTA) take the
// named barriers' ids.
// rule: LG3
// fix: s|copy.named_barrier_sync 1, 128|"gpu.barrier"() : () -> ()|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @named_barrier_in_a_folded_kernel(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %col = arith.muli %bx, %c64 : index
    %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %recv = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %full[%c0], 16384 : !copy.barrier<1>
    copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
    copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    // expected-error@+2 {{pass 'copy-legalize' failed: 'copy.named_barrier_sync' op copy-legalize cannot keep a named barrier in a kernel with DSMEM: the pass folds each cluster into one block whose roles are the cluster's CTAs, and their barriers take the ids on sm_80: it has no pre-Hopper form the pass can produce}}
    // expected-note@+1 {{meet at gpu.barrier where the whole block meets (it becomes each CTA's own barrier), or keep the kernel on a target that has it (sm_90 or newer), or rewrite this part by hand}}
    copy.named_barrier_sync 1, 128
    copy.async_copy %recv to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    func.return
  }
}

// -----

// A DSMEM kernel whose block of 100 threads is not whole warps: the folded block gives each
// CTA a role of whole warps.
// rule: LG3
// fix: s|array<i32: 100, 1, 1>|array<i32: 128, 1, 1>|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @block_not_whole_warps(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 100, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %col = arith.muli %bx, %c64 : index
    %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %recv = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %full[%c0], 16384 : !copy.barrier<1>
    // expected-error@+2 {{pass 'copy-legalize' failed: 'copy.peer_copy' op copy-legalize cannot keep DSMEM in a kernel whose block is not 1-D whole warps (gpu.known_block_size: array<i32: 100, 1, 1>): the pass folds each cluster into one block, a role of B / 32 warps per CTA of B threads on sm_80: it has no pre-Hopper form the pass can produce}}
    // expected-note@+1 {{give the kernel gpu.known_block_size = array<i32: 128, 1, 1>, or keep the kernel on a target that has it (sm_90 or newer), or rewrite this part by hand}}
    copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
    copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    copy.async_copy %recv to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    func.return
  }
}

// -----

// A DSMEM kernel that takes a buffer in each branch of an scf.if: the pass gives each
// CTA's buffers a copy per rank at the kernel's top level.
// rule: LG3
// fix: none -- both branches' buffers would have to become one buffer taken before the scf.if
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @smem_taken_in_a_branch(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %col = arith.muli %bx, %c64 : index
    %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
    %t = arith.constant true
    %recv = scf.if %t -> (memref<64x64xf32, #copy.smem>) {
      // expected-error@+2 {{pass 'copy-legalize' failed: 'copy.alloc_smem' op copy-legalize cannot keep SMEM taken inside a loop or branch of a kernel with DSMEM: the pass folds each cluster into one block and gives each CTA's buffers a copy per rank on sm_80: it has no pre-Hopper form the pass can produce}}
      // expected-note@+1 {{take the kernel's SMEM at its top level, or keep the kernel on a target that has it (sm_90 or newer), or rewrite this part by hand}}
      %a = copy.alloc_smem : memref<64x64xf32, #copy.smem>
      scf.yield %a : memref<64x64xf32, #copy.smem>
    } else {
      %b = copy.alloc_smem : memref<64x64xf32, #copy.smem>
      scf.yield %b : memref<64x64xf32, #copy.smem>
    }
    copy.barrier_arrive_expect_tx %full[%c0], 16384 : !copy.barrier<1>
    copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
    copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    copy.async_copy %recv to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    func.return
  }
}

// -----

// An arrival on the peer's barrier that raises its transaction count: in the folded block
// no sender completes those bytes (sm_80 has no transaction count).
// rule: LG3
// fix: s| expect_tx 16||
// fix: s|copy.barrier_arrive_expect_tx %full[%c0], 16368|copy.barrier_expect_tx %full[%c0], 16 : !copy.barrier<1> copy.barrier_arrive_expect_tx %full[%c0], 16368|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @peer_arrival_expecting_bytes(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %col = arith.muli %bx, %c64 : index
    %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %recv = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %full = copy.barrier_init arrivals 2 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
    // The receiver expects all but 16 of the bytes; the sender's arrival, before its copy,
    // expects the rest. (The arrival used to come after the wait: the peer could have
    // returned by then, P7, and its phase never completed.)
    copy.barrier_arrive_expect_tx %full[%c0], 16368 : !copy.barrier<1>
    // expected-error@+2 {{pass 'copy-legalize' failed: 'copy.peer_arrive' op copy-legalize cannot keep an arrival on a peer CTA's barrier that expects bytes (expect_tx) on sm_80: it has no pre-Hopper form the pass can produce}}
    // expected-note@+1 {{drop expect_tx from the arrival and expect its 16 bytes in the peer CTA itself (copy.barrier_expect_tx, or its own barrier_arrive_expect_tx), or keep the kernel on a target that has it (sm_90 or newer), or rewrite this part by hand}}
    copy.peer_arrive %full[%c0] peer %peer expect_tx 16 : !copy.barrier<1>
    copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
    copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    copy.async_copy %recv to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    func.return
  }
}
// -----

// Half a cluster barrier: the arrive before the store, the wait after it. In the folded block
// the cluster's barrier is a named barrier, which a thread cannot arrive on and later wait on.
// rule: LG3
// fix: s|copy.cluster_sync arrive|copy.cluster_sync|
// fix: s|copy.cluster_sync wait||
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
func.func @half_a_cluster_barrier(%x: memref<256x256xf32>, %y: memref<256x256xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %col = arith.muli %bx, %c64 : index
  %mine = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
  copy.barrier_arrive_expect_tx %full[%c0], 16384 : !copy.barrier<1>
  copy.peer_copy %mine to %recv peer %peer, %full[%c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
  copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
  // expected-error@+2 {{pass 'copy-legalize' failed: 'copy.cluster_sync' op copy-legalize cannot keep half a cluster barrier (copy.cluster_sync arrive) in a kernel with DSMEM: the pass folds each cluster into one block, where it becomes a named barrier of the whole block, which a thread cannot arrive on and wait on apart on sm_80: it has no pre-Hopper form the pass can produce}}
  // expected-note@+1 {{use the whole copy.cluster_sync (arrive and wait at one point), or keep the kernel on a target that has it (sm_90 or newer), or rewrite this part by hand}}
  copy.cluster_sync arrive
  copy.async_copy %recv to %y[%c0, %col] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  copy.cluster_sync wait
  func.return
}
}
