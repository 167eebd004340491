// An intrinsic the target cannot select makes LLVM abort; that happens in the LLVM worker
// process, and copy-opt reports it as a diagnostic and exits 1 (this process survives).
// RUN: not copy-opt %s -p reconcile-unrealized-casts -t ptx --target sm_80 2>&1 | filecheck %s

// CHECK: backend-errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: cannot print the result: LLVM{{.*}}NVPTX backend failed for sm_80 (worker killed by SIGABRT): LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.cp.async.bulk
// CHECK-NOT: Traceback

// fix: none -- the input is LLVM dialect the NVPTX backend cannot select for the RUN line's --target sm_80; the test checks that the abort is reported, no IR edit is suggested
builtin.module {
  llvm.func @k(%dst: !llvm.ptr<3>, %map: !llvm.ptr, %bar: !llvm.ptr<3>, %c: i32) attributes {nvvm.kernel} {
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %map, %bar, box[%c, %c] : !llvm.ptr<3>, !llvm.ptr
    llvm.return
  }
}
