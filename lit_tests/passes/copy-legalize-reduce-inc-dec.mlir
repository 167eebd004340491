// A TMA reduction inc or dec (u32, wrapping) before sm_90: no memref.atomic_rmw kind does
// it, so copy-legalize writes a memref.generic_atomic_rmw whose body is PTX's wrapping
// increment (inc: old >= s ? 0 : old + 1; dec: old == 0 || old > s ? s : old - 1), which
// convert-memref-to-llvm lowers to red.global.inc.u32 / red.global.dec.u32.
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_80}' | filecheck %s
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_86}' | filecheck %s
// Legalizing the result again changes nothing (the bodies parse back as written).
// RUN: copy-opt %s --split-input-file -p 'copy-legalize{target=sm_80}' > %t.once
// RUN: copy-opt %t.once --split-input-file -p 'copy-legalize{target=sm_80}' > %t.twice
// RUN: diff %t.once %t.twice

// inc: each element of the tile is one thread's wrapping increment of the GMEM element.
// CHECK-LABEL: func.func @reduce_inc(
// CHECK:       scf.for
// CHECK:         %[[S:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x64xi32, #copy.smem>
// CHECK:         scf.if
// CHECK-NEXT:      %{{.*}} = memref.generic_atomic_rmw %{{.*}}[%{{.*}}, %{{.*}}] : memref<256x256xi32> {
// CHECK-NEXT:      ^{{.*}}(%[[OLD:.*]]: i32):
// CHECK-NEXT:        %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:        %[[C1:.*]] = arith.constant 1 : i32
// CHECK-NEXT:        %[[WRAP:.*]] = arith.cmpi uge, %[[OLD]], %[[S]] : i32
// CHECK-NEXT:        %[[NEXT:.*]] = arith.addi %[[OLD]], %[[C1]] : i32
// CHECK-NEXT:        %[[NEW:.*]] = arith.select %[[WRAP]], %[[C0]], %[[NEXT]] : i32
// CHECK-NEXT:        memref.atomic_yield %[[NEW]] : i32
// CHECK-NEXT:      }
// CHECK-NOT:   copy.commit_group bulk
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @reduce_inc(%x: memref<256x256xi32>, %o: memref<256x256xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xi32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<256x256xi32> to memref<64x64xi32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %o[%c0, %c0] reduce inc : memref<64x64xi32, #copy.smem> to memref<256x256xi32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}

// -----

// dec: wraps to s at 0 and above s.
// CHECK-LABEL: func.func @reduce_dec(
// CHECK:         %[[S:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x64xi32, #copy.smem>
// CHECK:           %{{.*}} = memref.generic_atomic_rmw %{{.*}}[%{{.*}}, %{{.*}}] : memref<200x136xi32> {
// CHECK-NEXT:      ^{{.*}}(%[[OLD:.*]]: i32):
// CHECK-NEXT:        %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:        %[[C1:.*]] = arith.constant 1 : i32
// CHECK-NEXT:        %[[ZERO:.*]] = arith.cmpi eq, %[[OLD]], %[[C0]] : i32
// CHECK-NEXT:        %[[ABOVE:.*]] = arith.cmpi ugt, %[[OLD]], %[[S]] : i32
// CHECK-NEXT:        %[[WRAP:.*]] = arith.ori %[[ZERO]], %[[ABOVE]] : i1
// CHECK-NEXT:        %[[PREV:.*]] = arith.subi %[[OLD]], %[[C1]] : i32
// CHECK-NEXT:        %[[NEW:.*]] = arith.select %[[WRAP]], %[[S]], %[[PREV]] : i32
// CHECK-NEXT:        memref.atomic_yield %[[NEW]] : i32
// CHECK-NEXT:      }
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @reduce_dec(%x: memref<200x136xi32>, %o: memref<200x136xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : memref<64x64xi32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0] : memref<200x136xi32> to memref<64x64xi32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %o[%c0, %c0] reduce dec : memref<64x64xi32, #copy.smem> to memref<200x136xi32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
