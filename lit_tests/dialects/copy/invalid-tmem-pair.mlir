// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid use of a TMEM CTA group (`cta_group 2`: tcgen05's `.cta_group::2`) or of the
// allocation permit (`copy.tmem_relinquish`) per chunk, named after the rule it breaks.
// tcgen05 exists on sm_100a/f and sm_103a only: this code is assembled in the tests, never
// run (the project's GPU is an H200).

// rule: J26
// fix: s|cta_group 3|cta_group 2|
func.func @j26_cta_group_3() attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  // expected-error@+2 {{cta_group is 1 (the CTA's TMEM) or 2 (a CTA pair's), got 3}}
  // expected-note@+1 {{use cta_group 2 for a CTA pair}}
  %t = copy.tmem_alloc cta_group 3 : memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J26
// fix: s|copy.target = #copy.target<"sm_100a">}|copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>}|
func.func @j26_pair_without_cluster() attributes {copy.target = #copy.target<"sm_100a">} {
  // expected-error@+2 {{cta_group 2 acts on a CTA pair (the CTAs whose cluster rank differs in bit 0), but the kernel has no cluster}}
  // expected-note@+1 {{give the kernel a cluster whose first dim of more than one CTA is even: copy.cluster = array<i32: 2, 1, 1>}}
  copy.tmem_relinquish cta_group 2
  func.return
}

// -----

// rule: J26
// fix: s|array<i32: 3, 2, 1>|array<i32: 4, 2, 1>|
func.func @j26_pair_straddles_rows() attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 3, 2, 1>} {
  // expected-error@+2 {{but its first cluster dim of more than one CTA, x, has 3 CTAs}}
  // expected-note@+1 {{copy.cluster = array<i32: 4, 2, 1>}}
  %t = copy.tmem_alloc cta_group 2 : memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J27
// fix: s|copy.tmem_dealloc %t :|copy.tmem_dealloc %t cta_group 2 :|
func.func @j27_dealloc_other_group() attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 1, 2, 1>} {
  %t = copy.tmem_alloc cta_group 2 : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{copy.tmem_dealloc of cta_group 1 frees an allocation of cta_group 2}}
  // expected-note@+1 {{free TMEM with the CTA group that allocated it: cta_group 2}}
  copy.tmem_dealloc %t : memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J28
// fix: s|copy.tmem_relinquish cta_group 2|copy.tmem_relinquish|
func.func @j28_two_cta_groups() attributes {copy.target = #copy.target<"sm_100a">, copy.cluster = array<i32: 2, 1, 1>} {
  %t = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  // expected-error@+2 {{copy.tmem_relinquish has cta_group 2, but the kernel's first tcgen05 op (copy.tmem_alloc) has cta_group 1}}
  // expected-note@+1 {{drop cta_group, or change the kernel's other tcgen05 ops to cta_group 2}}
  copy.tmem_relinquish cta_group 2
  copy.tmem_dealloc %t : memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J29
// fix: s|  copy.tmem_relinquish||
func.func @j29_alloc_after_relinquish() attributes {copy.target = #copy.target<"sm_100a">} {
  %a = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  copy.tmem_relinquish
  // expected-error@+2 {{copy.tmem_alloc after copy.tmem_relinquish (before it)}}
  // expected-note@+1 {{move copy.tmem_relinquish after the kernel's last copy.tmem_alloc}}
  %b = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
  copy.tmem_dealloc %a : memref<128x64xf32, #copy.tmem>
  copy.tmem_dealloc %b : memref<128x64xf32, #copy.tmem>
  func.return
}

// -----

// rule: J29
// fix: s|    copy.tmem_relinquish||
func.func @j29_alloc_in_loop_with_relinquish(%n: index) attributes {copy.target = #copy.target<"sm_100a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error@+2 {{copy.tmem_alloc after copy.tmem_relinquish (in a loop around it)}}
    // expected-note@+1 {{(out of the loop), or drop it}}
    %a = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
    copy.tmem_relinquish
    copy.tmem_dealloc %a : memref<128x64xf32, #copy.tmem>
  }
  func.return
}
