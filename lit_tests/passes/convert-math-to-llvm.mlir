// RUN: copy-opt %s -p convert-math-to-llvm,convert-arith-to-llvm,convert-vector-to-llvm --no-verify-protocol | filecheck %s
// RUN: copy-opt %s -p convert-math-to-llvm,convert-arith-to-llvm,convert-vector-to-llvm --no-verify-protocol | copy-opt --no-verify-protocol | filecheck %s

// The math and float arith ops a softmax uses, and vector.extract/insert, as upstream MLIR's
// MathToLLVM / ArithToLLVM / VectorToLLVM lower them (math.exp: exp2 of x * log2(e), which
// NVPTX selects; see passes/convert_math_to_llvm.py); the fast-math flags carry over. The
// second RUN parses the printed llvm ops back (llvm.extractelement, llvm.intr.maximum and
// llvm.intr.minimum are upstream ops xDSL 0.75 lacks: copy_dialect/upstream_llvm.py).

// CHECK-LABEL: func.func @math
func.func @math(%x: f32, %y: f32, %z: f32, %v: vector<4xf32>) -> f32 {
  // CHECK-NEXT: %{{.*}} = llvm.intr.exp2(%{{.*}}) : (f32) -> f32
  %0 = math.exp2 %x : f32
  // CHECK-NEXT: %[[LOG2E:.*]] = llvm.mlir.constant(1.44269{{[0-9]*}} : f32) : f32
  // CHECK-NEXT: %[[S:.*]] = llvm.fmul %{{.*}}, %[[LOG2E]] : f32
  // CHECK-NEXT: %{{.*}} = llvm.intr.exp2(%[[S]]) : (f32) -> f32
  %1 = math.exp %0 : f32
  // CHECK-NEXT: %{{.*}} = llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) : (f32, f32, f32) -> f32
  %2 = math.fma %1, %y, %z : f32
  // CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
  // CHECK-NEXT: %[[SQ:.*]] = llvm.intr.sqrt(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
  // CHECK-NEXT: %{{.*}} = llvm.fdiv %[[ONE]], %[[SQ]] {fastmathFlags = #llvm.fastmath<afn>} : f32
  %3 = math.rsqrt %2 fastmath<afn> : f32
  // CHECK-NEXT: %{{.*}} = llvm.intr.fabs(%{{.*}}) : (f32) -> f32
  %4 = math.absf %3 : f32
  // CHECK-NEXT: %{{.*}} = llvm.intr.sqrt(%{{.*}}) : (f32) -> f32
  %5 = math.sqrt %4 : f32
  // CHECK-NEXT: %{{.*}} = llvm.intr.maximum(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
  %6 = arith.maximumf %5, %x : f32
  // CHECK-NEXT: %{{.*}} = llvm.intr.minimum(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
  %7 = arith.minimumf %6, %x : f32
  // CHECK-NEXT: %{{.*}} = llvm.intr.maxnum(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
  %8 = arith.maxnumf %7, %x : f32
  // CHECK-NEXT: %{{.*}} = llvm.intr.minnum(%{{.*}}, %{{.*}}) {fastmathFlags = #llvm.fastmath<nnan>} : (f32, f32) -> f32
  %9 = arith.minnumf %8, %x fastmath<nnan> : f32
  // CHECK-NEXT: %[[I1:.*]] = llvm.mlir.constant(1) : i64
  // CHECK-NEXT: %[[INS:.*]] = llvm.insertelement %{{.*}}, %{{.*}}[%[[I1]] : i64] : vector<4xf32>
  %10 = vector.insert %9, %v [1] : f32 into vector<4xf32>
  // CHECK-NEXT: %[[I3:.*]] = llvm.mlir.constant(3) : i64
  // CHECK-NEXT: %{{.*}} = llvm.extractelement %[[INS]][%[[I3]] : i64] : vector<4xf32>
  %11 = vector.extract %10[3] : f32 from vector<4xf32>
  // CHECK-NEXT: %{{.*}} = llvm.intr.floor(%{{.*}}) : (f32) -> f32
  %12 = math.floor %11 : f32
  // CHECK-NEXT: %{{.*}} = llvm.intr.ceil(%{{.*}}) : (f32) -> f32
  %13 = math.ceil %12 : f32
  func.return %13 : f32
}

// A vector of floats takes the same intrinsics, overloaded on the vector type, and a splat
// constant.
// CHECK-LABEL: func.func @vectors
func.func @vectors(%v: vector<2xf32>, %i: index) -> f32 {
  // CHECK-NEXT: llvm.mlir.constant(dense<1.44269{{[0-9]*}}> : vector<2xf32>) : vector<2xf32>
  // CHECK-NEXT: llvm.fmul
  // CHECK-NEXT: llvm.intr.exp2(%{{.*}}) : (vector<2xf32>) -> vector<2xf32>
  %0 = math.exp %v : vector<2xf32>
  // A dynamic position is the index as i64.
  // CHECK: llvm.extractelement %{{.*}}[%{{.*}} : i64] : vector<2xf32>
  %1 = vector.extract %0[%i] : f32 from vector<2xf32>
  func.return %1 : f32
}
