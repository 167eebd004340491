// A warp-specialized ring written for sm_90a, legalized for sm_80 and sm_86: the producer
// warp's TMA loads become mbarrier-tracked cp.async copies on the same `full` barriers (its
// 32 threads each copy their chunks and arrive once: `full` counts 32 arrivals a phase, not
// 1), the consumer keeps its waits on `full` and its release on `empty`, its TMA store
// becomes thread stores by the role's 32 threads, and its bulk waits the role's own barrier
// (copy.wait_group cp_async 0: bar.sync 2 in the lowering), not the block's. copy-opt
// verifies the result (the protocol analysis included) before printing it.
// RUN: copy-opt %s -p 'copy-legalize{target=sm_80}' | filecheck %s
// RUN: copy-opt %s -p 'copy-legalize{target=sm_86}' | filecheck %s
// The PTX for both targets (LLVM lays the blocks out in its own order): the chunks and the
// noinc arrive, the consumer's test_wait loop, its thread stores and its named barrier.
// RUN: copy-opt %s -p 'copy-legalize{target=sm_80},lower-copy-to-llvm' -t ptx | filecheck %s --check-prefix=PTX
// RUN: copy-opt %s -p 'copy-legalize{target=sm_86},lower-copy-to-llvm' -t ptx | filecheck %s --check-prefix=PTX
// Legalizing twice changes nothing.
// RUN: copy-opt %s -p 'copy-legalize{target=sm_80}' > %t.once
// RUN: copy-opt %t.once -p 'copy-legalize{target=sm_80}' > %t.twice
// RUN: diff %t.once %t.twice

// CHECK-LABEL: func.func @ws_ring
// CHECK: %full = copy.barrier_init arrivals 32 : !copy.barrier<2>
// CHECK-NEXT: %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
// CHECK: copy.warp_specialize warps [1, 1] {
// CHECK: scf.for %k = %c0 to %count step %c1 {
// CHECK: copy.barrier_wait %empty[%slot], %ep : !copy.barrier<2>
// CHECK: copy.async_copy %x[%row, %c0] to %ring[%slot] barrier %full[%slot] impl cp_async oob zeros : memref<1024x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
// CHECK: }, {
// CHECK-NEXT: ^{{.*}}(%[[T:.*]]: index):
// CHECK: copy.barrier_wait %full[%slot{{.*}}], %fp : !copy.barrier<2>
// CHECK: scf.for %{{.*}} = %[[T]] to %{{.*}} step %{{.*}} {
// CHECK: vector.load %ring[%slot{{.*}}, %{{.*}}, %{{.*}}] : memref<2x64x64xf32, #copy.smem>, vector<4xf32>
// CHECK: vector.store
// CHECK: copy.wait_group cp_async 0
// CHECK-NEXT: copy.barrier_arrive %empty[%slot{{.*}}] issuer elected : !copy.barrier<2>
// CHECK-NOT: gpu.barrier
// CHECK-NOT: bulk
// CHECK: func.return

// PTX: .target sm_8{{[06]}}
// PTX-NOT: cp.async.bulk
// PTX-DAG: mbarrier.init.shared.b64
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: cp.async.mbarrier.arrive.noinc.shared.b64
// PTX-DAG: mbarrier.test_wait.parity.shared.b64
// PTX-DAG: ld.shared.v4.b32
// PTX-DAG: st.global.v4.b32
// PTX-DAG: barrier.sync 2, 32;
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ws_ring(%x: memref<1024x64xf32>, %y: memref<1024x64xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %count = arith.constant 16 : index
    %ring = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %slot = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %again = arith.cmpi uge, %k, %c2 : index
        scf.if %again {
          %prev = arith.subi %lap, %c1 : index
          %prev2 = arith.remui %prev, %c2 : index
          %ep = arith.cmpi ne, %prev2, %c0 : index
          copy.barrier_wait %empty[%slot], %ep : !copy.barrier<2>
        }
        %row = arith.muli %k, %c64 : index
        copy.async_copy %x[%row, %c0] to %ring[%slot] barrier %full[%slot] oob zeros : memref<1024x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
      }
    }, {
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {
        %slot = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lap2 = arith.remui %lap, %c2 : index
        %fp = arith.cmpi ne, %lap2, %c0 : index
        copy.barrier_wait %full[%slot], %fp : !copy.barrier<2>
        %row = arith.muli %k, %c64 : index
        copy.async_copy %ring[%slot] to %y[%row, %c0] : memref<2x64x64xf32, #copy.smem> to memref<1024x64xf32>
        copy.commit_group bulk
        copy.wait_group bulk 0 read_only
        copy.barrier_arrive %empty[%slot] issuer elected : !copy.barrier<2>
      }
      copy.wait_group bulk 0
    }
    func.return
  }
}
