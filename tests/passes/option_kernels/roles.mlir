// The roles kernel of tests/passes/test_option_effects.py (its options' default forms).
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k() attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>} {
    copy.warp_specialize warps [4, 4] {
    ^bb0(%t: index):
      copy.fence_async_shared
    }, {
    ^bb0(%t: index):
      copy.fence_async_shared
    }
    func.return
  }
}
