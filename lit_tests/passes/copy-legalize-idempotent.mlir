// Legalizing twice changes nothing, and legalizing to the IR's own target changes nothing.
// The diffs come last: lit's internal `diff` leaves its own PYTHONPATH to the commands after
// it, which would then import the installed copy of the passes, not this checkout's.
// Legalized twice, for sm_80 and for sm_86:
// RUN: copy-opt %S/copy-legalize.mlir --split-input-file -p 'copy-legalize{target=sm_80}' > %t.once
// RUN: copy-opt %t.once --split-input-file -p 'copy-legalize{target=sm_80}' > %t.twice
// RUN: copy-opt %S/copy-legalize.mlir --split-input-file -p 'copy-legalize{target=sm_86}' > %t.once86
// RUN: copy-opt %t.once86 --split-input-file -p 'copy-legalize{target=sm_86}' > %t.twice86
// The examples written for sm_90a, legalized to sm_90a, print as they parse:
// RUN: copy-opt %S/../../examples/tma_tile_copy.mlir > %t.orig
// RUN: copy-opt %S/../../examples/tma_tile_copy.mlir -p 'copy-legalize{target=sm_90a}' > %t.same
// RUN: copy-opt %S/../../examples/multicast_copy.mlir > %t.orig-mc
// RUN: copy-opt %S/../../examples/multicast_copy.mlir -p 'copy-legalize{target=sm_90a}' > %t.same-mc
// RUN: copy-opt %S/../../examples/swizzled_copy.mlir > %t.orig-sw
// RUN: copy-opt %S/../../examples/swizzled_copy.mlir -p 'copy-legalize{target=sm_90a}' > %t.same-sw
// And the sm_80 example, legalized to sm_80:
// RUN: copy-opt %S/../../examples/cp_async_copy.mlir > %t.orig-ca
// RUN: copy-opt %S/../../examples/cp_async_copy.mlir -p 'copy-legalize{target=sm_80}' > %t.same-ca
// RUN: diff %t.once %t.twice
// RUN: diff %t.once86 %t.twice86
// RUN: diff %t.orig %t.same
// RUN: diff %t.orig-mc %t.same-mc
// RUN: diff %t.orig-sw %t.same-sw
// RUN: diff %t.orig-ca %t.same-ca
