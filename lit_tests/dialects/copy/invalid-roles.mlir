// RUN: copy-opt %s --split-input-file --verify-diagnostics

// One invalid op per chunk of the issue model (copy.warp_specialize, named barriers, the
// barrier ops' issuer and suspend hint), named after the rule it breaks (`// rule:` gives the
// id in copy_dialect/rules.toml). The checks: copy_dialect/roles.py, copy_dialect/barriers.py.
// `// fix: s|OLD|NEW|` lines give the edit the note describes; tests/tools/test_fix_notes.py
// applies them and checks that the result verifies.

// rule: W1
// fix: s|array<i32: 128, 1, 1>|array<i32: 160, 1, 1>|
func.func @w1_roles_do_not_cover_the_block() attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
  // expected-error@+2 {{the roles cover 5 warps (160 threads), but the kernel's block has 128 threads}}
  // expected-note@+1 {{set gpu.known_block_size = array<i32: 160, 1, 1>}}
  copy.warp_specialize warps [1, 4] {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }
  func.return
}

// -----

// rule: W1
// fix: s|attributes {gpu.kernel}|attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>}|
func.func @w1_no_block_size() attributes {gpu.kernel} {
  // expected-error@+2 {{but the kernel's block has no 1-D gpu.known_block_size}}
  // expected-note@+1 {{set gpu.known_block_size = array<i32: 64, 1, 1>}}
  copy.warp_specialize warps [1, 1] {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }
  func.return
}

// -----

// rule: W2
// fix: s|warps [1, 0]|warps [1, 1]|
func.func @w2_role_without_warps() attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
  // expected-error@+2 {{expected one region per role and at least one warp per role, got 2 regions for warps [1, 0]}}
  // expected-note@+1 {{give warps one positive count per region}}
  copy.warp_specialize warps [1, 0] {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }
  func.return
}

// -----

// rule: W2
// fix: s|^bb0(%t: i32):|^bb0(%t: index):|
func.func @w2_role_argument_not_index() attributes {gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>} {
  // expected-error@+2 {{role 0's region must take one index argument}}
  // expected-note@+1 {{begin the region with ^bb0(%t: index):}}
  copy.warp_specialize warps [1] {
  ^bb0(%t: i32):
  }
  func.return
}

// -----

// rule: W3
// fix: s|scf.if %c { copy.warp_specialize warps [1] { ^bb0(%t: index): } }|copy.warp_specialize warps [1] { ^bb0(%t: index): }|
func.func @w3_roles_inside_a_branch(%c: i1) attributes {gpu.kernel, gpu.known_block_size = array<i32: 32, 1, 1>} {
  // expected-error@+2 {{copy.warp_specialize must be at the top level of a kernel's body}}
  // expected-note@+1 {{move it out of loops, branches (scf.for, scf.if) and other roles}}
  scf.if %c { copy.warp_specialize warps [1] { ^bb0(%t: index): } }
  func.return
}

// -----

// rule: W4
// fix: s| maxnreg [40, 232]||
func.func @w4_setmaxnreg_on_sm90() attributes {gpu.kernel, gpu.known_block_size = array<i32: 384, 1, 1>, copy.target = #copy.target<"sm_90">} {
  // expected-error@+2 {{'copy.warp_specialize' op with maxnreg needs a target with setmaxnreg (sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120a), but the target is sm_90}}
  // expected-note@+1 {{drop maxnreg, or set copy.target to one of sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120a}}
  copy.warp_specialize warps [4, 8] maxnreg [40, 232] {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }
  func.return
}

// -----

// rule: W5
// fix: s|maxnreg [40, 230]|maxnreg [40, 224]|
func.func @w5_maxnreg_not_a_multiple_of_8() attributes {gpu.kernel, gpu.known_block_size = array<i32: 384, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{maxnreg of role 1 must be a multiple of 8 in [24, 256], got 230}}
  // expected-note@+1 {{round it to 224}}
  copy.warp_specialize warps [4, 8] maxnreg [40, 230] {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }
  func.return
}

// -----

// rule: W5
// fix: s| maxnreg [40]||
func.func @w5_maxnreg_for_one_of_two_roles() attributes {gpu.kernel, gpu.known_block_size = array<i32: 384, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{expected one maxnreg per role (2), got 1}}
  // expected-note@+1 {{give every role its register limit}}
  copy.warp_specialize warps [4, 8] maxnreg [40] {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }
  func.return
}

// -----

// rule: W6
// fix: s|array<i32: 288, 1, 1>|array<i32: 384, 1, 1>|
// fix: s|warps [1, 8]|warps [4, 8]|
func.func @w6_setmaxnreg_on_part_of_a_warpgroup() attributes {gpu.kernel, gpu.known_block_size = array<i32: 288, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{role 0 (warps 0..0) sets maxnreg but is not whole warpgroups}}
  // expected-note@+1 {{give each role with maxnreg a multiple of 4 warps}}
  copy.warp_specialize warps [1, 8] maxnreg [40, 232] {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }
  func.return
}

// -----

// rule: W7
// fix: s|maxnreg [232, 232]|maxnreg [168, 168]|
func.func @w7_registers_beyond_the_sm() attributes {gpu.kernel, gpu.known_block_size = array<i32: 384, 1, 1>, copy.target = #copy.target<"sm_90a">} {
  // expected-error@+2 {{the roles' register limits need 89088 registers, more than the 65536 of an SM}}
  // expected-note@+1 {{lower maxnreg so that sum(maxnreg x threads) <= 65536}}
  copy.warp_specialize warps [4, 8] maxnreg [232, 232] {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }
  func.return
}

// -----

// rule: W8
// fix: s|%bar = copy.barrier_init arrivals 1 : !copy.barrier<1>||
func.func @w8_barrier_init_inside_a_role() attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
  copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      // expected-error@+2 {{barrier_init synchronizes the whole block, but it is inside role 0 of copy.warp_specialize}}
      // expected-note@+1 {{move copy.barrier_init before copy.warp_specialize}}
      %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  }, {
  ^bb0(%t: index):
  }
  func.return
}

// -----

// rule: W8
// fix: s|"gpu.barrier"() : () -> ()||
func.func @w8_block_barrier_inside_a_role() attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
  // expected-error@+2 {{gpu.barrier (bar.sync 0) synchronizes the whole block, but it is inside role 1}}
  // expected-note@+1 {{move gpu.barrier before copy.warp_specialize}}
  copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
  }, {
    ^bb0(%t: index):
      "gpu.barrier"() : () -> ()
  }
  func.return
}

// -----

// rule: W8
// fix: s|copy.named_barrier_sync 0, 64|copy.named_barrier_sync 3, 64|
func.func @w8_named_barrier_zero_inside_a_role() attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
  copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      // expected-error@+2 {{named barrier 0 is the block's barrier (__syncthreads), but this is inside a role}}
      // expected-note@+1 {{use id 3}}
      copy.named_barrier_sync 0, 64
  }, {
    ^bb0(%t: index):
      copy.named_barrier_sync 3, 64
  }
  func.return
}

// -----

// rule: W9
// fix: none -- merging roles means merging their regions' code, which no one-line edit shows
func.func @w9_too_many_roles() attributes {gpu.kernel, gpu.known_block_size = array<i32: 512, 1, 1>} {
  // expected-error@+2 {{at most 15 roles fit the named barriers, got 16}}
  // expected-note@+1 {{merge roles}}
  copy.warp_specialize warps [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1] {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }, {
  ^bb0(%t: index):
  }
  func.return
}

// -----

// rule: W10
// fix: s|copy.named_barrier_sync 16, 64|copy.named_barrier_sync 15, 64|
func.func @w10_named_barrier_id_out_of_range() attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
  // expected-error@+2 {{named barrier id must be in [0, 16), got 16}}
  // expected-note@+1 {{use an id in 0..15}}
  copy.named_barrier_sync 16, 64
  func.return
}

// -----

// rule: W11
// fix: s|copy.named_barrier_arrive 2, 64|copy.named_barrier_arrive 3, 64|
func.func @w11_named_barrier_of_a_role() attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
  copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      // expected-error@+2 {{named barrier 2 is the barrier of role 1 of the kernel's copy.warp_specialize (ids 1..2 are the roles')}}
      // expected-note@+1 {{use an id in 3..15}}
      copy.named_barrier_arrive 2, 64
  }, {
    ^bb0(%t: index):
      copy.named_barrier_sync 3, 64
  }
  func.return
}

// -----

// rule: W12
// fix: s|copy.named_barrier_sync 1, 48|copy.named_barrier_sync 1, 64|
func.func @w12_named_barrier_part_of_a_warp() attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
  // expected-error@+2 {{a named barrier counts whole warps: threads must be a positive multiple of 32, got 48}}
  // expected-note@+1 {{use 64}}
  copy.named_barrier_sync 1, 48
  func.return
}

// -----

// rule: W12
// fix: s|copy.named_barrier_sync 1, 128|copy.named_barrier_sync 1, 64|
func.func @w12_named_barrier_beyond_the_block() attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
  // expected-error@+2 {{named barrier 1 waits for 128 threads, but the block has 64}}
  // expected-note@+1 {{count at most the block's 64 threads}}
  copy.named_barrier_sync 1, 128
  func.return
}

// -----

// rule: W13
// fix: s| suspend_hint 1000||
func.func @w13_suspend_hint_before_sm90() attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.barrier_arrive %bar[%c0] : !copy.barrier<1>
  // expected-error@+2 {{'copy.barrier_wait' op with suspend_hint needs a target with mbarrier.try_wait (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80}}
  // expected-note@+1 {{drop suspend_hint}}
  copy.barrier_wait %bar[%c0], %false suspend_hint 1000 : !copy.barrier<1>
  func.return
}

// -----

// rule: W13
// fix: s| suspend_hint -1||
func.func @w13_negative_suspend_hint() attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.barrier_arrive %bar[%c0] : !copy.barrier<1>
  // expected-error@+2 {{suspend_hint is a time in nanoseconds: expected 0 or more, got -1}}
  // expected-note@+1 {{drop suspend_hint}}
  copy.barrier_wait %bar[%c0], %false suspend_hint -1 : !copy.barrier<1>
  func.return
}
