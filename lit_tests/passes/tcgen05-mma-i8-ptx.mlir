// RUN: copy-opt %s -t ptx | filecheck %s

// A kind::i8 tcgen05.mma (sm_100a and sm_110a only: ptxas rejects .kind::i8 for sm_100f,
// sm_103a and sm_110f, rule MI7) through the whole pipeline to PTX: unsigned A times signed B, both K-major under
// the 128B swizzle, into a saturating s32 accumulator of 128 x 32 in TMEM, committed to an
// mbarrier that every thread waits on before tcgen05.ld of D (the layout of
// tcgen05-mma-ptx.mlir's kernels). tests/passes/test_tensor_core_assemble.py assembles it
// with nvJitLink and ptxas for sm_100a and sm_110a.

// CHECK: .target sm_100a
// CHECK: .entry mma_i8(
// The instruction descriptor: saturate (1 << 3), D s32 (2 << 4), A unsigned (0 << 7), B
// signed (1 << 10), N 32 (4 << 17), M 128 (8 << 24).
// CHECK: mov.b32 [[IDESC:%r[0-9]+]], 134743080;
// CHECK: tcgen05.mma.cta_group::1.kind::i8.collector::a::discard [%r{{[0-9]+}}], %rd{{[0-9]+}}, %rd{{[0-9]+}}, [[IDESC]], %p{{[0-9]+}};
// CHECK: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// CHECK: tcgen05.ld.sync.aligned.32x32b.x8.b32
// CHECK-NOT: .extern .func
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @mma_i8(%out: memref<128x8xi32>, %slot: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %ticks = arith.constant 1000000 : i32
    %acc = copy.tmem_alloc : memref<128x32xi32, #copy.tmem>
    %a = copy.alloc_smem : memref<2x128x128xui8, #copy.smem<swizzle = 128>>
    %b = copy.alloc_smem : memref<2x32x128xsi8, #copy.smem<swizzle = 128>>
    %word = copy.alloc_smem : memref<1xi64, #copy.smem>
    %bar = builtin.unrealized_conversion_cast %word : memref<1xi64, #copy.smem> to !llvm.ptr<3>
    %d = builtin.unrealized_conversion_cast %acc : memref<128x32xi32, #copy.tmem> to !llvm.ptr<6>
    %da = copy.matrix_descriptor %a[%slot] major k tcgen05 : memref<2x128x128xui8, #copy.smem<swizzle = 128>> -> i64
    %db = copy.matrix_descriptor %b[%slot] major k tcgen05 : memref<2x32x128xsi8, #copy.smem<swizzle = 128>> -> i64
    %idesc = copy.mma_instruction_descriptor kind i8 m 128 n 32 a ui8 b si8 d i32 saturate : i32
    %leader = arith.cmpi eq, %tid, %c0 : index
    scf.if %leader {
      nvvm.mbarrier.init.shared %bar, %c1_i32 : !llvm.ptr<3>, i32
      nvvm.fence.mbarrier.init
    }
    gpu.barrier
    scf.if %leader {
      %false = arith.constant false
      nvvm.tcgen05.mma %d, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<i8>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
      nvvm.tcgen05.commit %bar : !llvm.ptr<3>
    }
    nvvm.mbarrier.try_wait.parity.shared %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32
    llvm.inline_asm has_side_effects "tcgen05.fence::after_thread_sync;", "" : () -> ()
    %v = copy.tmem_load %acc[%c0] shape shape_32x32b num 8 : memref<128x32xi32, #copy.tmem> -> vector<8xi32>
    copy.tmem_wait load
    vector.store %v, %out[%tid, %c0] : memref<128x8xi32>, vector<8xi32>
    copy.tmem_dealloc %acc : memref<128x32xi32, #copy.tmem>
    func.return
  }
}
