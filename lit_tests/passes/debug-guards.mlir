// RUN: copy-opt %s --split-input-file --debug-guards -p convert-copy-to-nvvm | filecheck %s
// RUN: copy-opt %s --split-input-file -p "convert-copy-to-nvvm{debug-guards=true}" | filecheck %s --check-prefix=MSG
// RUN: copy-opt %s --split-input-file --debug-guards -t llvm | filecheck %s --check-prefix=IR
// RUN: copy-opt %s --split-input-file -p convert-copy-to-nvvm | filecheck %s --check-prefix=NONE
// RUN: copy-opt %s --split-input-file -t llvm | filecheck %s --check-prefix=NONE

// Without debug guards, no guard code at all.
// NONE-NOT: copy-dialect guard
// NONE-NOT: vprintf
// NONE-NOT: trap
// NONE-NOT: globaltimer
// NONE-NOT: alloca

// Dynamic coordinates and barrier index: the elected thread checks that every coordinate
// of the load and the store fits in .s32 (K4), the load's innermost coordinate (TR12) and
// barrier index (P9), the store's innermost coordinate (TR12) and every coordinate (TR13);
// every thread checks the wait's index (P9) and waits at most 250 ms (P6).

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK: llvm.mlir.global private constant @[[LOAD_K4_0:__copy_guard_[0-9]+]]("copy-dialect guard K4: the TMA coordinate %lld at index 0 is outside the signed 32-bit range [-2147483648, 2147483647]: the instruction would address %lld at {{.*}}debug-guards.mlir:{{[0-9]+}}:5\0A\00")
  // CHECK: llvm.mlir.global private constant @[[LOAD_K4_1:__copy_guard_[0-9]+]]("copy-dialect guard K4: the TMA coordinate %lld at index 1 is outside
  // CHECK: llvm.mlir.global private constant @[[LOAD_TR12:__copy_guard_[0-9]+]]("copy-dialect guard TR12: the innermost TMA coordinate must be a multiple of 16 bytes, got %lld (%lld bytes) at {{.*}}debug-guards.mlir:{{[0-9]+}}:5\0A\00")
  // CHECK: llvm.mlir.global private constant @[[LOAD_P9:__copy_guard_[0-9]+]]("copy-dialect guard P9: barrier index %lld is out of bounds
  // CHECK: llvm.mlir.global private constant @[[WAIT_P9:__copy_guard_[0-9]+]]("copy-dialect guard P9:
  // CHECK: llvm.mlir.global private constant @[[WAIT_P6:__copy_guard_[0-9]+]]("copy-dialect guard P6:
  // CHECK: llvm.mlir.global private constant @[[STORE_K4_0:__copy_guard_[0-9]+]]("copy-dialect guard K4: the TMA coordinate %lld at index 0
  // CHECK: llvm.mlir.global private constant @[[STORE_K4_1:__copy_guard_[0-9]+]]("copy-dialect guard K4: the TMA coordinate %lld at index 1
  // CHECK: llvm.mlir.global private constant @[[STORE_TR12:__copy_guard_[0-9]+]]("copy-dialect guard TR12:
  // CHECK: llvm.mlir.global private constant @[[STORE_TR13_0:__copy_guard_[0-9]+]]("copy-dialect guard TR13: TMA store coordinates must be >= 0, got %lld at index 0
  // CHECK: llvm.mlir.global private constant @[[STORE_TR13_1:__copy_guard_[0-9]+]]("copy-dialect guard TR13: TMA store coordinates must be >= 0, got %lld at index 1
  // CHECK: llvm.func @vprintf(!llvm.ptr, !llvm.ptr) -> i32
  // CHECK-LABEL: func.func @dynamic(
  // CHECK: %[[BUF:.*]] = llvm.alloca %{{.*}} x !llvm.array<2 x i64> {alignment = 8 : i64} : (i32) -> !llvm.ptr
  func.func @dynamic(%x: memref<256x256xf32>, %y: memref<256x256xf32>, %i: index, %j: index, %s: index, %p: i1) {
    %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<2>
    // The load, in the elected thread's branch: K4 on i and j (i + 2^31 > 2^32 - 1,
    // unsigned; the message prints the low 32 bits the instruction would take), TR12 on
    // (j * 4) & 15, then P9 on s >= 2.
    // CHECK: scf.if %[[LEADER:.*]] {
    // CHECK: %[[I:.*]] = builtin.unrealized_conversion_cast %i : index to i64
    // CHECK-NEXT: %[[J:.*]] = builtin.unrealized_conversion_cast %j : index to i64
    // CHECK-NEXT: %[[HALF:.*]] = llvm.mlir.constant(2147483648) : i64
    // CHECK-NEXT: %[[SHIFTED:.*]] = llvm.add %[[I]], %[[HALF]] : i64
    // CHECK-NEXT: %[[MAX:.*]] = llvm.mlir.constant(4294967295) : i64
    // CHECK-NEXT: %[[WIDE:.*]] = llvm.icmp "ugt" %[[SHIFTED]], %[[MAX]] : i64
    // CHECK-NEXT: %[[LOW32:.*]] = llvm.trunc %[[I]] : i64 to i32
    // CHECK-NEXT: scf.if %[[WIDE]] {
    // CHECK-NEXT: llvm.store %[[I]], %[[BUF]] {alignment = 8 : i64} : i64, !llvm.ptr
    // CHECK-NEXT: llvm.sext %[[LOW32]] : i32 to i64
    // CHECK: llvm.mlir.addressof @[[LOAD_K4_0]]
    // CHECK: llvm.icmp "ugt"
    // CHECK: llvm.mlir.addressof @[[LOAD_K4_1]]
    // CHECK: %[[FOUR:.*]] = llvm.mlir.constant(4) : i64
    // CHECK-NEXT: %[[JB:.*]] = llvm.mul %[[J]], %[[FOUR]] : i64
    // CHECK-NEXT: %[[M15:.*]] = llvm.mlir.constant(15) : i64
    // CHECK-NEXT: %[[LOW:.*]] = llvm.and %[[JB]], %[[M15]] : i64
    // CHECK-NEXT: %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
    // CHECK-NEXT: %[[BAD:.*]] = llvm.icmp "ne" %[[LOW]], %[[ZERO]] : i64
    // CHECK-NEXT: scf.if %[[BAD]] {
    // CHECK-NEXT: llvm.store %[[J]], %[[BUF]] {alignment = 8 : i64} : i64, !llvm.ptr
    // CHECK: llvm.store %[[JB]], %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr
    // CHECK-NEXT: %[[FMT:.*]] = llvm.mlir.addressof @[[LOAD_TR12]] : !llvm.ptr
    // CHECK-NEXT: llvm.call @vprintf(%[[FMT]], %[[BUF]]) : (!llvm.ptr, !llvm.ptr) -> i32
    // CHECK-NEXT: llvm.call_intrinsic "llvm.trap"() : () -> ()
    // CHECK-NEXT: }
    // CHECK: %[[S:.*]] = builtin.unrealized_conversion_cast %s : index to i64
    // CHECK-NEXT: %[[TWO:.*]] = llvm.mlir.constant(2) : i64
    // CHECK-NEXT: %[[OUT:.*]] = llvm.icmp "uge" %[[S]], %[[TWO]] : i64
    // CHECK-NEXT: scf.if %[[OUT]] {
    // CHECK-NEXT: llvm.store %[[S]], %[[BUF]]
    // CHECK-NEXT: llvm.mlir.addressof @[[LOAD_P9]]
    // CHECK: nvvm.mbarrier.arrive.expect_tx.shared
    // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
    // MSG: copy-dialect guard K4: the TMA coordinate %lld at index 0 is outside the signed 32-bit range [-2147483648, 2147483647]: the instruction would address %lld at {{.*}}debug-guards.mlir:[[# @LINE + 3]]:5
    // MSG: copy-dialect guard K4: the TMA coordinate %lld at index 1 {{.*}} at {{.*}}debug-guards.mlir:[[# @LINE + 2]]:5
    // MSG: copy-dialect guard TR12: {{.*}} at {{.*}}debug-guards.mlir:[[# @LINE + 1]]:5
    copy.async_copy %x[%i, %j] to %buf barrier %bar[%s] : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<2>
    // The wait, by every thread: P9, then the bounded try_wait loop; a timeout prints the
    // barrier index and the parity.
    // CHECK: llvm.icmp "uge"
    // CHECK: llvm.mlir.addressof @[[WAIT_P9]]
    // CHECK: %[[DONE:.*]] = llvm.inline_asm has_side_effects "{ .reg .pred P1; .reg .b64 T0, T1; mov.u64 T0, %globaltimer; LAB_WAIT_${:uid}: mbarrier.try_wait.parity.shared::cta.b64 P1, [$1], $2, 10000000; @P1 bra DONE_${:uid}; mov.u64 T1, %globaltimer; sub.u64 T1, T1, T0; setp.lt.u64 P1, T1, 250000000; @P1 bra LAB_WAIT_${:uid}; DONE_${:uid}: selp.u32 $0, 1, 0, P1; }", "=r,l,r,~{memory}" %{{.*}}, %[[PHASE:.*]] : (!llvm.ptr<3>, i32) -> i32
    // CHECK: %[[TIMEOUT:.*]] = llvm.icmp "eq" %[[DONE]], %{{.*}} : i32
    // CHECK: scf.if %[[TIMEOUT]] {
    // CHECK: llvm.sext %[[PHASE]] : i32 to i64
    // CHECK: llvm.mlir.addressof @[[WAIT_P6]]
    // CHECK-NOT: nvvm.mbarrier.try_wait.parity.shared
    // MSG: copy-dialect guard P9: barrier index %lld is out of bounds of !copy.barrier<2> (barriers 0 to 1) at {{.*}}debug-guards.mlir:[[# @LINE + 2]]:5
    // MSG: copy-dialect guard P6: barrier_wait on barrier %lld of !copy.barrier<2> with parity %lld did not complete within 250 ms: no arrival completes that phase (deadlock) at {{.*}}debug-guards.mlir:[[# @LINE + 1]]:5
    copy.barrier_wait %bar[%s], %p : !copy.barrier<2>
    // The store: K4 on each coordinate, TR12, then TR13 on each coordinate (signed: i < 0).
    // CHECK: scf.if %[[LEADER]] {
    // CHECK: llvm.mlir.addressof @[[STORE_K4_0]]
    // CHECK: llvm.mlir.addressof @[[STORE_K4_1]]
    // CHECK: llvm.mlir.addressof @[[STORE_TR12]]
    // CHECK: llvm.icmp "slt" %{{.*}}, %{{.*}} : i64
    // CHECK: llvm.mlir.addressof @[[STORE_TR13_0]]
    // CHECK: llvm.icmp "slt" %{{.*}}, %{{.*}} : i64
    // CHECK: llvm.mlir.addressof @[[STORE_TR13_1]]
    // CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
    // MSG: copy-dialect guard TR12: {{.*}} at {{.*}}debug-guards.mlir:[[# @LINE + 3]]:5
    // MSG: copy-dialect guard TR13: TMA store coordinates must be >= 0, got %lld at index 0 at {{.*}}debug-guards.mlir:[[# @LINE + 2]]:5
    // MSG: copy-dialect guard TR13: TMA store coordinates must be >= 0, got %lld at index 1 at {{.*}}debug-guards.mlir:[[# @LINE + 1]]:5
    copy.async_copy %buf to %y[%i, %j] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0 read_only
    func.return
  }
}

// The LLVM IR has the format strings as private constants and declares vprintf; a failing
// guard prints and traps.
// IR: @[[G:__copy_guard_0]] = private constant [{{[0-9]+}} x i8] c"copy-dialect guard K4: the TMA coordinate %lld at index 0 is outside the signed 32-bit range [-2147483648, 2147483647]: the instruction would address %lld at {{.*}}debug-guards.mlir:{{[0-9]+}}:5\0A\00", align 1
// IR: define ptx_kernel void @dynamic(
// IR: %[[ARGS:[0-9]+]] = alloca [2 x i64], i32 1, align 8
// IR: call i32 @vprintf(ptr @[[G]], ptr %[[ARGS]])
// IR-NEXT: call void @llvm.trap()
// IR: call i32 asm sideeffect "{ .reg .pred P1; .reg .b64 T0, T1; mov.u64 T0, %globaltimer;
// IR: declare i32 @vprintf(ptr, ptr)
// IR: declare void @llvm.trap()

// -----

// Constant coordinates and indices are proven by the verifier (K4, TR12, TR13, I2): no guard but
// the bounded wait. A dynamic index of barrier_arrive (every thread) and of
// barrier_arrive_expect_tx (the elected thread) is checked (P9).

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK: llvm.mlir.global private constant @{{.*}}("copy-dialect guard P9: barrier index %lld is out of bounds of !copy.barrier<4> (barriers 0 to 3) at {{.*}}debug-guards.mlir:{{[0-9]+}}:5
  // CHECK-NEXT: llvm.mlir.global private constant @{{.*}}("copy-dialect guard P6: barrier_wait on barrier %lld of !copy.barrier<4>
  // CHECK-NEXT: llvm.mlir.global private constant @{{.*}}("copy-dialect guard P9: barrier index %lld is out of bounds of !copy.barrier<4> (barriers 0 to 3) at {{.*}}debug-guards.mlir:{{[0-9]+}}:5
  // CHECK-NEXT: llvm.func @vprintf
  // CHECK-LABEL: func.func @constant(
  func.func @constant(%x: memref<256x256xf32>, %y: memref<256x256xf32>, %s: index, %p: i1) {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<4>
    // CHECK: scf.if
    // CHECK-NOT: llvm.call @vprintf
    // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
    copy.async_copy %x[%c64, %c64] to %buf barrier %bar[%c0] {arrive = false} : memref<256x256xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<4>
    // CHECK: scf.if %[[LEADER:.*]] {
    // CHECK: llvm.icmp "uge"
    // CHECK: llvm.call @vprintf
    // CHECK: nvvm.mbarrier.arrive.expect_tx.shared
    // MSG: copy-dialect guard P9: {{.*}} at {{.*}}debug-guards.mlir:[[# @LINE + 1]]:5
    copy.barrier_arrive_expect_tx %bar[%s], 16384 : !copy.barrier<4>
    // CHECK: llvm.inline_asm has_side_effects "{ .reg .pred P1;
    // CHECK: llvm.call @vprintf
    copy.barrier_wait %bar[%c0], %p : !copy.barrier<4>
    // CHECK: scf.if %[[LEADER]] {
    // CHECK-NOT: llvm.call @vprintf
    // CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
    copy.async_copy %buf to %y[%c0, %c64] : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0 read_only
    // Every thread that arrives checks its index.
    // CHECK: llvm.icmp "uge"
    // CHECK: llvm.call @vprintf
    // CHECK: nvvm.mbarrier.arrive.shared
    // MSG: copy-dialect guard P9: {{.*}} at {{.*}}debug-guards.mlir:[[# @LINE + 1]]:5
    copy.barrier_arrive %bar[%s] : !copy.barrier<4>
    func.return
  }
}

// -----

// sm_80 has no try_wait: the bounded wait spins on test_wait.parity.

builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  // CHECK-LABEL: func.func @sm80_wait(
  func.func @sm80_wait(%p: i1) {
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.barrier_arrive %bar : !copy.barrier<1>
    // CHECK: llvm.inline_asm has_side_effects "{ .reg .pred P1; .reg .b64 T0, T1; mov.u64 T0, %globaltimer; LAB_WAIT_${:uid}: mbarrier.test_wait.parity.shared.b64 P1, [$1], $2; @P1 bra DONE_${:uid};
    // CHECK-NOT: nvvm.mbarrier.test_wait.parity.shared
    // MSG: copy-dialect guard P6: barrier_wait on barrier %lld of !copy.barrier<1> with parity %lld {{.*}} at {{.*}}debug-guards.mlir:[[# @LINE + 1]]:5
    copy.barrier_wait %bar, %p : !copy.barrier<1>
    func.return
  }
}

// -----

// A TMA prefetch checks its dynamic coordinates too (K4); its constant one gets no guard.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK: llvm.mlir.global private constant @[[PREFETCH_K4:__copy_guard_[0-9]+]]("copy-dialect guard K4: the TMA coordinate %lld at index 0 is outside the signed 32-bit range
  // CHECK-NOT: copy-dialect guard K4: the TMA coordinate %lld at index 1
  // CHECK-LABEL: func.func @prefetch_dynamic(
  func.func @prefetch_dynamic(%x: memref<256x256xf32>, %i: index) {
    %c0 = arith.constant 0 : index
    // CHECK: llvm.icmp "ugt"
    // CHECK: llvm.mlir.addressof @[[PREFETCH_K4]]
    // CHECK: nvvm.cp.async.bulk.tensor.prefetch
    // MSG: copy-dialect guard K4: {{.*}} at {{.*}}debug-guards.mlir:[[# @LINE + 1]]:5
    copy.prefetch %x[%i, %c0] {box = array<i64: 64, 64>} : memref<256x256xf32>
    func.return
  }
}

// -----

// A TMA im2col load checks its dynamic channel coordinate (IC13: (c * 2) & 15 for f16), its
// dynamic coordinates (K4) and its dynamic im2col offsets (IC11: a rank-4 map's are 8-bit, so
// zext(o) > 255 fails); the constant batch and spatial coordinates and offset get no guard.

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  // CHECK: llvm.mlir.global private constant @[[IM2COL_K4:__copy_guard_[0-9]+]]("copy-dialect guard K4: the TMA coordinate %lld at index 3 is outside
  // CHECK: llvm.mlir.global private constant @[[IM2COL_IC13:__copy_guard_[0-9]+]]("copy-dialect guard IC13: the channel coordinate of a TMA im2col load must be a multiple of 16 bytes, got %lld (%lld bytes) at {{.*}}debug-guards.mlir:{{[0-9]+}}:5\0A\00")
  // CHECK: llvm.mlir.global private constant @[[IM2COL_IC11:__copy_guard_[0-9]+]]("copy-dialect guard IC11: the im2col offset %lld at spatial dim 1 is outside [0, 255], the range of a rank-4 map at {{.*}}debug-guards.mlir:{{[0-9]+}}:5\0A\00")
  // CHECK-NOT: copy-dialect guard K4: the TMA coordinate %lld at index 0
  // CHECK-NOT: copy-dialect guard IC11: the im2col offset %lld at spatial dim 0
  // CHECK-LABEL: func.func @im2col_dynamic_channel(
  func.func @im2col_dynamic_channel(%x: memref<2x9x9x64xf16>, %c: index, %o: i16) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %m1 = arith.constant -1 : index
    %t = arith.constant 0 : i16
    %phase = arith.constant false
    %buf = copy.alloc_smem : memref<64x16xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    // CHECK: llvm.icmp "ugt"
    // CHECK: llvm.mlir.addressof @[[IM2COL_K4]]
    // CHECK: llvm.and %{{.*}}, %{{.*}} : i64
    // CHECK: llvm.mlir.addressof @[[IM2COL_IC13]]
    // CHECK: llvm.icmp "ugt"
    // CHECK: llvm.mlir.addressof @[[IM2COL_IC11]]
    // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} im2col[
    // MSG: copy-dialect guard IC13: {{.*}} at {{.*}}debug-guards.mlir:[[# @LINE + 2]]:5
    // MSG: copy-dialect guard IC11: {{.*}} at {{.*}}debug-guards.mlir:[[# @LINE + 1]]:5
    copy.im2col_load %x[%c0, %m1, %m1, %c] offsets [%t, %o] to %buf barrier %bar[%c0] {lower = array<i64: -1, -1>, upper = array<i64: -1, -1>} : memref<2x9x9x64xf16> to memref<64x16xf16, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    func.return
  }
}
