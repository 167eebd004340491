// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid copy.gather4, copy.scatter4 or copy.gather4_prefetch per chunk, named after the
// rule it breaks (`// rule:` gives the id in copy_dialect/rules.toml). The checks:
// copy_dialect/gather4.py. `// fix: s|OLD|NEW|` lines give the edit the note describes;
// tests/tools/test_fix_notes.py applies them and checks that the result verifies.

// rule: G1
// fix: s|memref<2x64x64xf16>|memref<128x64xf16>|
// fix: s|memref<2x64x64xf16>|memref<128x64xf16>|
func.func @g1_rank_3(%x: memref<2x64x64xf16>) {
  %c0 = arith.constant 0 : index
  %t = copy.alloc_smem : memref<4x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Gathers/scatters only supported along the first dimension of 2D arrays, got a rank-3 GMEM ref (memref<2x64x64xf16>)}}
  // expected-note@+1 {{give the op a 2-D GMEM ref [rows, cols] (the array with its leading dims merged into the rows), e.g. memref<128x64xf16>: gather4 picks rows along dim 0}}
  copy.gather4 %x rows [%c0, %c0, %c0, %c0] column [%c0] to %t barrier %bar[%c0] : memref<2x64x64xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: G2
// fix: s|rows [%c0, %c0, %c0]|rows [%c0, %c0, %c0, %c0]|
func.func @g2_three_rows(%x: memref<128x64xf16>) {
  %c0 = arith.constant 0 : index
  %t = copy.alloc_smem : memref<4x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected 4 row indices (the rows of the 4-row tile), got 3}}
  // expected-note@+1 {{give rows [...] exactly 4 index values; gather more rows with one op per 4 rows}}
  copy.gather4 %x rows [%c0, %c0, %c0] column [%c0] to %t barrier %bar[%c0] : memref<128x64xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: G3
// fix: s|memref<4x8xf16, #copy.smem>|memref<4x16xf16, #copy.smem>|
// fix: s|memref<4x8xf16, #copy.smem>|memref<4x16xf16, #copy.smem>|
func.func @g3_tile_of_64_bytes(%x: memref<128x64xf16>) {
  %c0 = arith.constant 0 : index
  %t = copy.alloc_smem : memref<4x8xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Gather/scatter TMA would require breaking it up into transfers of 64 bytes, but need a multiple of 128 bytes}}
  // expected-note@+1 {{make the tile's width a multiple of 16 elements (f16): 4 rows of 16 rather than 8}}
  copy.gather4 %x rows [%c0, %c0, %c0, %c0] column [%c0] to %t barrier %bar[%c0] : memref<128x64xf16> to memref<4x8xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: G4
// fix: s|memref<8x64xf16, #copy.smem>|memref<4x64xf16, #copy.smem>|
// fix: s|memref<8x64xf16, #copy.smem>|memref<4x64xf16, #copy.smem>|
func.func @g4_tile_of_8_rows(%x: memref<128x64xf16>) {
  %c0 = arith.constant 0 : index
  %t = copy.alloc_smem : memref<8x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Expected the SMEM tile of a copy.gather4 to be [4, W] (one row per row index), got [8, 64] (the SMEM ref's dims after its 0 slot indices)}}
  // expected-note@+1 {{make each slot a 4-row tile, e.g. memref<4x64xf16, #copy.smem>}}
  copy.gather4 %x rows [%c0, %c0, %c0, %c0] column [%c0] to %t barrier %bar[%c0] : memref<128x64xf16> to memref<8x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: G4
// fix: s|memref<2x4x64xf16, #copy.smem>|memref<4x64xf16, #copy.smem>|
// fix: s|memref<2x4x64xf16, #copy.smem>|memref<4x64xf16, #copy.smem>|
func.func @g4_scatter_tile_of_rank_3(%x: memref<128x64xf16>) {
  %c0 = arith.constant 0 : index
  %t = copy.alloc_smem : memref<2x4x64xf16, #copy.smem>
  // expected-error@+2 {{Expected the SMEM tile of a copy.scatter4 to be [4, W] (one row per row index), got [2, 4, 64] (the SMEM ref's dims after its 0 slot indices)}}
  // expected-note@+1 {{make each slot a 4-row tile, e.g. memref<4x64xf16, #copy.smem>}}
  copy.scatter4 %t to %x rows [%c0, %c0, %c0, %c0] column [%c0] : memref<2x4x64xf16, #copy.smem> to memref<128x64xf16>
  func.return
}

// -----

// rule: G5
// fix: s|column [%c0, %c0]|column [%c0]|
func.func @g5_two_columns(%x: memref<128x64xf16>) {
  %c0 = arith.constant 0 : index
  %t = copy.alloc_smem : memref<4x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Gather4 mode expects 5 coordinates, got 4 rows and 2 columns}}
  // expected-note@+1 {{give column [...] one index: the first column of every row}}
  copy.gather4 %x rows [%c0, %c0, %c0, %c0] column [%c0, %c0] to %t barrier %bar[%c0] : memref<128x64xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: D6
// fix: s| {collective = array<i64: 0>}||
func.func @d6_collective_gather4(%x: memref<128x64xf16>) attributes {copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %t = copy.alloc_smem : memref<4x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Collective copies with gather/scatter unsupported}}
  // expected-note@+1 {{drop collective and issue one copy.gather4 per CTA: a collective copy splits its box over the cluster, and a 4-row tile has no split TMA can make (each CTA's part of a gather4 tile is not a gather4 tile of its own)}}
  copy.gather4 %x rows [%c0, %c0, %c0, %c0] column [%c0] to %t barrier %bar[%c0] {collective = array<i64: 0>} : memref<128x64xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: E4
// fix: s| reduce add||
func.func @e4_scatter4_reduction(%x: memref<128x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = copy.alloc_smem : memref<4x32xf32, #copy.smem>
  // expected-error@+2 {{Gather/scatter TMA can't perform reductions}}
  // expected-note@+1 {{drop the reduction: cp.reduce.async.bulk.tensor has no .tile::scatter4 mode (PTX ISA); reduce each row with a tiled copy.async_copy ... reduce add of a [1, W] box}}
  copy.scatter4 %t to %x rows [%c0, %c0, %c0, %c0] column [%c0] reduce add : memref<4x32xf32, #copy.smem> to memref<128x64xf32>
  func.return
}

// -----

// rule: F5
// fix: s| if %p||
func.func @f5_predicated_gather4(%x: memref<128x64xf16>, %p: i1) {
  %c0 = arith.constant 0 : index
  %t = copy.alloc_smem : memref<4x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{Gather/scatter TMA can't use a predicate}}
  // expected-note@+1 {{drop `if` and guard the copy.gather4 with scf.if on the condition (the protocol analysis follows the branch)}}
  copy.gather4 %x rows [%c0, %c0, %c0, %c0] column [%c0] to %t barrier %bar[%c0] if %p : memref<128x64xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: TR12
// fix: s|%c4 = arith.constant 4 : index|%c4 = arith.constant 8 : index|
func.func @tr12_column_of_8_bytes(%x: memref<128x64xf16>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %t = copy.alloc_smem : memref<4x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{the innermost TMA coordinate must be a multiple of 16 bytes, got 4 (8 bytes)}}
  // expected-note@+1 {{any other innermost coordinate is an illegal instruction on the GPU: start the column at a multiple of 8 elements}}
  copy.gather4 %x rows [%c0, %c0, %c0, %c0] column [%c4] to %t barrier %bar[%c0] : memref<128x64xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// rule: TR13
// fix: s|%m1 = arith.constant -1 : index|%m1 = arith.constant 0 : index|
func.func @tr13_scatter4_to_row_minus_1(%x: memref<128x64xf16>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %t = copy.alloc_smem : memref<4x64xf16, #copy.smem>
  // expected-error@+2 {{TMA store coordinates must be >= 0, got -1 at index 2 of the scatter4's {column, row0, row1, row2, row3}}}
  // expected-note@+1 {{a negative store coordinate is an illegal instruction on the GPU (PTX ISA: a .global.shared::cta copy's coordinates are non-negative): start at 0 or more}}
  copy.scatter4 %t to %x rows [%c0, %m1, %c0, %c0] column [%c0] : memref<4x64xf16, #copy.smem> to memref<128x64xf16>
  func.return
}

// -----

// rule: A14
// fix: s|"sm_90a"|"sm_100a"|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @a14_gather4_on_hopper(%x: memref<128x64xf16>) {
    %c0 = arith.constant 0 : index
    %t = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // expected-error@+2 {{'copy.gather4' op needs a target with TMA gather4 (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_90a}}
    // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a, or load the rows with tiled copies (copy.async_copy of a [1, W] box per row)}}
    copy.gather4 %x rows [%c0, %c0, %c0, %c0] column [%c0] to %t barrier %bar[%c0] : memref<128x64xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    func.return
  }
}

// -----

// rule: A14
// fix: s|"sm_120a"|"sm_100a"|
builtin.module attributes {copy.target = #copy.target<"sm_120a">} {
  func.func @a14_scatter4_on_consumer_blackwell(%x: memref<128x64xf16>) {
    %c0 = arith.constant 0 : index
    %t = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    // expected-error@+2 {{'copy.scatter4' op needs a target with TMA scatter4 (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f), but the target is sm_120a}}
    // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, or load the rows with tiled copies (copy.async_copy of a [1, W] box per row)}}
    copy.scatter4 %t to %x rows [%c0, %c0, %c0, %c0] column [%c0] : memref<4x64xf16, #copy.smem> to memref<128x64xf16>
    func.return
  }
}

// -----

// rule: A14
// fix: s|"sm_120"|"sm_103a"|
builtin.module attributes {copy.target = #copy.target<"sm_120">} {
  func.func @a14_gather4_prefetch_on_sm_120(%x: memref<128x64xf16>) {
    %c0 = arith.constant 0 : index
    // expected-error@+2 {{'copy.gather4_prefetch' op needs a target with TMA gather4 prefetch (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f), but the target is sm_120}}
    // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, or load the rows with tiled copies (copy.async_copy of a [1, W] box per row)}}
    copy.gather4_prefetch %x rows [%c0, %c0, %c0, %c0] column [%c0] {width = 64} : memref<128x64xf16>
    func.return
  }
}

// -----

// rule: F8
// fix: s|%c2 = arith.constant 2 : index|%c2 = arith.constant 1 : index|
func.func @f8_gather4_slot_past_the_ring(%x: memref<128x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %t = copy.alloc_smem : memref<2x4x64xf16, #copy.smem>
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  // expected-error@+2 {{expected the SMEM slot index along dim 0 in [0, 2), found the constant 2: it lies outside memref<2x4x64xf16, #copy.smem>}}
  // expected-note@+1 {{dim 0 of the buffer has 2 entries (its indices are 0 to 1): index inside it, or allocate a buffer of 3 along dim 0}}
  copy.gather4 %x rows [%c0, %c0, %c0, %c0] column [%c0] to %t[%c2] barrier %bar[%c0] : memref<128x64xf16> to memref<2x4x64xf16, #copy.smem>, !copy.barrier<1>
  func.return
}

// -----

// A multicast gather4 in a kernel launched without clusters.
// rule: G6
// fix: s|array<i32: 128, 1, 1>}|array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>}|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @g6_multicast_without_a_cluster(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %both = arith.constant 3 : i16
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    scf.if %leader {
      // expected-error@+2 {{a multicast copy.gather4 writes the SMEM of the CTAs of its cluster, but the kernel is not launched in clusters (no copy.cluster, or a cluster of 1)}}
      // expected-note@+1 {{give the kernel its cluster shape (copy.cluster = array<i32: 2, 1, 1> on the function), or drop multicast}}
      copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] multicast %both : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    } else {
      copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    }
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// A mask naming CTA 2 in a cluster of 2.
// rule: G6
// fix: s|%both = arith.constant 4 : i16|%both = arith.constant 3 : i16|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @g6_mask_beyond_the_cluster(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %both = arith.constant 4 : i16
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    scf.if %leader {
      // expected-error@+2 {{a multicast copy.gather4's mask names CTAs 0 to 1 of its cluster of 2, got 0x4}}
      // expected-note@+1 {{give a mask of bits 0 to 1, bit r for CTA r: 3 (0x3) for every CTA of the cluster}}
      copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] multicast %both : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    } else {
      copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    }
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// rule: A14
// fix: s|"sm_120a"|"sm_100a"|
builtin.module attributes {copy.target = #copy.target<"sm_120a">} {
  func.func @a14_gather4_multicast_on_consumer_blackwell(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %both = arith.constant 3 : i16
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    scf.if %leader {
      // expected-error@+2 {{'copy.gather4' op needs a target with TMA gather4 multicast (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f), but the target is sm_120a}}
      // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, or drop multicast and issue one copy.gather4 in each CTA that needs the rows}}
      copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] multicast %both : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    } else {
      copy.barrier_arrive_expect_tx %bar[%c0], 512 : !copy.barrier<1>
    }
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// A leader-tracked gather4 in a kernel launched without clusters.
// rule: G7
// fix: none -- the fix also adds the pair's handshake (the leader tells its peer that the tiles landed), an edit of several lines once the kernel has its cluster
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @g7_leader_tracked_in_a_cluster_of_one(%x: memref<64x128xf16>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // expected-error@+2 {{a leader-tracked copy.gather4 completes on the barrier of its CTA pair's leader (ranks 2p and 2p + 1), but the kernel's cluster has 1 CTA}}
    // expected-note@+1 {{launch the kernel in clusters of an even size (copy.cluster = array<i32: 2, 1, 1> on the function), or drop leader_tracked}}
    copy.gather4 %x rows [%c0, %c0, %c0, %c0] column [%c64] to %tile barrier %bar[%c0] leader_tracked : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    func.return
  }
}

// -----

// rule: G7
// fix: s| multicast %both leader_tracked :| leader_tracked :|
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @g7_leader_tracked_and_multicast(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %both = arith.constant 3 : i16
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    // Each CTA gathers its own rows (the peer's shifted by one), both complete on the leader's barrier.
    %s0 = arith.addi %r0, %rank : index
    // expected-error@+2 {{a copy.gather4 is either multicast or leader-tracked here, not both}}
    // expected-note@+1 {{drop leader_tracked (every CTA of the mask waits on its own barrier), or drop multicast (each CTA of the pair gathers its own rows)}}
    copy.gather4 %x rows [%s0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] multicast %both leader_tracked : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    scf.if %leader {
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
      copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    } else {
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    }
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// rule: A14
// fix: s|"sm_120a"|"sm_100a"|
builtin.module attributes {copy.target = #copy.target<"sm_120a">} {
  func.func @a14_gather4_pair_on_consumer_blackwell(%x: memref<64x128xf16>, %z: memref<2x4x64xf16>, %r0: index, %r1: index, %r2: index, %r3: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %leader = arith.cmpi eq, %rank, %c0 : index
    // Each CTA gathers its own rows (the peer's shifted by one), both complete on the leader's barrier.
    %s0 = arith.addi %r0, %rank : index
    // expected-error@+2 {{'copy.gather4' op needs a target with TMA gather4 for a CTA pair (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f), but the target is sm_120a}}
    // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, or drop leader_tracked and let each CTA wait on its own barrier}}
    copy.gather4 %x rows [%s0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0] leader_tracked : memref<64x128xf16> to memref<4x64xf16, #copy.smem>, !copy.barrier<1>
    scf.if %leader {
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
      copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    } else {
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    }
    copy.async_copy %tile to %z[%rank, %c0, %c0] : memref<4x64xf16, #copy.smem> to memref<2x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
