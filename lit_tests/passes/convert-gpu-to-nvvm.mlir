// RUN: copy-opt %s -p convert-gpu-to-nvvm | filecheck %s
// RUN: copy-opt %s -t llvm --target sm_90a | filecheck %s --check-prefix=IR
// RUN: copy-opt %s -t ptx --target sm_90a | filecheck %s --check-prefix=PTX

// gpu.shuffle -> nvvm.shfl.sync, as MLIR's GPUToNVVM lowers it: the first `width` lanes take
// part (thread mask -1 >> (32 - width)), the source lane is clamped at width - 1 (32 - width
// for `up`), and the value and its valid bit come out of the {T, i1} result. Then the
// intrinsic it calls, and the PTX instruction (shfl.sync.bfly.b32 for xor).

// CHECK-LABEL: func.func @shuffle(
// CHECK-SAME: %[[V:[a-z0-9]+]]: f32, %[[I:[a-z0-9]+]]: i32, %[[OFF:[a-z0-9]+]]: i32, %[[W:[a-z0-9]+]]: i32
// IR-LABEL: define ptx_kernel void @shuffle(
// PTX-LABEL: .entry shuffle(
func.func @shuffle(%y: memref<2xf32>, %z: memref<2xi32>, %v: f32, %i: i32, %offset: i32, %width: i32) attributes {gpu.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
  // CHECK-NEXT: %[[MINUS_ONE:.*]] = llvm.mlir.constant(-1 : i32) : i32
  // CHECK-NEXT: %[[THIRTY_TWO:.*]] = llvm.mlir.constant(32 : i32) : i32
  // CHECK-NEXT: %[[LEAD:.*]] = llvm.sub %[[THIRTY_TWO]], %[[W]] : i32
  // CHECK-NEXT: %[[MASK:.*]] = llvm.lshr %[[MINUS_ONE]], %[[LEAD]] : i32
  // CHECK-NEXT: %[[CLAMP:.*]] = llvm.sub %[[W]], %[[ONE]] : i32
  // CHECK-NEXT: %[[SHFL:.*]] = nvvm.shfl.sync bfly %[[MASK]], %[[V]], %[[OFF]], %[[CLAMP]] {return_value_and_is_valid} : f32 -> !llvm.struct<(f32, i1)>
  // CHECK-NEXT: %{{.*}} = llvm.extractvalue %[[SHFL]][0] : !llvm.struct<(f32, i1)>
  // CHECK-NEXT: %{{.*}} = llvm.extractvalue %[[SHFL]][1] : !llvm.struct<(f32, i1)>
  // IR: call { float, i1 } @llvm.nvvm.shfl.sync.bfly.f32p(i32 %{{.*}}, float %{{.*}}, i32 %{{.*}}, i32 %{{.*}})
  // PTX: shfl.sync.bfly.b32 {{.*}}|{{.*}}, {{.*}}, {{.*}}, {{.*}}, {{.*}};
  %r, %valid = gpu.shuffle xor %v, %offset, %width : f32
  %s = arith.select %valid, %r, %v : f32
  memref.store %s, %y[%c0] : memref<2xf32>
  // CHECK: %[[LEAD2:.*]] = llvm.sub %{{.*}}, %[[W]] : i32
  // CHECK-NEXT: %[[MASK2:.*]] = llvm.lshr %{{.*}}, %[[LEAD2]] : i32
  // CHECK-NEXT: %{{.*}} = nvvm.shfl.sync up %[[MASK2]], %[[I]], %[[OFF]], %[[LEAD2]] {return_value_and_is_valid} : i32 -> !llvm.struct<(i32, i1)>
  // IR: call { i32, i1 } @llvm.nvvm.shfl.sync.up.i32p(
  // PTX: shfl.sync.up.b32
  %n, %nvalid = gpu.shuffle up %i, %offset, %width : i32
  %m = arith.select %nvalid, %n, %i : i32
  memref.store %m, %z[%c0] : memref<2xi32>
  // CHECK: nvvm.shfl.sync down %{{.*}}, %[[V]], %[[OFF]], %{{.*}} {return_value_and_is_valid} : f32 -> !llvm.struct<(f32, i1)>
  // IR: call { float, i1 } @llvm.nvvm.shfl.sync.down.f32p(
  // PTX: shfl.sync.down.b32
  %d, %dvalid = gpu.shuffle down %v, %offset, %width : f32
  memref.store %d, %y[%c1] : memref<2xf32>
  // CHECK: nvvm.shfl.sync idx %{{.*}}, %[[I]], %[[OFF]], %{{.*}} {return_value_and_is_valid} : i32 -> !llvm.struct<(i32, i1)>
  // IR: call { i32, i1 } @llvm.nvvm.shfl.sync.idx.i32p(
  // PTX: shfl.sync.idx.b32
  %x, %xvalid = gpu.shuffle idx %i, %offset, %width : i32
  memref.store %x, %z[%c1] : memref<2xi32>
  func.return
}
