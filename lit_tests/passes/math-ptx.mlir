// A softmax-like row kernel (a warp's max and sum by gpu.shuffle, exp, rsqrt, and the other
// float ops of issue 31) through the whole pipeline to PTX, for each target; the gpu ops in
// their custom forms. tests/passes/test_math_lowering.py assembles it (nvJitLink, ptxas) and
// runs it in the interpreter against numpy.

// RUN: copy-opt %s -t ptx | filecheck %s
// RUN: copy-opt %s -t ptx --target sm_80 | filecheck %s --check-prefix=SM80
// RUN: copy-opt %s -t ptx --target sm_100a | filecheck %s --check-prefix=SM100

// CHECK: .target sm_90a
// CHECK: .entry softmax_row(
// CHECK: mov.u32 %r{{[0-9]+}}, %laneid;
// CHECK: mov.u32 %r{{[0-9]+}}, %ctaid.x;
// CHECK: shfl.sync.bfly.b32
// CHECK: max.NaN.f32
// CHECK: mul.rn.f32 %r{{[0-9]+}}, %r{{[0-9]+}}, 0f3FB8AA3B;
// CHECK-NEXT: ex2.approx.f32
// CHECK: shfl.sync.bfly.b32
// CHECK: rsqrt.approx.f32
// CHECK: abs.f32
// CHECK: ex2.approx.f32
// CHECK: fma.rn.f32
// CHECK: min.NaN.f32
// CHECK: max.f32
// CHECK: min.f32
// CHECK: bar.sync 0;
// CHECK-NOT: .extern .func

// SM80: .target sm_80
// SM80: max.NaN.f32
// SM80: ex2.approx.f32
// SM80: rsqrt.approx.f32

// SM100: .target sm_100a
// SM100: max.NaN.f32
// SM100: ex2.approx.f32

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @softmax_row(%x: memref<32x32xf32>, %y: memref<32x32xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>} {
    %lane = gpu.lane_id
    %row = gpu.block_id x
    %v = memref.load %x[%row, %lane] : memref<32x32xf32>
    %c32 = arith.constant 32 : i32
    %c16 = arith.constant 16 : i32
    %c8 = arith.constant 8 : i32
    %c4 = arith.constant 4 : i32
    %c2 = arith.constant 2 : i32
    %c1 = arith.constant 1 : i32
    // The row's maximum: a butterfly of maximumf.
    %a16, %ok0 = gpu.shuffle xor %v, %c16, %c32 : f32
    %m16 = arith.maximumf %v, %a16 : f32
    %a8, %ok1 = gpu.shuffle xor %m16, %c8, %c32 : f32
    %m8 = arith.maximumf %m16, %a8 : f32
    %a4, %ok2 = gpu.shuffle xor %m8, %c4, %c32 : f32
    %m4 = arith.maximumf %m8, %a4 : f32
    %a2, %ok3 = gpu.shuffle xor %m4, %c2, %c32 : f32
    %m2 = arith.maximumf %m4, %a2 : f32
    %a1, %ok4 = gpu.shuffle xor %m2, %c1, %c32 : f32
    %m = arith.maximumf %m2, %a1 : f32
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    // The row's sum of exponentials.
    %b16, %ok5 = gpu.shuffle xor %e, %c16, %c32 : f32
    %s16 = arith.addf %e, %b16 : f32
    %b8, %ok6 = gpu.shuffle xor %s16, %c8, %c32 : f32
    %s8 = arith.addf %s16, %b8 : f32
    %b4, %ok7 = gpu.shuffle xor %s8, %c4, %c32 : f32
    %s4 = arith.addf %s8, %b4 : f32
    %b2, %ok8 = gpu.shuffle xor %s4, %c2, %c32 : f32
    %s2 = arith.addf %s4, %b2 : f32
    %b1, %ok9 = gpu.shuffle xor %s2, %c1, %c32 : f32
    %s = arith.addf %s2, %b1 : f32
    %inv = math.rsqrt %s fastmath<afn> : f32
    %p = arith.mulf %e, %inv : f32
    // The other ops, kept live by the result.
    %ab = math.absf %p : f32
    %l = math.exp2 %ab : f32
    %f = math.fma %l, %p, %v : f32
    %lo = arith.minimumf %f, %v : f32
    %hi = arith.maxnumf %lo, %p : f32
    %r = arith.minnumf %hi, %l : f32
    %z = arith.constant 0.0 : f32
    %vec = vector.broadcast %z : f32 to vector<2xf32>
    %v1 = vector.insert %r, %vec [0] : f32 into vector<2xf32>
    %two = arith.constant 2 : index
    %odd = arith.remui %lane, %two : index
    %v2 = vector.insert %p, %v1 [%odd] : f32 into vector<2xf32>
    %o0 = vector.extract %v2[0] : f32 from vector<2xf32>
    %o1 = vector.extract %v2[1] : f32 from vector<2xf32>
    %o = arith.addf %o0, %o1 : f32
    memref.store %o, %y[%row, %lane] : memref<32x32xf32>
    gpu.barrier
    func.return
  }
}
