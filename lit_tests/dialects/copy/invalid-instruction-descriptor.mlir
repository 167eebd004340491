// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid copy.mma_instruction_descriptor per chunk, named after the rule it breaks
// (`// rule:` gives the id in copy_dialect/rules.toml), with the fix its note gives.

// rule: MI1
// fix: s|kind f16|kind f8f6f4|
func.func @mi1_fp8_under_kind_f16() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{'copy.mma_instruction_descriptor' op kind f16 multiplies f16, bf16 operands, got a f8E4M3FN}}
  // expected-note@+1 {{use kind f8f6f4 for f8E4M3FN operands (D f32)}}
  %i = copy.mma_instruction_descriptor kind f16 m 128 n 128 a f8E4M3FN b f8E4M3FN d f32 : i32
  func.return
}

// -----

// rule: MI1
// fix: s|b bf16|b f16|
func.func @mi1_mixed_f16_bf16() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{kind f16 multiplies two f16 or two bf16 operands, got a f16 and b bf16}}
  // expected-note@+1 {{make b f16}}
  %i = copy.mma_instruction_descriptor kind f16 m 128 n 128 a f16 b bf16 d f32 : i32
  func.return
}

// -----

// rule: MI1
// fix: s|a f64 b f64|a tf32 b tf32|
func.func @mi1_f64() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{kind tf32 multiplies tf32, f32 operands, got a f64}}
  // expected-note@+1 {{give a one of tf32, f32}}
  %i = copy.mma_instruction_descriptor kind tf32 m 128 n 128 a f64 b f64 d f32 : i32
  func.return
}

// -----

// rule: MI2
// fix: s|d f16 :|d f32 :|
func.func @mi2_bf16_into_f16() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{kind f16 with a bf16 and b bf16 accumulates in f32, got d f16}}
  // expected-note@+1 {{use d f32}}
  %i = copy.mma_instruction_descriptor kind f16 m 128 n 128 a bf16 b bf16 d f16 : i32
  func.return
}

// -----

// rule: MI2
// fix: s|d f32|d i32|
func.func @mi2_i8_into_f32() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{kind i8 with a si8 and b si8 accumulates in i32 or si32, got d f32}}
  // expected-note@+1 {{use d i32}}
  %i = copy.mma_instruction_descriptor kind i8 m 128 n 128 a si8 b si8 d f32 : i32
  func.return
}

// -----

// rule: MI3
// fix: s|m 256|m 128|
func.func @mi3_m256_on_one_cta() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{an MMA of cta_group 1 has M 64 or 128, got m 256}}
  // expected-note@+1 {{use m 128, or cta_group 2 for M 256 over a CTA pair}}
  %i = copy.mma_instruction_descriptor kind f16 m 256 n 128 a f16 b f16 d f32 : i32
  func.return
}

// -----

// rule: MI3
// fix: s|m 64|m 128|
func.func @mi3_m64_on_a_pair() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{an MMA of cta_group 2 has M 128 or 256, got m 64}}
  // expected-note@+1 {{use m 128}}
  %i = copy.mma_instruction_descriptor kind f16 m 64 n 128 a f16 b f16 d f32 cta_group 2 : i32
  func.return
}

// -----

// rule: MI3
// fix: s|cta_group 4|cta_group 2|
func.func @mi3_cta_group_4() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{cta_group is 1 (one CTA) or 2 (a CTA pair), got 4}}
  // expected-note@+1 {{use cta_group 2 for an MMA of a CTA pair, or leave it out}}
  %i = copy.mma_instruction_descriptor kind f16 m 128 n 128 a f16 b f16 d f32 cta_group 4 : i32
  func.return
}

// -----

// rule: MI4
// fix: s|n 72|n 80|
func.func @mi4_n72_at_m128() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{kind f16 at m 128, cta_group 1 takes N from 16 to 256 in steps of 16, got n 72}}
  // expected-note@+1 {{use n 80}}
  %i = copy.mma_instruction_descriptor kind f16 m 128 n 72 a f16 b f16 d f32 : i32
  func.return
}

// -----

// rule: MI4
// fix: s|n 48|n 64|
func.func @mi4_i8_pair_n48() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{kind i8 at m 256, cta_group 2 takes N from 32 to 256 in steps of 32, got n 48}}
  // expected-note@+1 {{use n 64}}
  %i = copy.mma_instruction_descriptor kind i8 m 256 n 48 a si8 b ui8 d i32 cta_group 2 : i32
  func.return
}

// -----

// rule: MI4
// fix: s|n 512|n 256|
func.func @mi4_n512() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{kind tf32 at m 64, cta_group 1 takes N from 8 to 256 in steps of 8, got n 512}}
  // expected-note@+1 {{use n 256}}
  %i = copy.mma_instruction_descriptor kind tf32 m 64 n 512 a tf32 b tf32 d f32 : i32
  func.return
}

// -----

// rule: MI5
// fix: s| a_major mn||
func.func @mi5_transposed_fp4() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{f4E2M1FN operands are K-major only, got a_major mn}}
  // expected-note@+1 {{drop a_major mn}}
  %i = copy.mma_instruction_descriptor kind f8f6f4 m 128 n 128 a f4E2M1FN b f8E4M3FN d f32 a_major mn : i32
  func.return
}

// -----

// rule: MI6
// fix: s| negate_a||
func.func @mi6_negated_integers() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{kind i8 cannot negate its operands}}
  // expected-note@+1 {{drop negate_a and negate_b}}
  %i = copy.mma_instruction_descriptor kind i8 m 128 n 128 a si8 b si8 d i32 negate_a : i32
  func.return
}

// -----

// rule: MI6
// fix: s| saturate||
func.func @mi6_saturated_floats() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{saturate is for kind i8 (s32 accumulation), got kind f16}}
  // expected-note@+1 {{drop saturate}}
  %i = copy.mma_instruction_descriptor kind f16 m 128 n 128 a f16 b f16 d f32 saturate : i32
  func.return
}

// -----

// rule: MI7
// fix: s|sm_90a|sm_100a|
func.func @mi7_hopper() attributes {copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{'copy.mma_instruction_descriptor' op needs a target with tcgen05 (TMEM) (sm_100a, sm_100f, sm_103a, sm_110a, sm_110f), but the target is sm_90a}}
  // expected-note@+1 {{set copy.target to one of sm_100a, sm_100f, sm_103a, sm_110a, sm_110f}}
  %i = copy.mma_instruction_descriptor kind f16 m 128 n 128 a f16 b f16 d f32 : i32
  func.return
}

// -----

// rule: MI7
// fix: s|sm_103a|sm_100a|
func.func @mi7_i8_on_sm103a() attributes {copy.target = #copy.target<"sm_103a">} {
  // expected-error@+2 {{'copy.mma_instruction_descriptor' op with kind i8 needs a target with .kind::i8 MMA (sm_100a, sm_110a), but the target is sm_103a}}
  // expected-note@+1 {{set copy.target to one of sm_100a, sm_110a, or convert the operands to f8E4M3FN and use kind f8f6f4}}
  %i = copy.mma_instruction_descriptor kind i8 m 128 n 128 a si8 b si8 d i32 : i32
  func.return
}

// -----

// rule: MI9
// fix: s|d f32 selector 1|d f32 sparse selector 1|
func.func @mi9_selector_without_sparse() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{the sparsity selector is a sparse MMA's (tcgen05.mma.sp), got selector 1 without sparse}}
  // expected-note@+1 {{add sparse (and issue the MMA as nvvm.tcgen05.mma.sp with its metadata), or drop the selector}}
  %i = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 selector 1 : i32
  func.return
}

// -----

// rule: MI9
// fix: s|selector 4|selector 0|
func.func @mi9_selector_beyond_two_bits() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{the sparsity selector is a 2-bit field (0 to 3), got selector 4}}
  // expected-note@+1 {{use selector 0 or 1}}
  %i = copy.mma_instruction_descriptor kind f16 m 128 n 64 a f16 b f16 d f32 sparse selector 4 : i32
  func.return
}
