// What plain xdsl-opt prints for the copy dialect's errors. xDSL's xdsl-opt lets a verifier
// or parse error escape as a Python traceback; loaded in xdsl-opt, the project's
// `xdsl.universe` entry point installs a hook that prints it as a diagnostic instead (exit
// status 1): the message, xDSL's dump with the op underlined, the fix note. xdsl-opt has no
// op locations, so the note points to copy-opt, which prints FILE:LINE:COL and the line.

// RUN: not xdsl-opt %s 2>&1 | filecheck %s
// RUN: not copy-opt %s 2>&1 | filecheck %s --check-prefix=COPY-OPT
// RUN: env COPY_OPT_TRACEBACK=1 not xdsl-opt %s 2>&1 | filecheck %s --check-prefix=TRACEBACK
// RUN: echo '"test.op"(%%x) : (i32) -> ()' | not xdsl-opt 2>&1 | filecheck %s --check-prefix=PARSE

builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @store(%x: memref<256x256xf32>) {
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    copy.async_copy %buf to %x[%c0, %c0] impl cp_async reduce add : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
    func.return
  }
}

// CHECK-NOT:  Traceback
// CHECK:      xdsl-opt: error: Only the TMA implementation supports reductions
// CHECK-NEXT: "builtin.module"() ({
// CHECK:          "copy.async_copy"(%buf, %x, %c0, %c0) {{.*}}
// CHECK-NEXT:     ^^^^^^^^^^^^^^^^^-{{.*}}
// CHECK-NEXT:     | Operation does not verify: Only the TMA implementation supports reductions
// CHECK:      xdsl-opt: note: use impl tma on sm_90 or newer
// CHECK-NEXT: xdsl-opt: note: xdsl-opt knows no source locations for ops; copy-opt reports this error at its line and column, with the source line (copy-opt FILE)
// CHECK-NOT:  Traceback

// COPY-OPT:      xdsl-opt.mlir:16:5: error: 'copy.async_copy' op Only the TMA implementation supports reductions
// COPY-OPT-NEXT:     copy.async_copy %buf to %x[%c0, %c0] impl cp_async reduce add : {{.*}}
// COPY-OPT-NEXT:     ^
// COPY-OPT-NEXT: xdsl-opt.mlir:16:5: note: use impl tma on sm_90 or newer

// TRACEBACK: Traceback (most recent call last):
// TRACEBACK: copy_dialect.errors.CopyVerifyException: Only the TMA implementation supports reductions

// PARSE-NOT:  Traceback
// PARSE:      stdin:2:1: error: values used but not defined: [%x]
