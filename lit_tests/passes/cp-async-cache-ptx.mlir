// RUN: copy-opt %s -t ptx | filecheck %s

// A cp.async copy's cache mode reaches the PTX: `cache ca` keeps 16-byte chunks in L1
// (cp.async.ca; it was emitted as .cg, issue S), `cache cg` and no mode bypass it.

builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @cache_modes(%x: memref<1000x256xf16>, %i: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %buf = copy.alloc_smem : memref<3x32x256xf16, #copy.smem>
    copy.async_copy %x[%i, %c0] to %buf[%c0] oob promise_in_bounds cache ca : memref<1000x256xf16> to memref<3x32x256xf16, #copy.smem>
    copy.async_copy %x[%i, %c0] to %buf[%c1] oob promise_in_bounds cache cg : memref<1000x256xf16> to memref<3x32x256xf16, #copy.smem>
    copy.async_copy %x[%i, %c0] to %buf[%c2] oob promise_in_bounds : memref<1000x256xf16> to memref<3x32x256xf16, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    func.return
  }
}

// CHECK-LABEL: .entry cache_modes(
// CHECK:       cp.async.ca.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16;
// CHECK:       cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16;
// CHECK:       cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16;
// CHECK-NOT:   cp.async.ca
