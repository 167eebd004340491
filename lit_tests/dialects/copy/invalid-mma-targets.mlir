// RUN: copy-opt %s --split-input-file --verify-diagnostics

// An upstream nvvm.tcgen05.mma checked against the kernel's target (rule MI8, a kernel rule:
// the op is upstream's, whose verifier leaves the target to the backend); one per chunk,
// with the fix its note gives. The scale-input-d (`scale = %s`) exists on sm_100a/f and
// sm_103a, not on Jetson Thor's sm_110a/f (docs/targets.md); lit_tests/passes/tcgen05-mma-ptx.mlir
// has an MMA with a scale lowered for sm_100a.

// rule: MI8
// fix: s|target<"sm_110a">|target<"sm_100a">|
func.func @mi8_scale_on_sm_110a(%d: !llvm.ptr<6>, %a: i64, %b: i64, %idesc: i32, %acc: i1) attributes {copy.target = #copy.target<"sm_110a">} {
  %scale = llvm.mlir.constant(1 : i64) : i64
  // expected-error@+2 {{'nvvm.tcgen05.mma' op with a scale needs a target with tcgen05.mma scale-input-d (sm_100a, sm_100f, sm_103a), but the target is sm_110a}}
  // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, or drop `scale = ...` (D then accumulates unscaled: sm_110a's tcgen05.mma has no scale-input-d)}}
  nvvm.tcgen05.mma %d, %a, %b, %idesc, %acc scale = %scale {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, i64)
  func.return
}

// -----

// rule: MI8
// fix: s| scale = %scale||
// fix: s|, i64)|)|
func.func @mi8_scale_on_sm_110f(%d: !llvm.ptr<6>, %a: i64, %b: i64, %idesc: i32, %acc: i1) attributes {copy.target = #copy.target<"sm_110f">} {
  %scale = llvm.mlir.constant(2 : i64) : i64
  // expected-error@+2 {{'nvvm.tcgen05.mma' op with a scale needs a target with tcgen05.mma scale-input-d (sm_100a, sm_100f, sm_103a), but the target is sm_110f}}
  // expected-note@+1 {{or drop `scale = ...`}}
  nvvm.tcgen05.mma %d, %a, %b, %idesc, %acc scale = %scale {kind = #nvvm.tcgen05_mma_kind<tf32>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, i64)
  func.return
}

// -----

// A sparse MMA whose instruction descriptor is dense, and a dense MMA under a sparse one
// (rule MI9, a kernel rule: the hardware reads the descriptor's sparse bit, not the name).

// rule: MI9
// fix: s|d f32 : i32|d f32 sparse selector 0 : i32|
func.func @mi9_dense_descriptor_under_mma_sp(%d: !llvm.ptr<6>, %a: i64, %b: i64, %meta: !llvm.ptr<6>, %acc: i1) attributes {copy.target = #copy.target<"sm_100a">} {
  %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 : i32
  // expected-error@+2 {{nvvm.tcgen05.mma.sp multiplies a structured-sparse A, but its instruction descriptor is dense: the MMA would read A as dense}}
  // expected-note@+1 {{add sparse (and the selector of the metadata column) to the copy.mma_instruction_descriptor}}
  nvvm.tcgen05.mma.sp %d, %a, %b, %idesc, %acc, %meta {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
  func.return
}

// -----

// rule: MI9
// fix: s| sparse selector 1||
func.func @mi9_sparse_descriptor_under_mma(%d: !llvm.ptr<6>, %a: i64, %b: i64, %acc: i1) attributes {copy.target = #copy.target<"sm_100a">} {
  %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 sparse selector 1 : i32
  // expected-error@+2 {{nvvm.tcgen05.mma multiplies a dense A, but its instruction descriptor is sparse: the MMA would read A as sparse, with no metadata}}
  // expected-note@+1 {{drop sparse (and the selector) from the copy.mma_instruction_descriptor}}
  nvvm.tcgen05.mma %d, %a, %b, %idesc, %acc {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
  func.return
}
