// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// copy.mma_instruction_descriptor of each kind, with the optional properties, in its custom
// syntax, printed back after a trip through the generic form (CHECK), and the generic form
// itself (CHECK-GENERIC). lit_tests/passes/tcgen05-mma-ptx.mlir checks a descriptor's value,
// tests/dialect/test_instruction_descriptor.py its bits.

// CHECK-LABEL: func.func @descriptors
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "descriptors"
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @descriptors() {
    // CHECK: %{{.*}} = copy.mma_instruction_descriptor kind f16 m 128 n 256 a bf16 b bf16 d f32 : i32
    // CHECK-GENERIC: "copy.mma_instruction_descriptor"() <{kind = #copy<mma_kind f16>, m = 128 : i32, n = 256 : i32, a = bf16, b = bf16, d = f32}> : () -> i32
    %0 = copy.mma_instruction_descriptor kind f16 m 128 n 256 a bf16 b bf16 d f32 : i32
    // CHECK-NEXT: copy.mma_instruction_descriptor kind tf32 m 64 n 8 a tf32 b f32 d f32 b_major mn negate_a negate_b : i32
    // CHECK-GENERIC-NEXT: b_major = #copy<matrix_major mn>, negate_a, negate_b}>
    %1 = copy.mma_instruction_descriptor kind tf32 m 64 n 8 a tf32 b f32 d f32 b_major mn negate_a negate_b : i32
    // CHECK-NEXT: copy.mma_instruction_descriptor kind f8f6f4 m 256 n 16 a f8E4M3FN b f6E2M3FN d f16 cta_group 2 a_major mn : i32
    // CHECK-GENERIC-NEXT: cta_group = 2 : i32, a_major = #copy<matrix_major mn>}>
    %2 = copy.mma_instruction_descriptor kind f8f6f4 m 256 n 16 a f8E4M3FN b f6E2M3FN d f16 cta_group 2 a_major mn : i32
    // CHECK-NEXT: copy.mma_instruction_descriptor kind i8 m 64 n 8 a ui8 b si8 d i32 saturate sparse : i32
    // CHECK-GENERIC-NEXT: saturate, sparse}>
    %3 = copy.mma_instruction_descriptor kind i8 m 64 n 8 a ui8 b si8 d i32 saturate sparse : i32
    func.return
  }
}
