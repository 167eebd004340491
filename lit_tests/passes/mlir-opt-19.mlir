// REQUIRES: mlir-opt-19
// The NVVM + LLVM dialect output of the lowering parses in upstream MLIR (Debian's
// mlir-opt-19), for every example whose ops LLVM 19 has (the TMA reduction op is newer).
// -allow-unregistered-dialect admits the copy.* attributes the module keeps.

// RUN: copy-opt %S/../../examples/tma_tile_copy.mlir -p lower-copy-to-llvm | mlir-opt-19 -allow-unregistered-dialect | filecheck %s --check-prefix=TMA
// TMA: llvm.func @tile_copy(
// TMA: nvvm.mbarrier.arrive.expect_tx.shared
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global
// TMA: nvvm.mbarrier.try_wait.parity.shared
// TMA: nvvm.cp.async.bulk.tensor.global.shared.cta

// RUN: copy-opt %S/../../examples/multicast_copy.mlir -p lower-copy-to-llvm | mlir-opt-19 -allow-unregistered-dialect | filecheck %s --check-prefix=MULTICAST
// MULTICAST: nvvm.cluster.arrive
// MULTICAST: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask

// RUN: copy-opt %S/../../examples/swizzled_copy.mlir -p lower-copy-to-llvm | mlir-opt-19 -allow-unregistered-dialect | filecheck %s --check-prefix=SWIZZLED
// SWIZZLED: nvvm.cp.async.bulk.tensor.shared.cluster.global

// RUN: copy-opt %S/../../examples/oob_copy.mlir -p lower-copy-to-llvm | mlir-opt-19 -allow-unregistered-dialect | filecheck %s --check-prefix=OOB
// OOB: nvvm.cp.async.bulk.tensor.global.shared.cta

// RUN: copy-opt %S/../../examples/cp_async_copy.mlir -p lower-copy-to-llvm | mlir-opt-19 -allow-unregistered-dialect | filecheck %s --check-prefix=CPASYNC
// CPASYNC: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CPASYNC: nvvm.cp.async.commit.group
