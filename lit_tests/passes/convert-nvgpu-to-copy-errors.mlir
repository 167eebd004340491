// RUN: copy-opt %s --split-input-file -p 'convert-nvgpu-to-copy{fragments=true block-size=128}' --verify-diagnostics

// What upstream's nvgpu ops can say and the copy dialect cannot is an error at the nvgpu op
// (convert-nvgpu-to-copy, passes/convert_nvgpu_to_copy.py); an nvgpu kernel that breaks a
// catalogue rule is reported by the copy verifiers and the protocol analysis at the nvgpu
// op's own line (the copy op keeps its location).

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
// fix: none -- nvgpu has no parity-based test; its copy form is copy.barrier_test %b[%i], %parity
func.func @token_test_wait() {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %b = nvgpu.mbarrier.create -> !bars
  nvgpu.mbarrier.init %b[%c0], %c128 : !bars
  %t = nvgpu.mbarrier.arrive %b[%c0] : !bars -> !nvgpu.mbarrier.token
  // expected-error@+2 {{pass 'convert-nvgpu-to-copy' failed: 'nvgpu.mbarrier.test.wait' op a test of the phase an arrival's token names has no copy equivalent}}
  // expected-note@+1 {{test the phase by its parity (copy.barrier_test %b[%i], %parity), as mbarrier.test_wait.parity does}}
  %done = nvgpu.mbarrier.test.wait %b[%c0], %t : !bars, !nvgpu.mbarrier.token
  return
}

// -----

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
// fix: s|() -> !nvgpu.mbarrier.token {|() {|
// fix: s|return %t : !nvgpu.mbarrier.token|return|
func.func @token_returned() -> !nvgpu.mbarrier.token {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %b = nvgpu.mbarrier.create -> !bars
  nvgpu.mbarrier.init %b[%c0], %c128 : !bars
  // expected-error@+2 {{pass 'convert-nvgpu-to-copy' failed: 'nvgpu.mbarrier.arrive' op the arrival's token is used: a token-based phase has no copy equivalent}}
  // expected-note@+1 {{leave the token unused: nothing may read the nvgpu.mbarrier.token}}
  %t = nvgpu.mbarrier.arrive %b[%c0] : !bars -> !nvgpu.mbarrier.token
  return %t : !nvgpu.mbarrier.token
}

// -----

!tmap = !nvgpu.tensormap.descriptor<tensor = memref<64x32xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
// fix: s| multicast_mask = %mask||
func.func @multicast(%in: !tmap, %buf: memref<64x32xf32, 3>, %mask: i16) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = nvgpu.mbarrier.create -> !bars
  nvgpu.mbarrier.init %b[%c0], %c1 : !bars
  // expected-error@+2 {{pass 'convert-nvgpu-to-copy' failed: 'nvgpu.tma.async.load' op a multicast_mask has no copy equivalent}}
  // expected-note@+1 {{drop the multicast_mask: in the copy dialect a load names the cluster dims that share it (copy.async_copy's collective = array<i64: 0>)}}
  nvgpu.tma.async.load %in[%c0, %c0], %b[%c0] to %buf multicast_mask = %mask : !tmap, !bars -> memref<64x32xf32, 3>
  return
}

// -----

// fix: s|, 4, %n : memref|, 4 : memref|
func.func @partial_copy(%x: memref<64x4xf32>, %buf: memref<2x4xf32, 3>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+2 {{pass 'convert-nvgpu-to-copy' failed: 'nvgpu.device_async_copy' op a partial copy (srcElements, the rest zero-filled) has no copy equivalent}}
  // expected-note@+1 {{drop the srcElements operand %n and copy whole slots: copy.async_copy fills a box's out-of-bounds part with zeros itself}}
  %0 = nvgpu.device_async_copy %x[%c0, %c0], %buf[%c1, %c0], 4, %n : memref<64x4xf32> to memref<2x4xf32, 3>
  %g = nvgpu.device_async_create_group %0
  nvgpu.device_async_wait %g {numGroups = 0 : i32}
  return
}

// -----

// fix: none -- a thread's own 16 bytes have no copy form: the copy dialect's cp.async fills whole slots with the block's threads
func.func @thread_chunk(%x: memref<64x64xf32>, %buf: memref<64x64xf32, 3>, %i: index) {
  // expected-error@+2 {{pass 'convert-nvgpu-to-copy' failed: 'nvgpu.device_async_copy' op a copy of 4 elements at a thread's own place in %dst (not a whole slot of memref<64x64xf32, 3 : i64>) has no copy equivalent}}
  // expected-note@+1 {{copy.async_copy impl cp_async copies whole SMEM slots with the block's threads: index the slot's leading dims, its trailing dims at 0, and copy its element count}}
  %0 = nvgpu.device_async_copy %x[%i, %i], %buf[%i, %i], 4 : memref<64x64xf32> to memref<64x64xf32, 3>
  return
}

// -----

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
// fix: none -- which count each barrier needs is the kernel's choice
func.func @mixed_counts() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %b = nvgpu.mbarrier.create -> !bars
  nvgpu.mbarrier.init %b[%c0], %c1 : !bars
  // expected-error@+2 {{pass 'convert-nvgpu-to-copy' failed: 'nvgpu.mbarrier.init' op the group's barriers are initialized with different counts [1, 128]}}
  // expected-note@+1 {{split the group in groups of one count: copy.barrier_init gives every barrier of a group the same count}}
  nvgpu.mbarrier.init %b[%c1], %c128 : !bars
  return
}

// -----

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
// fix: none -- the block's size is the caller's: a constant count is the kernel's choice
func.func @block_dim_count() {
  %c0 = arith.constant 0 : index
  %n = gpu.block_dim x
  %b = nvgpu.mbarrier.create -> !bars
  // expected-error@+2 {{pass 'convert-nvgpu-to-copy' failed: 'nvgpu.mbarrier.init' op the arrival count is not a constant}}
  // expected-note@+1 {{give the count as an arith.constant: copy.barrier_init takes one constant count for the group}}
  nvgpu.mbarrier.init %b[%c0], %n : !bars
  return
}

// -----

// An nvgpu kernel whose TMA box is over the hardware's 256 elements a dimension: the copy
// verifier reports it at the nvgpu load.
!tmap = !nvgpu.tensormap.descriptor<tensor = memref<512x32xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
// rule: C7
// fix: s|memref<512x32xf32, 3>, swizzle|memref<256x32xf32, 3>, swizzle|
// fix: s|%buf: memref<512x32xf32, 3>|%buf: memref<256x32xf32, 3>|
// fix: s|-> memref<512x32xf32, 3>|-> memref<256x32xf32, 3>|
// fix: s|arith.constant 65536|arith.constant 32768|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @box_over_256(%in: !tmap, %buf: memref<512x32xf32, 3>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tx = arith.constant 65536 : index
    %false = arith.constant false
    %tid = gpu.thread_id x
    %leader = arith.cmpi eq, %tid, %c0 : index
    %b = nvgpu.mbarrier.create -> !bars
    nvgpu.mbarrier.init %b[%c0], %c1 : !bars
    // expected-error@+3 {{'copy.async_copy' op Async copies only support copying <=256 elements along each dimension, got 512}}
    // expected-note@+2 {{split the box [512, 32] into several copies of at most 256 elements per dimension}}
    // expected-note@+1 {{the op was left invalid by pass 'convert-nvgpu-to-copy'}}
    nvgpu.tma.async.load %in[%c0, %c0], %b[%c0] to %buf, predicate = %leader : !tmap, !bars -> memref<512x32xf32, 3>
    nvgpu.mbarrier.arrive.expect_tx %b[%c0], %tx, predicate = %leader : !bars
    nvgpu.mbarrier.try_wait.parity %b[%c0], %false, %c0 : !bars
    return
  }
}

// -----

// An nvgpu kernel whose mbarrier counts two arrivals a phase where one thread arrives: the
// protocol analysis reports the wait that never returns at the nvgpu wait.
!tmap = !nvgpu.tensormap.descriptor<tensor = memref<64x32xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
// rule: P6
// fix: s|%c2 = arith.constant 2|%c1 = arith.constant 1|
// fix: s|%b[%c0], %c2 : !bars|%b[%c0], %c1 : !bars|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @count_mismatch(%in: !tmap, %buf: memref<64x32xf32, 3>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %tx = arith.constant 8192 : index
    %false = arith.constant false
    %tid = gpu.thread_id x
    %leader = arith.cmpi eq, %tid, %c0 : index
    // expected-note@+1 {{initialized with arrivals 2}}
    %b = nvgpu.mbarrier.create -> !bars
    nvgpu.mbarrier.init %b[%c0], %c2 : !bars
    nvgpu.tma.async.load %in[%c0, %c0], %b[%c0] to %buf, predicate = %leader : !tmap, !bars -> memref<64x32xf32, 3>
    // expected-note@+1 {{an arrival on phase 0}}
    nvgpu.mbarrier.arrive.expect_tx %b[%c0], %tx, predicate = %leader : !bars
    // expected-error@+2 {{'copy.barrier_wait' op this wait never returns: phase 0 of barrier 0 of %b has 1 of its 2 arrivals when the wait is reached, and nothing arrives while it waits}}
    // expected-note@+1 {{arrive on barrier 0 of %b (1 more) before the wait, or wait on parity 1 (the phase before, complete at once)}}
    nvgpu.mbarrier.try_wait.parity %b[%c0], %false, %c0 : !bars
    return
  }
}

// -----

// An nvgpu kernel whose threads read the TMA load's SMEM before waiting for it: the race is
// reported at the nvgpu kernel's load, the copy it races with as a note.
!tmap = !nvgpu.tensormap.descriptor<tensor = memref<64x32xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
// rule: P1
// fix: s|    %v = memref.load|    nvgpu.mbarrier.try_wait.parity %b[%c0], %false, %c0 : !bars %v = memref.load|
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @race(%in: !tmap, %buf: memref<64x32xf32, 3>, %out: memref<64x32xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tx = arith.constant 8192 : index
    %false = arith.constant false
    %tid = gpu.thread_id x
    %leader = arith.cmpi eq, %tid, %c0 : index
    %b = nvgpu.mbarrier.create -> !bars
    nvgpu.mbarrier.init %b[%c0], %c1 : !bars
    // expected-note@+1 {{the copy that fills it}}
    nvgpu.tma.async.load %in[%c0, %c0], %b[%c0] to %buf, predicate = %leader : !tmap, !bars -> memref<64x32xf32, 3>
    nvgpu.mbarrier.arrive.expect_tx %b[%c0], %tx, predicate = %leader : !bars
    // expected-error@+2 {{'memref.load' op threads' load reads %buf[?, 0] before the copy that fills %buf completes}}
    // expected-note@+1 {{wait on barrier 0 of %b for phase 0 (copy.barrier_wait with parity 0) before the read}}
    %v = memref.load %buf[%tid, %c0] : memref<64x32xf32, 3>
    nvgpu.mbarrier.try_wait.parity %b[%c0], %false, %c0 : !bars
    memref.store %v, %out[%tid, %c0] : memref<64x32xf32>
    return
  }
}

// -----

!tmap = !nvgpu.tensormap.descriptor<tensor = memref<64x32xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = interleave_16b>
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
// fix: s|interleave = interleave_16b|interleave = none|
func.func @interleaved(%in: !tmap, %buf: memref<64x32xf32, 3>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = nvgpu.mbarrier.create -> !bars
  nvgpu.mbarrier.init %b[%c0], %c1 : !bars
  // expected-error@+2 {{pass 'convert-nvgpu-to-copy' failed: 'nvgpu.tma.async.load' op the map's interleave = interleave_16b has no copy equivalent}}
  // expected-note@+1 {{use interleave = none: copy.async_copy moves tiled boxes}}
  nvgpu.tma.async.load %in[%c0, %c0], %b[%c0] to %buf : !tmap, !bars -> memref<64x32xf32, 3>
  return
}

// -----

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
// fix: none -- the group's count is its creator's: copy.barrier_init allocates and initializes at once
func.func @argument_init(%b: !bars) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+2 {{pass 'convert-nvgpu-to-copy' failed: 'nvgpu.mbarrier.init' op an init of an mbarrier group passed in as an argument has no copy equivalent}}
  // expected-note@+1 {{create and initialize the group in the kernel (nvgpu.mbarrier.create, then nvgpu.mbarrier.init): copy.barrier_init does both}}
  nvgpu.mbarrier.init %b[%c0], %c1 : !bars
  return
}

// -----

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
// fix: s|%tx : !bars|%tx, predicate = %leader : !bars|
func.func @unguarded_expect_tx() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %tx = arith.constant 4096 : index
  %tid = gpu.thread_id x
  %leader = arith.cmpi eq, %tid, %c0 : index
  %b = nvgpu.mbarrier.create -> !bars
  nvgpu.mbarrier.init %b[%c0], %c1 : !bars
  // expected-error@+2 {{pass 'convert-nvgpu-to-copy' failed: 'nvgpu.mbarrier.arrive.expect_tx' op every thread that executes it arrives expecting 4096 bytes: the copy dialect's arrival with bytes is the block's one}}
  // expected-note@+1 {{guard it so that one thread arrives with the bytes (predicate = %p, %p true for gpu.thread_id x == 0) and the others with 0 bytes}}
  nvgpu.mbarrier.arrive.expect_tx %b[%c0], %tx : !bars
  return
}
