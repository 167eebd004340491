// The tmem_moves kernel of tests/passes/test_option_effects.py (its options' default forms):
// TMEM's CTA group, the permit, a scale-factor copy, a slice and a shift.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%col: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %acc = copy.tmem_alloc : memref<128x128xf8E8M0FNU, #copy.tmem>
    copy.tmem_relinquish
    %tile = copy.alloc_smem : memref<32x16xf8E8M0FNU, #copy.smem>
    copy.smem_to_tmem %tile to %acc[%c0] shape shape_32x128b multicast warpx4 : memref<32x16xf8E8M0FNU, #copy.smem>, memref<128x128xf8E8M0FNU, #copy.tmem>
    %h = copy.tmem_slice %acc[0] : memref<128x128xf8E8M0FNU, #copy.tmem> -> memref<128x64xf8E8M0FNU, #copy.tmem>
    copy.tmem_shift %h[%col] : memref<128x64xf8E8M0FNU, #copy.tmem>
    copy.tmem_dealloc %acc : memref<128x128xf8E8M0FNU, #copy.tmem>
    func.return
  }
}
